/**
 * The web view over real HTTP (platform-formats.md §10.7 and the status page, docs/operations.md):
 * every path with its status, type and body, HEAD, 405, the 404 page, the security headers, the
 * masked YAML download, 429 after 300 requests a minute from one client IP (several 127.0.0.x
 * source addresses show it is per IP; the limiter's clock is fixed so the test cannot straddle a
 * minute boundary), a listen failure naming the key and port, and a missing asset stopping the start.
 * The server is started once for the suite (its config holds a marker in every secret-like key).
 */

import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { PollHistory } from '../../../../edge-agent/endpoints/web/poll-history.js';
import { CONTENT_SECURITY_POLICY, WebView } from '../../../../edge-agent/endpoints/web/server.js';
import { StatusModel } from '../../../../edge-agent/endpoints/web/status.js';
import { MASK, maskConfig } from '../../../../shared/config/mask.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import { isRecord } from '../../../../shared/util/records.js';
import { REPO_ROOT } from '../../../support/build.js';
import { fetchFrom } from '../../../support/http-from.js';
import { recordingLog } from '../../../support/log.js';
import { freePort, LOOPBACK } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';
import { SECRET_MARKERS, secretConfigLines, secretUserEventLines } from './fixtures.js';

const NOW = Date.UTC(2026, 0, 5, 12, 0, 30);
let clockMs = NOW;
let view: WebView;
let history: PollHistory;
let base: string;
let errors: ErrorTracker;
const logged = recordingLog();

beforeAll(async () => {
  const [port, closed] = [await freePort(), await freePort()];
  const config = svcConfig([
    `  configVisualisation: {enable: true, host: ${LOOPBACK}, port: ${port}}`,
    ...secretConfigLines(closed),
    ...secretUserEventLines(closed),
    '  errorTracking: {enable: true}',
    '  serversToMonitor: {servers: [{host: "node1.example.com:4747", serverName: node1, serverDescription: \'<b>central</b> & "main"\', headers: {X-Api-Auth: MARKER-SERVER-HEADER}}, {host: "node2.example.com:4747", serverName: node2}]}',
  ]);
  errors = new ErrorTracker({ enabled: true, log: logged.log });
  history = new PollHistory();
  const status = new StatusModel({ config, mode: 'edge', observed: new Observed(), history, errors });
  // As compose.ts builds it, with the rate limit's clock fixed (moved by the 429 test).
  view = new WebView({
    host: LOOPBACK,
    port,
    masked: maskConfig(config, { obfuscate: true }),
    obfuscate: true,
    configFile: '/etc/svc/production.yaml',
    installDir: REPO_ROOT,
    status,
    log: logged.log,
    now: () => clockMs,
  });
  await view.start();
  base = `http://${LOOPBACK}:${view.port}`;
});
afterAll(async () => {
  await view?.stop();
});

const SECURITY = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

describe('web view: the config page and its files', () => {
  it('GET / is the config page: the masked config as a JSON tree and as YAML, a Download YAML link, no secret', async () => {
    const answer = await fetchFrom(`${base}/`, { from: '127.0.0.10' });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      ...SECURITY,
    });
    expect(answer.body).toContain(
      '<a class="button" id="download" href="/config.yaml" download="svc-config.yaml">Download YAML</a>',
    );
    expect(answer.body).toContain('<ul class="tree" id="tree"><li><details open><summary><span class="key">Svc</span>');
    expect(answer.body).toContain('<pre id="yaml">Svc:\n');
    expect(answer.body).toContain('from <code>production.yaml</code>');
    expect(answer.body).not.toContain('/etc/svc');
    // Masked: the username partly, the password fully, a header value fully with its name shown.
    expect(answer.body).toContain(
      `<span class="key">username</span>: <span class="v-string">&quot;dbw${MASK}&quot;</span>`,
    );
    expect(answer.body).toContain(
      `<span class="key">X-Api-Auth</span>: <span class="v-string">&quot;${MASK}&quot;</span>`,
    );
    for (const marker of [...SECRET_MARKERS, 'MARKER-SERVER-HEADER']) expect(answer.body, marker).not.toContain(marker);
    // Escaped: the description with markup in it is text.
    expect(answer.body).toContain('&lt;b&gt;central&lt;/b&gt; &amp; &quot;main&quot;');
    expect(answer.body).not.toContain('<b>central</b>');
    // No inline script or style; every file it loads is its own (a path from /).
    expect(answer.body).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/);
    expect([...answer.body.matchAll(/(?:src|href)="([^"]*)"/g)].map((m) => m[1])).toEqual([
      '/logo.svg',
      '/style.css',
      '/config.js',
      '/logo.svg',
      '/',
      '/status',
      '/servers',
      '/logs',
      '/users',
      '/performance',
      '/audit',
      '/alerts',
      '/config.yaml',
    ]);
  });

  it('GET /config.yaml downloads the masked YAML, the same config with every secret masked', async () => {
    const answer = await fetchFrom(`${base}/config.yaml`, { from: '127.0.0.10' });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'content-type': 'application/yaml; charset=utf-8',
      'content-disposition': 'attachment; filename="svc-config.yaml"',
      'cache-control': 'no-store',
      ...SECURITY,
    });
    const parsed: unknown = parse(answer.body);
    if (!isRecord(parsed) || !isRecord(parsed['Svc'])) throw new Error('not a config');
    const svc = parsed['Svc'];
    expect(svc['configVisualisation']).toEqual({ enable: true, host: `127${MASK}`, port: view.port, obfuscate: true });
    // The effective config: defaults are filled in.
    expect(svc['logLevel']).toBe('info');
    for (const marker of [...SECRET_MARKERS, 'MARKER-SERVER-HEADER']) expect(answer.body, marker).not.toContain(marker);
  });

  it('serves its own files from / with their types', async () => {
    const files: Record<string, [string, string]> = {
      '/logo.svg': ['image/svg+xml', '<svg'],
      '/style.css': ['text/css; charset=utf-8', 'ul.tree'],
      '/config.js': ['text/javascript; charset=utf-8', 'expand-all'],
      '/status.js': ['text/javascript; charset=utf-8', '/status.json'],
      '/history.js': ['text/javascript; charset=utf-8', '/api/v1/'],
      '/servers.js': ['text/javascript; charset=utf-8', '/health'],
      '/logs.js': ['text/javascript; charset=utf-8', "'log-events'"],
      '/users.js': ['text/javascript; charset=utf-8', "'user-sessions'"],
      '/performance.js': ['text/javascript; charset=utf-8', "'performance/top'"],
      '/audit.js': ['text/javascript; charset=utf-8', "'audit-events'"],
      '/alerts.js': ['text/javascript; charset=utf-8', "'alerts/history'"],
      '/uPlot.iife.min.js': ['text/javascript; charset=utf-8', 'uPlot'],
      '/uPlot.min.css': ['text/css; charset=utf-8', '.uplot'],
    };
    for (const [path, [type, content]] of Object.entries(files)) {
      const answer = await fetchFrom(`${base}${path}`, { from: '127.0.0.11' });
      expect(answer.status, path).toBe(200);
      expect(answer.headers['content-type'], path).toBe(type);
      expect(answer.headers['x-content-type-options'], path).toBe('nosniff');
      expect(answer.body, path).toContain(content);
    }
  });

  it('answers HEAD with the headers only, other methods 405 with Allow, other paths the 404 page', async () => {
    const head = await fetchFrom(`${base}/`, { from: '127.0.0.12', method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(1000);
    expect(head.body).toBe('');
    for (const method of ['POST', 'PUT', 'DELETE']) {
      for (const path of ['/', '/status.json', '/config.yaml']) {
        const answer = await fetchFrom(`${base}${path}`, { from: '127.0.0.12', method });
        expect(answer.status, `${method} ${path}`).toBe(405);
        expect(answer.headers['allow']).toBe('GET, HEAD');
      }
    }
    for (const path of ['/nope', '/config.json', '/assets/style.css', '/status/', '/../etc/passwd', '/%3Cscript%3E']) {
      const answer = await fetchFrom(`${base}${path}`, { from: '127.0.0.12' });
      expect(answer.status, path).toBe(404);
      expect(answer.headers).toMatchObject({ 'content-type': 'text/html; charset=utf-8', ...SECURITY });
      expect(answer.body, path).toContain('<h1>Not found</h1>');
      expect(answer.body).not.toContain('<script>');
    }
  });
});

describe('web view: the history pages', () => {
  it('GET /servers, /logs, /users, /performance, /audit are page frames: the nav marks the page, the shared and the own script, no inline code', async () => {
    for (const [name, heading] of [
      ['servers', 'Servers'],
      ['logs', 'Log events'],
      ['users', 'Users'],
      ['performance', 'Performance'],
      ['audit', 'Audit'],
    ]) {
      const page = await fetchFrom(`${base}/${name}`, { from: '127.0.0.14' });
      expect(page.status, name).toBe(200);
      expect(page.headers).toMatchObject({
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
        ...SECURITY,
      });
      expect(page.body).toContain(`<h1>${heading}</h1>`);
      expect(page.body).toContain(`<a href="/${name}" aria-current="page">${heading}</a>`);
      expect(page.body).toContain('<a href="/status">Status</a>');
      const scripts = [...page.body.matchAll(/<script src="([^"]*)"/g)].map((m) => m[1]);
      expect(scripts).toEqual(['/uPlot.iife.min.js', '/history.js', `/${name}.js`]);
      expect(page.body).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/);
      for (const id of ['range', 'filters', 'shown', 'error', 'details']) expect(page.body).toContain(`id="${id}"`);
    }
  });
  it('GET /alerts is the Alerts page frame: marked in the nav, history.js and its own script, the silence form, no inline code', async () => {
    const page = await fetchFrom(`${base}/alerts`, { from: '127.0.0.14' });
    expect([page.status, page.headers['content-type'], page.headers['cache-control']]).toEqual([
      200,
      'text/html; charset=utf-8',
      'no-store',
    ]);
    expect(page.headers).toMatchObject(SECURITY);
    expect(page.body).toContain('<h1>Alerts</h1>');
    expect(page.body).toContain('<a href="/alerts" aria-current="page">Alerts</a>');
    expect([...page.body.matchAll(/<script src="([^"]*)"/g)].map((m) => m[1])).toEqual(['/history.js', '/alerts.js']);
    expect(page.body).not.toMatch(/<script>|<style|\sstyle="|\son[a-z]+="/);
    for (const id of [
      'disabled',
      'error',
      'active',
      'history',
      'range',
      'filters',
      'shown',
      'silences',
      'silence-form',
      'rules',
      'channels',
      'details',
    ])
      expect(page.body, id).toContain(`id="${id}"`);
    for (const field of ['rule', 'matchers', 'duration', 'endsAt', 'comment', 'createdBy'])
      expect(page.body, field).toContain(`name="${field}"`);
    // The status page links it too.
    expect((await fetchFrom(`${base}/status`, { from: '127.0.0.14' })).body).toContain(
      'the <a href="/alerts">Alerts</a> page',
    );
  });
});

describe('web view: the status page', () => {
  it('GET /status is the page frame; GET /status.json what it shows, from the in-memory state', async () => {
    const page = await fetchFrom(`${base}/status`, { from: '127.0.0.13' });
    expect(page.status).toBe(200);
    expect(page.headers).toMatchObject({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      ...SECURITY,
    });
    expect(page.body).toContain('<script src="/uPlot.iife.min.js" defer></script>');
    expect(page.body).toContain('<script src="/status.js" defer></script>');
    expect(page.body).toContain('<div id="servers" class="cards"></div>');

    const at = Date.now();
    history.health(
      {
        serverName: 'node1',
        tags: { host: 'h', server_name: 'node1', server_description: 'd' },
        uptime: '1 days, 0h 00m 00s',
        body: HEALTH,
      },
      at,
    );
    errors.track(
      'HEALTH_API',
      Object.assign(new Error('connect ECONNREFUSED https://user:SECRET-IN-URL@x'), { code: 'ECONNREFUSED' }),
      { serverName: 'node2', host: 'node2.example.com' },
    );
    const answer = await fetchFrom(`${base}/status.json`, { from: '127.0.0.13' });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...SECURITY,
    });
    const report: unknown = JSON.parse(answer.body);
    expect(report).toMatchObject({
      mode: 'edge',
      servers: [
        {
          name: 'node1',
          description: '<b>central</b> & "main"',
          state: 'ok',
          cpu: 12.5,
          memAllocatedMb: 4577.3,
          sessions: 3,
          users: 2,
          trend: { t: [at / 1000], cpu: [12.5], sessions: [3] },
        },
        { name: 'node2', state: 'waiting', lastPollAt: null, cpu: null },
      ],
      listeners: [],
      destinations: [],
      empty: {
        servers: null,
        listeners: 'no UDP listener: set Svc.userEvents.enable, or enable a source in Svc.logEvents.source',
        destinations: expect.stringContaining('no queued destination') as unknown,
        errors: null,
      },
      errors: {
        enabled: true,
        byType: [{ type: 'HEALTH_API', sinceStart: 1 }],
        recent: [{ type: 'HEALTH_API', category: 'connection_refused', serverName: 'node2', module: null }],
      },
    });
    // Never a host, a message or a secret.
    expect(answer.body).not.toContain('SECRET-IN-URL');
    expect(answer.body).not.toContain('node2.example.com');
    expect(answer.body).not.toContain('node1.example.com');
    for (const marker of [...SECRET_MARKERS, 'MARKER-SERVER-HEADER']) expect(answer.body, marker).not.toContain(marker);
  });
});

describe('web view: limits and failures', () => {
  it('answers 429 after 300 requests in a minute from one client IP, logged once at WARN; other IPs go on; the next minute is allowed again', async () => {
    const before = logged.lines.length;
    for (let i = 0; i < 300; i++) {
      const answer = await fetchFrom(`${base}/logo.svg`, { from: '127.0.0.2' });
      if (answer.status !== 200) expect.fail(`request ${i + 1} got ${answer.status}`);
    }
    const refused = await fetchFrom(`${base}/`, { from: '127.0.0.2' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBe(30);
    expect(refused.headers['x-content-type-options']).toBe('nosniff');
    expect(refused.body).toBe('too many requests: at most 300 a minute from one address\n');
    expect((await fetchFrom(`${base}/status.json`, { from: '127.0.0.2' })).status).toBe(429);
    // Another address is not counted with it.
    expect((await fetchFrom(`${base}/`, { from: '127.0.0.3' })).status).toBe(200);
    const warnings = logged.lines.slice(before).filter((l) => l.level === 'warn');
    expect(warnings.map((w) => w.msg)).toEqual([
      'config view: 127.0.0.2 made more than 300 requests this minute; answering 429 until the minute ends',
    ]);
    clockMs = NOW + 60_000;
    expect((await fetchFrom(`${base}/`, { from: '127.0.0.2' })).status).toBe(200);
  });

  it('a port that is taken stops the start, naming the key and the port', async () => {
    const blocker = net.createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => blocker.listen(port, LOOPBACK, resolve));
    try {
      const view = new WebView({
        host: LOOPBACK,
        port,
        masked: {},
        obfuscate: true,
        configFile: 'svc.yaml',
        installDir: REPO_ROOT,
        status: statusModel(),
        log: recordingLog().log,
      });
      await expect(view.start()).rejects.toThrow(
        `Svc.configVisualisation.host, .port: the config view cannot listen on ${LOOPBACK}:${port}: listen EADDRINUSE`,
      );
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('a missing file of its own stops the start, naming the file', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'svc-web-'));
    try {
      const view = new WebView({
        host: LOOPBACK,
        port: 0,
        masked: {},
        obfuscate: true,
        configFile: 'svc.yaml',
        installDir: empty,
        status: statusModel(),
        log: recordingLog().log,
      });
      await expect(view.start()).rejects.toThrow(
        `the config view cannot read its file ${join(empty, 'edge-agent/endpoints/web/assets/logo.svg')} (is Svc installed completely?)`,
      );
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

function statusModel(): StatusModel {
  return new StatusModel({
    config: svcConfig([]),
    mode: 'edge',
    observed: new Observed(),
    history: new PollHistory(),
    errors: new ErrorTracker({ enabled: false, log: recordingLog().log }),
  });
}

const HEALTH = {
  version: '14.1.0',
  started: '20240312T081512.000+0100',
  mem: { committed: 2048, allocated: 4577.3, free: 27890.4 },
  apps: { active_docs: [], in_memory_docs: [], loaded_docs: [], calls: 1, selections: 1 },
  cpu: { total: 12.5 },
  session: { active: 3, total: 12 },
  users: { active: 2, total: 9 },
  cache: { hits: 1, lookups: 2, added: 0, replaced: 0, bytes_added: 0 },
  saturated: false,
};

/**
 * The issue's end-to-end path, all real: the platform simulator (three servers over mutual TLS,
 * polled every second) and UDP log and engine-performance events from the simulator's generator →
 * `svc local` (the built CLI as a child process) with the embedded store at its path → the history
 * pages in headless Chromium, through the read API:
 * - the Servers page shows the simulator's three servers with their history;
 * - a log event sent over UDP is found on the Log events page by a word of its message;
 * - the Performance page's top apps are the apps the simulator sent, in the order of their total
 *   engine time computed here from the datagrams sent;
 * - after a restart of `svc local`, the data from before it is still shown.
 * Screenshots go to test-output/screenshots/history-e2e/.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { createDatagramGenerator } from '../../../../edge-agent/simulate/messages.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../../../edge-agent/simulate/platform/server.js';
import type { PerformanceTopAnswer, ServersAnswer } from '../../../../shared/store/api-types.js';
import {
  attributes,
  chromiumPath,
  launchChromium,
  NO_CHROMIUM,
  pngColours,
  screenshotDir,
} from '../../../support/chromium.js';
import { freePort, freeUdpPort, LOOPBACK } from '../../../support/ports.js';
import { type SvcProcess, startSvcRunning } from '../../../support/svc-process.js';
import { eventually, sendDatagrams } from '../../../support/udp.js';

const CHROMIUM = chromiumPath();
/** Field indexes of the generator's datagrams (platform-formats.md §2.2): an engine event's message; a performance event's app id and process time. */
const ENGINE_MESSAGE = 8;
const PERF_APP_ID = 13;
const PERF_PROCESS_TIME = 16;
const PERF_EVENTS = 150;
/** Between two polls of the read API: it has the web view's rate limit (300 requests a minute from one address), which the pages' own requests share. */
const API_POLL_MS = 500;

let dir: string;
let cwd: string;
let sim: PlatformSimulator;
let svc: SvcProcess;
let browser: Browser;
let base: string;
let logPort: number;
let shots: string;
/** A word only the marked log event's message has. */
const WORD = `zephyr${process.pid}${Date.now() % 100_000}`;
/** Engine time per app id of the performance events sent, in ms. */
const sentTotals = new Map<string, number>();

const startLocal = (): Promise<SvcProcess> => startSvcRunning(cwd, 'local');

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${base}/api/v1/${path}`);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

beforeAll(async () => {
  if (!CHROMIUM) return;
  dir = mkdtempSync(join(tmpdir(), 'svc-history-e2e-'));
  shots = screenshotDir('history-e2e');
  sim = await startPlatformSimulator({ servers: 3, seed: 5, certDir: join(dir, 'certs') });
  const webPort = await freePort();
  logPort = await freeUdpPort();
  base = `http://${LOOPBACK}:${webPort}`;
  cwd = join(dir, 'svc');
  mkdirSync(cwd);
  const config = {
    Svc: {
      uptimeMonitor: { enable: false },
      systemInfo: { enable: false },
      localQueue: { directory: 'queue' },
      store: { path: 'store/svc.db' },
      configVisualisation: { enable: true, host: LOOPBACK, port: webPort },
      logEvents: {
        udpServerConfig: { serverHost: LOOPBACK, portLogEvents: logPort },
        source: { engine: { enable: true }, apiPerf: { enable: true } },
        enginePerformanceMonitor: {
          enable: true,
          appNameLookup: { enable: true },
          monitorFilter: { allApps: { enable: true } },
        },
      },
      cert: sim.config.Svc.cert,
      serversToMonitor: { ...sim.config.Svc.serversToMonitor, pollingInterval: 1_000 },
      userSessions: { ...sim.config.Svc.userSessions, pollingInterval: 2_000 },
      appNames: sim.config.Svc.appNames,
    },
  };
  writeFileSync(join(cwd, 'svc.yaml'), stringify(config));
  svc = await startLocal();

  // The traffic: engine log events, one of them carrying WORD, and engine performance events.
  const startMs = Date.now();
  const logs = createDatagramGenerator({ seed: 3, kinds: ['engine'], pool: sim.pool, startMs });
  const engine = Array.from({ length: 40 }, (_, i) => {
    const fields = [...(logs.next().fields ?? [])];
    if (i === 17) fields[ENGINE_MESSAGE] = `Reload of the budget app stopped at ${WORD} while loading`;
    return Buffer.from(fields.join(';'));
  });
  const perf = createDatagramGenerator({ seed: 4, kinds: ['qix-perf'], pool: sim.pool, startMs });
  const perfData = Array.from({ length: PERF_EVENTS }, () => {
    const datagram = perf.next();
    const fields = datagram.fields ?? [];
    const app = fields[PERF_APP_ID] ?? '';
    sentTotals.set(app, (sentTotals.get(app) ?? 0) + Number(fields[PERF_PROCESS_TIME]));
    return datagram.data;
  });
  await sendDatagrams(logPort, [...engine, ...perfData]);
  browser = await launchChromium(CHROMIUM);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  if (svc) {
    svc.child.kill('SIGTERM');
    await svc.exited;
  }
  await sim?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A page at 1366×768 that fails the test on a console error (a CSP violation is one). */
async function open(path: string): Promise<{ page: Page; noErrors: () => void }> {
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(`${base}${path}`);
  await expect.poll(() => page.evaluate('Number(document.body.dataset.renders ?? 0)'), { timeout: 20_000 }).toBe(1);
  return { page, noErrors: () => expect(errors, 'errors in the page').toEqual([]) };
}

async function shot(page: Page, name: string): Promise<void> {
  const png = await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
  const colours = await pngColours(page, png);
  expect(colours.distinct, `${name}: distinct colours`).toBeGreaterThan(50);
}

/** The Log events page searched for WORD: the ids of the rows shown. */
async function rowsWithWord(name: string): Promise<string[]> {
  const { page, noErrors } = await open(`/logs?range=24h&q=${WORD}`);
  const rows = page.locator('#events tbody tr');
  const ids = (await attributes(rows, 'data-id')).map((id) => id ?? '');
  if (ids.length > 0) expect(await rows.first().textContent()).toContain(WORD);
  // One page of rows: no "Older" to click.
  expect(await page.locator('#events button.older').isVisible()).toBe(false);
  await shot(page, name);
  noErrors();
  await page.context().close();
  return ids;
}

describe.skipIf(!CHROMIUM)(`history pages end to end${CHROMIUM ? '' : ` (skipped: ${NO_CHROMIUM})`}`, () => {
  it('shows the servers the simulator runs, with their history', async () => {
    const names = sim.config.Svc.serversToMonitor.servers.map((s) => s.serverName).sort();
    await eventually(
      async () => {
        const answer = await api<ServersAnswer>('servers');
        return answer.servers.filter((s) => s.latest !== null).length === names.length;
      },
      30_000,
      'every simulated server polled into the store',
      API_POLL_MS,
    );
    const { page, noErrors } = await open('/servers?range=1h');
    const shown = (await attributes(page.locator('#latest tbody tr'), 'data-id')).map((id) => id ?? '');
    expect(shown.sort()).toEqual(names);
    expect(await page.locator('#charts .uplot canvas').count()).toBeGreaterThan(0);
    expect(await page.locator('.no-data').count()).toBe(0);
    await shot(page, 'servers');
    noErrors();
    await page.context().close();
  }, 60_000);

  it('finds a log event sent over UDP by a word of its message', async () => {
    await eventually(
      async () => (await api<{ events: unknown[] }>(`log-events?q=${WORD}`)).events.length === 1,
      30_000,
      'the marked log event in the store',
      API_POLL_MS,
    );
    expect(await rowsWithWord('logs-word')).toHaveLength(1);
  }, 60_000);

  it('ranks the apps by the engine time the simulator sent', async () => {
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const path = `performance/top?by=app&limit=50&from=${from}`;
    await eventually(
      async () => (await api<PerformanceTopAnswer>(path)).rows.reduce((n, row) => n + row.count, 0) === PERF_EVENTS,
      30_000,
      'every engine performance event in the store',
      API_POLL_MS,
    );
    const answer = await api<PerformanceTopAnswer>(path);
    expect(new Set(answer.rows.map((row) => row.appId))).toEqual(new Set(sentTotals.keys()));
    for (const row of answer.rows) expect(row.totalMs).toBeCloseTo(sentTotals.get(row.appId) ?? -1, 3);
    const { page, noErrors } = await open('/performance?range=1h');
    const shown = (await attributes(page.locator('#top tbody tr'), 'data-id')).map((id) => id ?? '');
    expect(new Set(shown)).toEqual(new Set(sentTotals.keys()));
    // Shown from the costliest down, by what was sent (ties may come in either order).
    const totals = shown.map((app) => sentTotals.get(app) ?? -1);
    for (let i = 1; i < totals.length; i++) expect(totals[i - 1]).toBeGreaterThanOrEqual(totals[i] ?? 0);
    const names = new Map(sim.pool.apps.map((app) => [app.id, app.name]));
    expect(await page.locator('#top tbody tr').first().textContent()).toContain(names.get(shown[0] ?? ''));
    await shot(page, 'performance');
    noErrors();
    await page.context().close();
  }, 60_000);

  it('still shows the data from before a restart', async () => {
    const restartedAt = Date.now();
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    svc = await startLocal();
    expect(await rowsWithWord('logs-after-restart')).toHaveLength(1);
    const server = sim.config.Svc.serversToMonitor.servers[0]?.serverName ?? '';
    const health = await api<{ t: number[] }>(`servers/${encodeURIComponent(server)}/health`);
    expect(health.t.some((t) => t < restartedAt)).toBe(true);
  }, 60_000);
});

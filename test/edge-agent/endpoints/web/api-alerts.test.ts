/**
 * The alerts' endpoints of the read API on a real web view (compose.ts) over a real store file: the
 * answers' shapes against their schemas, silences added and ended by POST and seen by GET (and on
 * the alert they cover), the history paged, every refusal of a POST with its status and message,
 * alerts off, and no config secret in any answer.
 *
 * The alert engine is not the code under test: the web view gets an ObservedAlerts made of the real
 * SqliteAlertStore and the config's rules (test/support/observed-alerts.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { webView } from '../../../../edge-agent/endpoints/web/compose.js';
import type { WebView } from '../../../../edge-agent/endpoints/web/server.js';
import { openAlertStore, type SqliteAlertStore } from '../../../../shared/alerts/store.js';
import { MASK } from '../../../../shared/config/mask.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import {
  type AlertHistoryAnswer,
  AlertHistoryAnswerSchema,
  type AlertsAnswer,
  AlertsAnswerSchema,
  ApiErrorSchema,
  type SilenceView,
  SilenceViewSchema,
} from '../../../../shared/store/api-types.js';
import { alertRecord } from '../../../shared/alerts/fixtures.js';
import { captureLog } from '../../../support/audit.js';
import { REPO_ROOT } from '../../../support/build.js';
import { observedAlertsOf } from '../../../support/observed-alerts.js';
import { freePort, LOOPBACK } from '../../../support/ports.js';
import { svcConfig } from '../../../support/udp.js';
import { secretConfigLines } from './fixtures.js';

const MINUTE_MS = 60_000;
const CHANNEL_KEY = 'MARKER-CHANNEL-KEY';
const CHANNEL_URL = `https://hooks.example.com/${CHANNEL_KEY}`;
const dir = mkdtempSync(join(tmpdir(), 'svc-api-alerts-'));
const storePath = join(dir, 'svc.db');

interface View {
  view: WebView;
  /** `http://127.0.0.1:<port>`. */
  origin: string;
  store: SqliteAlertStore | null;
}

/** A web view as compose.ts makes it, alerts on (the store's ObservedAlerts) or off. */
async function startView(alertsOn: boolean): Promise<View> {
  const port = await freePort();
  const config = svcConfig([
    `  configVisualisation: {enable: true, host: ${LOOPBACK}, port: ${port}}`,
    `  store: {enable: true, path: ${JSON.stringify(storePath)}}`,
    `  alerts: {enable: ${alertsOn}, rules: [{name: nodeTwoDown, expr: {field: server.up, op: "==", threshold: 0}}], channels: [{name: ops, type: webhook, url: "${CHANNEL_URL}"}], routes: []}`,
    ...secretConfigLines(await freePort()),
  ]);
  const logged = await captureLog('info');
  const observed = new Observed();
  const store = alertsOn ? openAlertStore(storePath) : null;
  if (store) observed.alerts = observedAlertsOf(store, config.alerts);
  const parts = webView(
    {
      config,
      configFile: 'test.yaml',
      logger: logged.logger,
      errors: new ErrorTracker({ enabled: false, log: logged.logger }),
    },
    { observed, mode: 'edge', installDir: REPO_ROOT },
  );
  if (!parts) throw new Error('the web view is off');
  await parts.component.start();
  return { view: parts.component, origin: `http://${LOOPBACK}:${parts.component.port}`, store };
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request on a new connection; `headers` replace the defaults (a JSON body from the page's own origin). */
function call(
  view: View,
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string | undefined> } = {},
): Promise<Answer> {
  const url = new URL(`/api/v1/${path}`, view.origin);
  const defaults: Record<string, string | undefined> = {
    'content-type': method === 'POST' ? 'application/json' : undefined,
    origin: method === 'POST' ? view.origin : undefined,
  };
  const headers = Object.fromEntries(
    Object.entries({ ...defaults, ...options.headers }).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

/** The parsed body of an answer with `status`, checked against `schema`. */
function expectAnswer<T>(answer: Answer, status: number, schema: TSchema): T {
  expect(answer.status, answer.body).toBe(status);
  const parsed: unknown = JSON.parse(answer.body);
  if (!Value.Check(schema, parsed)) throw new Error(`not the schema's shape: ${answer.body}`);
  // Checked against the schema of T just above.
  const typed: T = JSON.parse(answer.body);
  return typed;
}

/** A refusal: its status, an ApiError, and its message matching `message`. */
function expectRefusal(answer: Answer, status: number, message: RegExp, parameter?: string): void {
  const error = expectAnswer<{ message: string; parameter?: string }>(answer, status, ApiErrorSchema);
  expect(error.message).toMatch(message);
  if (parameter !== undefined) expect(error.parameter).toBe(parameter);
  expect(answer.body).not.toMatch(/\n\s+at /);
}

const postSilence = (view: View, body: unknown, headers?: Record<string, string | undefined>) =>
  call(view, 'POST', 'alerts/silences', { body: JSON.stringify(body), ...(headers ? { headers } : {}) });

let on: View;
const NOW = Date.now();
const firing = alertRecord('node2', NOW - 10 * MINUTE_MS);
const pending = alertRecord('node1', NOW - MINUTE_MS, 'pending');

beforeAll(async () => {
  on = await startView(true);
  on.store?.applyTransitions({ at: NOW - 8 * MINUTE_MS, active: [pending, firing], fired: [firing], resolved: [] });
}, 60_000);
afterAll(async () => {
  await on?.view.stop();
  on?.store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /api/v1/alerts', () => {
  it('answers the alerts (firing first), the rules, the silences and the channels, with no config secret', async () => {
    const answer = await call(on, 'GET', 'alerts');
    const alerts = expectAnswer<AlertsAnswer>(answer, 200, AlertsAnswerSchema);
    expect(alerts.enabled).toBe(true);
    expect(alerts.evaluationIntervalMs).toBe(10_000);
    expect(alerts.alerts.map((alert) => [alert.labels.server, alert.phase])).toEqual([
      ['node2', 'firing'],
      ['node1', 'pending'],
    ]);
    expect(alerts.rules.map((rule) => rule.name)).toContain('nodeTwoDown');
    // The channel's URL is a secret of the config: masked whatever the engine's view says.
    expect(alerts.channels).toEqual([expect.objectContaining({ name: 'ops', target: MASK })]);
    expect(answer.body).not.toContain(CHANNEL_KEY);
    expect(answer.headers['cache-control']).toBe('no-store');
  });
});

describe('POST /api/v1/alerts/silences', () => {
  it('adds a silence (201, its view) that GET then lists and shows on the alert it covers; expire ends it', async () => {
    const made = await postSilence(on, {
      rule: 'serverDown',
      matchers: { server: 'node2' },
      duration: '2h',
      comment: `swapping a disk, see ${CHANNEL_URL}`,
      createdBy: 'ops',
    });
    const silence = expectAnswer<SilenceView>(made, 201, SilenceViewSchema);
    expect(silence).toMatchObject({
      rule: 'serverDown',
      matchers: { server: 'node2' },
      createdBy: 'ops',
      active: true,
      expiredAt: null,
    });
    expect(silence.id).toMatch(/^[0-9a-f]{8}$/);
    expect(silence.endsAt - silence.startsAt).toBe(2 * 60 * MINUTE_MS);
    // A secret in the comment is masked in every answer (the comment is stored as given).
    expect(silence.comment).toBe(`swapping a disk, see ${MASK}`);

    const after = expectAnswer<AlertsAnswer>(await call(on, 'GET', 'alerts'), 200, AlertsAnswerSchema);
    expect(after.alerts.map((alert) => [alert.labels.server, alert.silencedBy])).toEqual([
      ['node2', silence.id],
      ['node1', null],
    ]);
    expect(after.silences.map((listed) => listed.id)).toContain(silence.id);

    const ended = await call(on, 'POST', `alerts/silences/${silence.id}/expire`);
    expect(expectAnswer<SilenceView>(ended, 200, SilenceViewSchema)).toMatchObject({ id: silence.id, active: false });
    const later = expectAnswer<AlertsAnswer>(await call(on, 'GET', 'alerts'), 200, AlertsAnswerSchema);
    expect(later.alerts.map((alert) => alert.silencedBy)).toEqual([null, null]);
    // Ended in the last 24 h: still listed, not active.
    expect(later.silences.find((listed) => listed.id === silence.id)).toMatchObject({ active: false });
    expectRefusal(await call(on, 'POST', `alerts/silences/${silence.id}/expire`), 404, /no active silence has the id/);
    expectRefusal(
      await call(on, 'POST', 'alerts/silences/00000000/expire'),
      404,
      /no active silence has the id "00000000"/,
    );
  });

  it('takes an end time, and a same-origin request without Origin (Sec-Fetch-Site)', async () => {
    const endsAt = new Date(Date.now() + 30 * MINUTE_MS).toISOString();
    const made = await postSilence(
      on,
      { matchers: { server: 'node1' }, endsAt },
      { origin: undefined, 'sec-fetch-site': 'same-origin' },
    );
    expect(expectAnswer<SilenceView>(made, 201, SilenceViewSchema)).toMatchObject({
      rule: null,
      endsAt: Date.parse(endsAt),
    });
  });

  it('refuses cross-site requests with 403 saying why, before reading the body', async () => {
    const body = { rule: 'serverDown', duration: '1h' };
    expectRefusal(await postSilence(on, body, { origin: undefined }), 403, /an Origin header is required/);
    expectRefusal(
      await postSilence(on, body, { origin: 'http://evil.example' }),
      403,
      /the Origin http:\/\/evil\.example is not this web view’s/,
    );
    expectRefusal(
      await postSilence(on, body, { 'sec-fetch-site': 'cross-site' }),
      403,
      /another site \(Sec-Fetch-Site: cross-site\)/,
    );
    expectRefusal(
      await postSilence(on, body, { 'content-type': 'text/plain' }),
      403,
      /content-type must be application\/json \(got "text\/plain"\)/,
    );
    expectRefusal(
      await postSilence(on, body, { 'content-type': 'application/x-www-form-urlencoded' }),
      403,
      /content-type must be application\/json/,
    );
  });

  it('refuses a bad body with 413 or 400 naming the member, and stores nothing', async () => {
    const before = on.store?.activeSilences(Date.now()).length;
    const big = Buffer.from(JSON.stringify({ rule: 'serverDown', duration: '1h', comment: 'x'.repeat(17 * 1024) }));
    expectRefusal(await call(on, 'POST', 'alerts/silences', { body: big }), 413, /larger than 16384 bytes/);
    // Without a content-length: counted as it comes.
    const chunked = await call(on, 'POST', 'alerts/silences', {
      body: big,
      headers: { 'transfer-encoding': 'chunked' },
    });
    expectRefusal(chunked, 413, /larger than 16384 bytes/);
    expectRefusal(
      await call(on, 'POST', 'alerts/silences', { body: '{"rule": "serverDown",' }),
      400,
      /^body: not JSON/,
      'body',
    );
    expectRefusal(await postSilence(on, { rule: 'serverDown', duration: 7200 }), 400, /^duration: /, 'duration');
    expectRefusal(
      await postSilence(on, { rule: 'serverDown', duration: '1h', silenceAll: true }),
      400,
      /^silenceAll: |^body: /,
    );
    expectRefusal(
      await postSilence(on, { rule: 'serverDown', matchers: { server: 2 }, duration: '1h' }),
      400,
      /^matchers\.server: /,
      'matchers.server',
    );
    expectRefusal(
      await postSilence(on, { rule: 'serverDwn', duration: '1h' }),
      400,
      /^rule: unknown rule "serverDwn" \(did you mean serverDown\?\); the rules are serverDown, .*nodeTwoDown$/,
      'rule',
    );
    expectRefusal(
      await postSilence(on, { rule: 'serverDown', endsAt: new Date(Date.now() - MINUTE_MS).toISOString() }),
      400,
      /not in the future/,
      'endsAt',
    );
    expectRefusal(
      await postSilence(on, { rule: 'serverDown', endsAt: 'tomorrow' }),
      400,
      /not an RFC 3339 time/,
      'endsAt',
    );
    expectRefusal(
      await postSilence(on, { rule: 'serverDown', duration: '2 hours' }),
      400,
      /not a duration/,
      'duration',
    );
    expectRefusal(await postSilence(on, { duration: '1h' }), 400, /needs a rule or at least one label/, 'rule');
    expectRefusal(await postSilence(on, { rule: 'serverDown' }), 400, /needs an end/, 'endsAt');
    expect(on.store?.activeSilences(Date.now()).length).toBe(before);
  });

  it('takes POST only where silences are changed, and GET elsewhere', async () => {
    const get = await call(on, 'GET', 'alerts/silences');
    expectRefusal(get, 405, /takes POST only/);
    expect(get.headers['allow']).toBe('POST');
    const post = await call(on, 'POST', 'alerts/history', { body: '{}' });
    expectRefusal(post, 405, /read-only/);
    expect(post.headers['allow']).toBe('GET, HEAD');
  });
});

describe('GET /api/v1/alerts/history', () => {
  it('pages the history newest first, by rule, with a cursor', async () => {
    const alert = alertRecord('node3', NOW - 60 * MINUTE_MS);
    on.store?.record(
      Array.from({ length: 5 }, (_, i) => ({
        ...alert,
        at: NOW - (30 - i) * MINUTE_MS,
        event: 'notified' as const,
        value: i,
        channel: 'ops',
        detail: null,
      })),
    );
    const query = `from=${new Date(NOW - 40 * MINUTE_MS).toISOString()}&to=${new Date(NOW).toISOString()}&rule=serverDown&limit=3`;
    const first = expectAnswer<AlertHistoryAnswer>(
      await call(on, 'GET', `alerts/history?${query}`),
      200,
      AlertHistoryAnswerSchema,
    );
    // Newest first as written (by id): the engine writes entries as they happen; these were written last.
    expect(first.entries.map((entry) => [entry.event, entry.value])).toEqual([
      ['notified', 4],
      ['notified', 3],
      ['notified', 2],
    ]);
    expect(first.entries[0]).toMatchObject({ channel: 'ops', time: NOW - 26 * MINUTE_MS, labels: { server: 'node3' } });
    expect(first.nextCursor).not.toBeNull();
    const second = expectAnswer<AlertHistoryAnswer>(
      await call(on, 'GET', `alerts/history?${query}&cursor=${first.nextCursor}`),
      200,
      AlertHistoryAnswerSchema,
    );
    expect(second.entries.map((entry) => [entry.event, entry.value])).toEqual([
      ['notified', 1],
      ['notified', 0],
      ['fired', 0],
    ]);
    expect(second.nextCursor).toBeNull();
    const other = await call(on, 'GET', `alerts/history?${query.replace('serverDown', 'nodeTwoDown')}`);
    expect(expectAnswer<AlertHistoryAnswer>(other, 200, AlertHistoryAnswerSchema).entries).toEqual([]);
    expectRefusal(await call(on, 'GET', `alerts/history?${query}&cursor=nonsense`), 400, /cursor/, 'cursor');
    expectRefusal(await call(on, 'GET', 'alerts/history?severity=critical'), 400, /unknown parameter/, 'severity');
  });
});

describe('alerts off', () => {
  it('answers GET with enabled false and empty lists, and POST with 404 saying so', async () => {
    const off = await startView(false);
    try {
      const alerts = expectAnswer<AlertsAnswer>(await call(off, 'GET', 'alerts'), 200, AlertsAnswerSchema);
      expect(alerts).toEqual({
        enabled: false,
        evaluationIntervalMs: 10_000,
        alerts: [],
        rules: [],
        silences: [],
        channels: [],
      });
      const history = expectAnswer<AlertHistoryAnswer>(
        await call(off, 'GET', 'alerts/history'),
        200,
        AlertHistoryAnswerSchema,
      );
      expect(history.entries).toEqual([]);
      expectRefusal(await postSilence(off, { rule: 'serverDown', duration: '1h' }), 404, /alerts are off/);
      expectRefusal(await call(off, 'POST', 'alerts/silences/00000000/expire'), 404, /alerts are off/);
    } finally {
      await off.view.stop();
    }
  });
});

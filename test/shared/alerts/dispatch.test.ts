/**
 * The dispatcher against real local receivers (test/support/recording-http.ts) and a real alert store
 * file: grouping and groupWait, repeats, resolved at once, a failing then healing receiver, a 404,
 * routes by severity, silences, and a restart. Times are passed in (`at`), relative to the run's now:
 * nothing sleeps for a groupWait or a repeat interval.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RetryingChannel } from '../../../shared/alerts/channels/retry.js';
import { webhookChannel } from '../../../shared/alerts/channels/webhook.js';
import { Dispatcher, type DispatchInput, type Route } from '../../../shared/alerts/dispatch.js';
import type { AlertRecord, AlertStore, Silence } from '../../../shared/alerts/model.js';
import { type AlertSeverity, alertFingerprint } from '../../../shared/alerts/notification.js';
import { openAlertStore } from '../../../shared/alerts/store.js';
import { ErrorTracker, type TrackedError } from '../../../shared/errors/tracker.js';
import { silentLog } from '../../support/log.js';
import { type RecordingServer, recordingServerForFile } from '../../support/recording-http.js';
import { alertRecord } from './fixtures.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const GROUP_WAIT = 30 * SECOND;
const REPEAT = 4 * HOUR;
const EXTERNAL = 'http://svc.example.test:3100';

const recording = recordingServerForFile();
/** The file's receiver (reset before each test). */
let receiver: RecordingServer;
let dir: string;
let store: ReturnType<typeof openAlertStore>;
let tracked: TrackedError[];
let storeErrors: unknown[];
/** The run's now: every time below is relative to it. */
let t0: number;

beforeEach(() => {
  receiver = recording();
  dir = mkdtempSync(join(tmpdir(), 'svc-dispatch-'));
  store = openAlertStore(join(dir, 'svc.db'));
  tracked = [];
  storeErrors = [];
  t0 = Date.now();
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A firing alert of `rule` on `server`, fired at `firedAt`. */
function firing(
  server: string,
  firedAt: number,
  rule = 'serverDown',
  severity: AlertSeverity = 'critical',
): AlertRecord {
  const labels = { alertname: rule, severity, server };
  const record = alertRecord(server, firedAt - 2 * MINUTE);
  return { ...record, fingerprint: alertFingerprint(labels), ruleId: rule, rule, severity, labels };
}

/** A webhook channel posting to `path` of the receiver, with short retry waits. */
function channel(name: string, path = `/${name}`): RetryingChannel {
  const errors = new ErrorTracker({ enabled: true, log: silentLog, sink: (error) => tracked.push(error) });
  return new RetryingChannel(
    webhookChannel(name, `${receiver.url}${path}`),
    { log: silentLog, errors },
    {
      attempts: 2,
      baseDelayMs: 10,
    },
  );
}

function dispatcher(channels: RetryingChannel[], routes: Route[] = [], alertStore: AlertStore = store): Dispatcher {
  return new Dispatcher({
    channels,
    routes,
    groupWaitMs: GROUP_WAIT,
    repeatIntervalMs: REPEAT,
    externalUrl: EXTERNAL,
    store: alertStore,
    onStoreError: (err) => storeErrors.push(err),
  });
}

/** Dispatches and waits for the sends it started. */
async function run(target: Dispatcher, input: Partial<DispatchInput> & { at: number }): Promise<void> {
  target.dispatch({ active: [], resolved: [], silences: [], ...input });
  expect(await target.idle(10 * SECOND)).toBe(true);
}

interface PostedAlert {
  status: string;
  labels: Record<string, string>;
  generatorURL: string;
  endsAt: string;
}
/** The alerts of request `index`, with the notification's status and receiver. */
function posted(index: number): { status: string; path: string; alerts: PostedAlert[]; groupLabels: unknown } {
  const request = receiver.requests[index];
  if (request === undefined) throw new Error(`no request ${index}`);
  const body = request.body as { status: string; alerts: PostedAlert[]; groupLabels: unknown };
  return { status: body.status, path: request.url, alerts: body.alerts, groupLabels: body.groupLabels };
}

const servers = (index: number) => posted(index).alerts.map((alert) => `${alert.labels.server}:${alert.status}`);

describe('Dispatcher', () => {
  it('waits groupWait and sends the alerts that fired together in one POST, then records the deliveries', async () => {
    const target = dispatcher([channel('ops')], [{ match: {}, channels: ['ops'], groupBy: ['alertname'] }]);
    const a = firing('node1', t0);
    const b = firing('node2', t0 + 5 * SECOND);
    await run(target, { at: t0 + 5 * SECOND, active: [a, b] });
    await run(target, { at: t0 + 29 * SECOND, active: [a, b] });
    expect(receiver.requests).toHaveLength(0);
    await run(target, { at: t0 + 30 * SECOND, active: [a, b] });
    expect(receiver.requests).toHaveLength(1);
    expect(posted(0).groupLabels).toEqual({ alertname: 'serverDown' });
    expect(servers(0)).toEqual(['node1:firing', 'node2:firing']);
    expect(posted(0).alerts[0]?.generatorURL).toBe(`${EXTERNAL}/servers?server=node1`);
    expect(
      store
        .deliveries()
        .map((delivery) => [delivery.fingerprint, delivery.status, delivery.sentAt])
        .sort(),
    ).toEqual(
      [
        [a.fingerprint, 'firing', t0 + 30 * SECOND],
        [b.fingerprint, 'firing', t0 + 30 * SECOND],
      ].sort(),
    );
    const history = store.history({ from: t0 - HOUR, to: t0 + HOUR, limit: 10 });
    expect(history.map((entry) => [entry.event, entry.channel, entry.labels.server]).sort()).toEqual([
      ['notified', 'ops', 'node1'],
      ['notified', 'ops', 'node2'],
    ]);
    expect(target.channelCounters()).toEqual([
      {
        name: 'ops',
        type: 'webhook',
        target: `${receiver.url}/…`,
        sent: 1,
        failed: 0,
        lastError: null,
        failing: false,
      },
    ]);
    // Told: nothing more until the repeat interval.
    await run(target, { at: t0 + 10 * MINUTE, active: [a, b] });
    expect(receiver.requests).toHaveLength(1);
    expect(storeErrors).toEqual([]);
  });

  it('groups by alertname and server when no route is set: one notification per server', async () => {
    const target = dispatcher([channel('ops')]);
    await run(target, { at: t0 + GROUP_WAIT, active: [firing('node1', t0), firing('node2', t0)] });
    expect(receiver.requests).toHaveLength(2);
    expect([servers(0), servers(1)].sort()).toEqual([['node1:firing'], ['node2:firing']]);
  });

  it('repeats a firing group at the repeat interval, not before', async () => {
    const target = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    await run(target, { at: t0 + GROUP_WAIT, active: [a] });
    await run(target, { at: t0 + GROUP_WAIT + REPEAT - SECOND, active: [a] });
    expect(receiver.requests).toHaveLength(1);
    await run(target, { at: t0 + GROUP_WAIT + REPEAT, active: [a] });
    expect(receiver.requests).toHaveLength(2);
    expect(servers(1)).toEqual(['node1:firing']);
  });

  it('tells a resolution at once, with the alerts of the group still firing, then the last one resolved', async () => {
    const target = dispatcher([channel('ops')], [{ match: {}, channels: ['ops'], groupBy: ['alertname'] }]);
    const a = firing('node1', t0);
    const b = firing('node2', t0);
    await run(target, { at: t0 + GROUP_WAIT, active: [a, b] });
    await run(target, { at: t0 + GROUP_WAIT + 10 * SECOND, active: [b], resolved: [a] });
    expect(receiver.requests).toHaveLength(2);
    expect(posted(1).status).toBe('firing');
    expect(servers(1).sort()).toEqual(['node1:resolved', 'node2:firing']);
    expect(posted(1).alerts.find((alert) => alert.status === 'resolved')?.endsAt).toBe(
      new Date(t0 + GROUP_WAIT + 10 * SECOND).toISOString(),
    );
    await run(target, { at: t0 + GROUP_WAIT + 20 * SECOND, active: [], resolved: [b] });
    expect(receiver.requests).toHaveLength(3);
    expect(posted(2).status).toBe('resolved');
    expect(servers(2)).toEqual(['node2:resolved']);
    // Nothing more once every alert was told resolved.
    await run(target, { at: t0 + GROUP_WAIT + REPEAT, active: [] });
    expect(receiver.requests).toHaveLength(3);
  });

  it('does not tell a resolution to a channel that was never told the alert fired', async () => {
    const target = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    await run(target, { at: t0 + 10 * SECOND, active: [a] });
    await run(target, { at: t0 + 20 * SECOND, resolved: [a] });
    expect(receiver.requests).toHaveLength(0);
  });

  it('records a failure, tries again a minute later at the earliest, and delivers once the receiver heals', async () => {
    receiver.setFallback(500);
    const target = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    await run(target, { at: t0 + GROUP_WAIT, active: [a] });
    expect(receiver.requests).toHaveLength(2); // the RetryingChannel's two attempts
    expect(tracked.map((error) => error.type)).toEqual(['ALERT_NOTIFY']);
    const [counters] = target.channelCounters();
    expect([counters?.sent, counters?.failed, counters?.failing]).toEqual([0, 1, true]);
    expect(counters?.lastError).toContain('500');
    const failedEntries = store.history({ from: t0 - HOUR, to: t0 + HOUR, limit: 10 });
    expect(failedEntries.map((entry) => [entry.event, entry.channel])).toEqual([['notify_failed', 'ops']]);
    expect(failedEntries[0]?.detail).toContain('500');
    expect(failedEntries[0]?.detail).not.toContain(receiver.url.slice('http://'.length) + '/ops');
    expect(store.deliveries()).toEqual([]);

    await run(target, { at: t0 + GROUP_WAIT + 59 * SECOND, active: [a] });
    expect(receiver.requests).toHaveLength(2);
    // The second failure doubles the wait.
    await run(target, { at: t0 + GROUP_WAIT + MINUTE, active: [a] });
    expect(receiver.requests).toHaveLength(4);
    receiver.setFallback(202);
    await run(target, { at: t0 + GROUP_WAIT + 2 * MINUTE, active: [a] });
    expect(receiver.requests).toHaveLength(4);
    await run(target, { at: t0 + GROUP_WAIT + 3 * MINUTE, active: [a] });
    expect(receiver.requests).toHaveLength(5);
    // Delivering again ends `failing`; the last error stays.
    expect(target.channelCounters()[0]).toMatchObject({ sent: 1, failed: 2, failing: false });
    expect(target.channelCounters()[0]?.lastError).toContain('500');
    expect(store.deliveries().map((delivery) => delivery.status)).toEqual(['firing']);
    const events = store.history({ from: t0 - HOUR, to: t0 + HOUR, limit: 10 }).map((entry) => entry.event);
    expect(events).toEqual(['notified', 'notify_failed', 'notify_failed']);
  });

  it('gives up on a 404 at the first attempt and counts it failed', async () => {
    receiver.setFallback(404);
    const target = dispatcher([channel('ops')]);
    await run(target, { at: t0 + GROUP_WAIT, active: [firing('node1', t0)] });
    expect(receiver.requests).toHaveLength(1);
    expect(target.channelCounters()[0]).toMatchObject({ sent: 0, failed: 1 });
    expect(target.channelCounters()[0]?.lastError).toContain('404');
  });

  it('routes by severity (a|b alternatives), and sends an alert no route matches to every channel', async () => {
    const target = dispatcher(
      [channel('pager'), channel('chat')],
      [
        { match: { severity: 'critical' }, channels: ['pager'], groupBy: [] },
        { match: { severity: 'warning|info' }, channels: ['chat'], groupBy: [] },
        { match: { team: 'db' }, channels: ['chat'], groupBy: [] },
      ],
    );
    const critical = firing('node1', t0, 'serverDown', 'critical');
    const warning = firing('node1', t0, 'engineCpuHigh', 'warning');
    const unrouted = { ...firing('node1', t0, 'custom', 'warning'), labels: { alertname: 'custom', severity: 'none' } };
    await run(target, { at: t0 + GROUP_WAIT, active: [critical, warning, unrouted] });
    const byPath = receiver.requests.map((request) => {
      const body = request.body as { alerts: PostedAlert[] };
      return `${request.url} ${body.alerts.map((alert) => alert.labels.alertname).join(',')}`;
    });
    expect(byPath.sort()).toEqual(['/chat custom', '/chat engineCpuHigh', '/pager custom', '/pager serverDown']);
  });

  it('sends no silenced alert and does not repeat it; once the silence ends, tells it as a new alert', async () => {
    const target = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    const b = firing('node2', t0);
    await run(target, { at: t0 + GROUP_WAIT, active: [a, b] });
    expect(receiver.requests).toHaveLength(2);
    const silence: Silence = {
      id: '0badf00d',
      rule: 'serverDown',
      matchers: { server: 'node1' },
      startsAt: t0 + MINUTE,
      endsAt: t0 + REPEAT * 2,
      createdBy: 'ops',
      comment: 'maintenance',
      expiredAt: null,
    };
    receiver.reset();
    await run(target, { at: t0 + GROUP_WAIT + REPEAT, active: [a, b], silences: [silence] });
    expect(receiver.requests).toHaveLength(1);
    expect(servers(0)).toEqual(['node2:firing']);
    // The silence gone (expired): node1 is told at once, as a new alert that fired long ago.
    receiver.reset();
    await run(target, { at: t0 + GROUP_WAIT + REPEAT + MINUTE, active: [a, b], silences: [] });
    expect(receiver.requests).toHaveLength(1);
    expect(servers(0)).toEqual(['node1:firing']);
  });

  it('after a restart, sends again nothing the store says was sent, and sends what was not yet told', async () => {
    const first = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    await run(first, { at: t0 + GROUP_WAIT, active: [a] });
    expect(receiver.requests).toHaveLength(1);
    store.close();
    store = openAlertStore(join(dir, 'svc.db'));
    const b = firing('node2', t0 + MINUTE);
    const second = dispatcher([channel('ops')]);
    await run(second, { at: t0 + 2 * MINUTE, active: [a, b] });
    expect(receiver.requests).toHaveLength(2);
    expect(servers(1)).toEqual(['node2:firing']);
    // And a resolution of what the first process told.
    await run(second, { at: t0 + 3 * MINUTE, active: [b], resolved: [a] });
    expect(servers(2)).toEqual(['node1:resolved']);
  });

  it('after a restart, tells a resolution the last process could not deliver (its channel failing), once', async () => {
    const first = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    await run(first, { at: t0 + GROUP_WAIT, active: [a] });
    expect(servers(0)).toEqual(['node1:firing']);
    receiver.setFallback(500);
    await run(first, { at: t0 + 2 * MINUTE, resolved: [a] });
    expect(receiver.requests).toHaveLength(3); // the two attempts of the resolution failed
    store.close();

    store = openAlertStore(join(dir, 'svc.db'));
    receiver.setFallback(202);
    const second = dispatcher([channel('ops')]);
    await run(second, { at: t0 + 5 * MINUTE });
    expect(receiver.requests).toHaveLength(4);
    expect(servers(3)).toEqual(['node1:resolved']);
    expect(posted(3).alerts[0]?.endsAt).toBe(new Date(t0 + 2 * MINUTE).toISOString());
    // Told: nothing is kept to tell again, by this process or the next.
    expect(store.untoldResolutions()).toEqual([]);
    await run(second, { at: t0 + 6 * MINUTE });
    store.close();
    store = openAlertStore(join(dir, 'svc.db'));
    await run(dispatcher([channel('ops')]), { at: t0 + 7 * MINUTE });
    expect(receiver.requests).toHaveLength(4);
  });

  it('tells the resolution of an alert that resolved while the send telling it fires was in flight', async () => {
    receiver.reply({ status: 202, delayMs: 1_500 });
    const target = dispatcher([channel('ops')]);
    const a = firing('node1', t0);
    target.dispatch({ at: t0 + GROUP_WAIT, active: [a], resolved: [], silences: [] });
    // Resolved before the channel answered the firing notification.
    await run(target, { at: t0 + GROUP_WAIT + 1 * SECOND, resolved: [a] });
    expect(servers(0)).toEqual(['node1:firing']);
    expect(receiver.requests).toHaveLength(1);
    // Saved, so that a restart now would still tell it.
    expect(store.untoldResolutions().map((resolved) => resolved.record.fingerprint)).toEqual([a.fingerprint]);
    await run(target, { at: t0 + GROUP_WAIT + 11 * SECOND });
    expect(servers(1)).toEqual(['node1:resolved']);
    expect(store.deliveries().map((delivery) => delivery.status)).toEqual(['resolved']);
    expect(store.untoldResolutions()).toEqual([]);
  });
});

/**
 * The status page's model: rates from counter differences over at least 2 s (several open pages do
 * not shrink the window), the last hour per server (older samples dropped, bounded), failures and
 * virtual-proxy sessions, recent errors from a real ErrorTracker (the last 10, newest first), empty
 * states naming what to set. The clock is a variable here (rates over seconds and an hour of
 * samples); the listener and destination are stand-ins exposing counters (the code under test is
 * the computation over them; a real listener and queue are read in web-e2e.test.ts). The alerts
 * part reads a real alert engine, composed as boot.ts composes it (a real store file, real rules,
 * real webhook channels to recording receivers, one of which refuses with 404).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { alertComponents } from '../../../../edge-agent/alerts/compose.js';
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { MAX_TREND_POINTS, PollHistory, TREND_WINDOW_MS } from '../../../../edge-agent/endpoints/web/poll-history.js';
import { FIRING_ALERTS_NAMED, StatusModel } from '../../../../edge-agent/endpoints/web/status.js';
import type { ListenerTotals } from '../../../../edge-agent/sources/udp/listener.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import type { HealthBody } from '../../../../shared/platform/polled.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { captureLog } from '../../../support/audit.js';
import { silentLog } from '../../../support/log.js';
import { until } from '../../../support/ports.js';
import { startRecordingServer } from '../../../support/recording-http.js';
import { svcConfig } from '../../../support/udp.js';

const body = (cpu: number, sessions: number): HealthBody => ({
  version: '14.1.0',
  started: '20240312T081512.000+0100',
  mem: { committed: 1, allocated: 100 + cpu, free: 50 },
  apps: { active_docs: [], in_memory_docs: [], loaded_docs: [], calls: 0, selections: 0 },
  cpu: { total: cpu },
  session: { active: sessions, total: sessions },
  users: { active: 1, total: 1 },
  cache: { hits: 0, lookups: 0, added: 0, replaced: 0, bytes_added: 0 },
  saturated: false,
});
const sample = (serverName: string, cpu: number, sessions = 1) => ({
  serverName,
  tags: {},
  body: body(cpu, sessions),
  uptime: '',
});

function setup(lines: string[] = []) {
  let now = 1_000_000;
  const clock = { now: () => now, advance: (ms: number) => (now += ms) };
  const totals: ListenerTotals = {
    received: 0,
    queued: 0,
    processed: 0,
    failed: 0,
    dropped: { source: 0, size: 0, rate_limit: 0, queue_full: 0, kernel: 0 },
    kernelCounted: false,
  };
  const destination = { name: 'tsdb', failedWrites: 0, writtenEvents: 0 };
  const observed = new Observed();
  observed.listener({ name: 'log_events', queueType: 'log_events', bound: true, totals: () => totals });
  observed.queue({
    name: 'platform',
    queue: {
      capacity: 500,
      storageFault: null,
      stats: () => ({
        tsdb: {
          pending: 2,
          pendingEvents: 7,
          delivered: 3,
          deadLettered: 1,
          unavailableSince: null,
          unavailableReason: null,
          oldestPendingAt: null,
        },
      }),
    },
    destinations: [destination],
  });
  const errors = new ErrorTracker({ enabled: true, log: silentLog });
  const history = new PollHistory(clock.now);
  const model = new StatusModel({
    config: svcConfig([
      '  errorTracking: {enable: true}',
      '  serversToMonitor: {servers: [{host: "a:1", serverName: n1}, {host: "b:1", serverName: n2}]}',
      ...lines,
    ]),
    mode: 'edge',
    observed,
    history,
    errors,
    now: clock.now,
  });
  model.open();
  return { clock, totals, destination, errors, history, model };
}

describe('status model', () => {
  it('computes rates from counter differences over at least 2 s, however often it is asked', () => {
    const { clock, totals, destination, model } = setup();
    const first = model.report();
    expect(first.listeners[0]).toMatchObject({
      type: 'log_events',
      received: 0,
      datagramsPerSecond: null,
      droppedPerSecond: null,
      kernelCounted: false,
    });
    expect(first.listeners[0]?.dropped).toEqual({ source: 0, size: 0, rate_limit: 0, queue_full: 0 });
    expect(first.destinations).toEqual([
      {
        queue: 'platform',
        name: 'tsdb',
        pendingEvents: 7,
        queueCapacity: 500,
        written: 0,
        writesPerSecond: null,
        failed: 0,
        deadLettered: 1,
        place: 'edge',
        unreachable: false,
      },
    ]);

    clock.advance(4_000);
    totals.received = 400;
    totals.dropped.size = 40;
    destination.writtenEvents = 200;
    const second = model.report();
    expect(second.listeners[0]).toMatchObject({ received: 400, datagramsPerSecond: 100, droppedPerSecond: 10 });
    expect(second.destinations[0]).toMatchObject({ written: 200, writesPerSecond: 50 });

    // Asked again 0.5 s later (another page): still measured against the reading at least 2 s old.
    clock.advance(500);
    totals.received = 450;
    expect(model.report().listeners[0]?.datagramsPerSecond).toBe(100); // (450 - 0) / 4.5 s
    clock.advance(2_000);
    totals.received = 650;
    // Against the reading 2.5 s old (400 at 4 s): 250 / 2.5 s.
    expect(model.report().listeners[0]?.datagramsPerSecond).toBe(100);
  });

  it('shows kernel drops where the OS counts them', () => {
    const { totals, model } = setup();
    totals.kernelCounted = true;
    totals.dropped.kernel = 3;
    expect(model.report().listeners[0]?.dropped).toEqual({
      source: 0,
      size: 0,
      rate_limit: 0,
      queue_full: 0,
      kernel: 3,
    });
  });

  it('keeps the last hour per server, bounded; a failure marks the server until it answers again', () => {
    const { clock, history, model } = setup();
    expect(model.report().servers.map((s) => [s.name, s.state])).toEqual([
      ['n1', 'waiting'],
      ['n2', 'waiting'],
    ]);
    history.health(sample('n1', 10, 2), clock.now());
    clock.advance(TREND_WINDOW_MS / 2);
    history.health(sample('n1', 20, 4), clock.now());
    clock.advance(TREND_WINDOW_MS / 2 + 1);
    history.health(sample('n1', 30, 6), clock.now());
    const n1 = model.report().servers[0];
    expect(n1).toMatchObject({
      name: 'n1',
      state: 'ok',
      cpu: 30,
      sessions: 6,
      memAllocatedMb: 130,
      lastPollAgeSeconds: 0,
    });
    expect(n1?.trend.cpu).toEqual([20, 30]);
    // Two polls 300 ms apart keep distinct, increasing times (seconds with milliseconds), not one second twice.
    clock.advance(1_000 - (clock.now() % 1_000) + 100);
    history.health(sample('n1', 31, 6), clock.now());
    clock.advance(300);
    history.health(sample('n1', 32, 6), clock.now());
    const [, , before, last] = model.report().servers[0]?.trend.t ?? [];
    expect(last).toBeGreaterThan(before ?? Number.POSITIVE_INFINITY);
    expect((last ?? 0) - (before ?? 0)).toBeCloseTo(0.3, 6);

    history.healthFailed('n1');
    clock.advance(5_000);
    expect(model.report().servers[0]).toMatchObject({ state: 'failed', cpu: 32, lastPollAgeSeconds: 5 });
    history.health(sample('n1', 40), clock.now());
    expect(model.report().servers[0]).toMatchObject({ state: 'ok', lastFailureAt: null });

    for (let i = 0; i < MAX_TREND_POINTS + 50; i++) history.health(sample('n2', i % 100), clock.now());
    expect(model.report().servers[1]?.trend.t).toHaveLength(MAX_TREND_POINTS);
  });

  it('shows the sessions of each virtual proxy, and drops one whose poll failed', () => {
    const { history, model } = setup();
    const s = (vp: string, n: number) => ({
      serverName: 'n1',
      tags: { user_session_virtual_proxy: vp },
      virtualProxy: vp,
      sessions: Array.from({ length: n }, (_, i) => ({ UserDirectory: 'D', UserId: `u${i}`, SessionId: `s${i}` })),
      userIdList: '',
    });
    history.sessions(s('/', 3));
    history.sessions(s('/hdr', 1));
    expect(model.report().servers[0]?.proxySessions).toEqual([
      { virtualProxy: '/', sessions: 3 },
      { virtualProxy: '/hdr', sessions: 1 },
    ]);
    history.sessionsFailed('n1', { user_session_virtual_proxy: '/hdr' });
    expect(model.report().servers[0]?.proxySessions).toEqual([{ virtualProxy: '/', sessions: 3 }]);
  });

  it('keeps the last 10 errors, newest first, with counts per type since start; none after close', () => {
    const { errors, model } = setup();
    expect(model.report().empty.errors).toBe('no errors since Svc started');
    for (let i = 0; i < 12; i++)
      errors.track(i % 2 === 0 ? 'HEALTH_API' : 'MQTT_PUBLISH', new Error('x'), { serverName: `s${i}`, module: 'M' });
    const report = model.report();
    expect(report.errors.recent.map((e) => e.serverName)).toEqual([
      's11',
      's10',
      's9',
      's8',
      's7',
      's6',
      's5',
      's4',
      's3',
      's2',
    ]);
    expect(report.errors.byType).toEqual([
      { type: 'HEALTH_API', sinceStart: 6 },
      { type: 'MQTT_PUBLISH', sinceStart: 6 },
    ]);
    model.close();
    errors.track('HEALTH_API', new Error('x'), { serverName: 'after' });
    expect(model.report().errors.recent[0]?.serverName).toBe('s11');
  });

  it('says what to set when a section is empty', () => {
    const model = new StatusModel({
      config: svcConfig([]),
      mode: 'local',
      observed: new Observed(),
      history: new PollHistory(),
      errors: new ErrorTracker({ enabled: false, log: silentLog }),
    });
    expect(model.report().empty).toEqual({
      servers: 'no servers monitored: set Svc.serversToMonitor.servers',
      listeners: 'no UDP listener: set Svc.userEvents.enable, or enable a source in Svc.logEvents.source',
      destinations: 'no queued destination: enable Svc.tsdbConfig, Svc.mqttConfig or Svc.monsaas and send events to it',
      errors: 'error tracking is off: set Svc.errorTracking.enable',
      alerts: 'alerts are off: the alert engine is not running',
    });
  });
});

describe('the alerts part of the status', () => {
  const offWith = (lines: string[]) =>
    new StatusModel({
      config: svcConfig(lines),
      mode: 'edge',
      observed: new Observed(),
      history: new PollHistory(),
      errors: new ErrorTracker({ enabled: false, log: silentLog }),
    }).report();

  it('says alerts are off, and why, when no engine runs', () => {
    const off = offWith(['  alerts: {enable: false}']);
    expect(off.empty.alerts).toBe('alerts are off: Svc.alerts.enable is false');
    expect(off.alerts).toEqual({
      enabled: false,
      firing: { critical: 0, warning: 0, info: 0 },
      pending: 0,
      firingAlerts: [],
      moreFiring: 0,
      channels: 0,
      failingChannels: [],
    });
    expect(offWith(['  store: {enable: false}']).empty.alerts).toBe(
      'alerts are off: they keep their state in the embedded store, and Svc.store.enable is false',
    );
  });

  it("counts the engine's firing alerts by severity and its pending ones, names five of the firing, and the failing channel without its URL", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-status-alerts-'));
    const [ok, refusing] = [await startRecordingServer(), await startRecordingServer()];
    refusing.setFallback(404);
    const servers = Array.from({ length: 7 }, (_, i) => `{host: "h${i}:1", serverName: node${i}}`);
    const config = svcConfig([
      '  errorTracking: {enable: true}',
      `  serversToMonitor: {servers: [${servers.join(', ')}]}`,
      `  store: {path: ${join(dir, 'svc.db')}}`,
      '  alerts:',
      '    evaluationInterval: 1h',
      '    groupWait: "0"',
      '    builtIn: {serverDown: {for: "0"}}',
      '    rules:',
      '      - {name: healthApiErrors, expr: {field: errors, where: {type: HEALTH_API}, by: [type], aggregate: increase, window: 1h, op: ">", threshold: 0}, severity: info, summary: "{{type}}"}',
      '      - {name: healthApiErrorsLong, expr: {field: errors, where: {type: HEALTH_API}, by: [type], aggregate: increase, window: 1h, op: ">", threshold: 0}, for: 1h, summary: "{{type}}"}',
      '    channels:',
      `      - {name: ops, type: webhook, url: "${ok.url}/hook/MARKER-OPS"}`,
      `      - {name: broken, type: webhook, url: "${refusing.url}/hook/MARKER-BROKEN"}`,
    ]);
    const { logger } = await captureLog('info');
    const errors = new ErrorTracker({ enabled: true, log: logger });
    const observed = new Observed();
    let clock = Date.now();
    const alerts = alertComponents(
      { config, configFile: join(dir, 'svc.yaml'), logger, errors, clock: new PointClock() },
      { observed, storeOn: true, now: () => clock },
    );
    if (alerts === null) throw new Error('alerts are on');
    const { engine, pollSink } = alerts;
    const model = new StatusModel({ config, mode: 'edge', observed, history: new PollHistory(), errors });
    try {
      await engine.start();
      expect(model.report().alerts).toMatchObject({ enabled: true, firing: { critical: 0, warning: 0, info: 0 } });
      expect(model.report().empty.alerts).toBeNull();

      // Every server stops answering (serverDown, critical, fires at once), and one HEALTH_API error
      // fires an info rule and leaves a warning one pending for an hour.
      for (let i = 0; i < 7; i++) pollSink.healthFailed(`node${i}`, { server_name: `node${i}` });
      errors.track('HEALTH_API', new Error('node0 does not answer'), { serverName: 'node0' });
      clock += 1_000;
      engine.evaluateOnce(clock);
      // One notification per group (alertname and server): 8 to each channel, each sent in the background.
      const counts = () => engine.channels().map((channel) => [channel.name, channel.sent, channel.failed]);
      await until('every notification sent or failed', () =>
        counts().every(([, sent, failed]) => Number(sent) + Number(failed) === 8),
      );
      expect(counts()).toEqual([
        ['ops', 8, 0],
        ['broken', 0, 8],
      ]);

      const report = model.report();
      expect(report.alerts).toMatchObject({
        enabled: true,
        firing: { critical: 7, warning: 0, info: 1 },
        pending: 1,
        moreFiring: 8 - FIRING_ALERTS_NAMED,
        channels: 2,
        failingChannels: [{ name: 'broken', failed: 8 }],
      });
      expect(report.alerts.firingAlerts).toHaveLength(FIRING_ALERTS_NAMED);
      expect(report.alerts.firingAlerts.map((alert) => [alert.rule, alert.severity])).toEqual(
        Array.from({ length: FIRING_ALERTS_NAMED }, () => ['serverDown', 'critical']),
      );
      expect(new Set(report.alerts.firingAlerts.map((alert) => alert.server)).size).toBe(FIRING_ALERTS_NAMED);
      const active = engine.active();
      for (const alert of report.alerts.firingAlerts)
        expect(active.find((record) => record.fingerprint === alert.fingerprint)?.labels.server).toBe(alert.server);
      expect(JSON.stringify(report)).not.toContain('MARKER');

      // The servers answer again: the info alert, which has no server, is named with a null server.
      for (let i = 0; i < 7; i++)
        pollSink.health(
          { serverName: `node${i}`, tags: { server_name: `node${i}` }, body: body(1, 1), uptime: '' },
          clock,
        );
      clock += 1_000;
      engine.evaluateOnce(clock);
      expect(model.report().alerts).toMatchObject({
        firing: { critical: 0, warning: 0, info: 1 },
        pending: 1,
        moreFiring: 0,
        firingAlerts: [{ rule: 'healthApiErrors', severity: 'info', server: null, about: 'type=HEALTH_API' }],
      });
    } finally {
      await engine.stop();
      await Promise.all([ok.stop(), refusing.stop()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

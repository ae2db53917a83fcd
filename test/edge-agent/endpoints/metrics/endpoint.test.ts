/**
 * The metrics endpoint over real HTTP (platform-formats.md §9, docs/metrics.md): the polled values
 * fed through its PollSink (names, help texts, labels, values, bytes), a failed poll removing the
 * server's series, Svc's own counters read from real parts (a UDP listener receiving datagrams, a
 * local queue whose tsdb is down, an interval task that skips), the process metrics, 404/405 and
 * the 500 of a failed collection.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type MetricsEndpointParts, metricsEndpoint } from '../../../../edge-agent/endpoints/metrics/compose.js';
import { Observed } from '../../../../edge-agent/endpoints/observed.js';
import { DROP_REASONS } from '../../../../edge-agent/sources/udp/listener.js';
import { LOG_LEVELS } from '../../../../edge-agent/sources/udp/log-levels.js';
import { ERROR_TYPES, ErrorTracker } from '../../../../shared/errors/tracker.js';
import type { HealthBody, HealthSample, SessionSample } from '../../../../shared/platform/polled.js';
import { IntervalTask } from '../../../../shared/runtime/interval.js';
import type { Component } from '../../../../shared/runtime/lifecycle.js';
import { SVC_VERSION } from '../../../../shared/version.js';
import { auditQueued, captureLog, type LogCapture } from '../../../support/audit.js';
import {
  auditTsdbLines,
  auditTsdbQueue,
  endpointLines,
  logListener,
  RIG_CERTIFICATE_DAYS,
  RIG_CERTIFICATE_FILE,
  RIG_SERVER,
  startMetricsRig,
} from '../../../support/metrics-rig.js';
import { freePort, LOOPBACK, sleep } from '../../../support/ports.js';
import { scrape } from '../../../support/prometheus.js';
import { sendDatagrams, svcConfig } from '../../../support/udp.js';
import { LOG_ENGINE, LOG_REPOSITORY, withField } from '../../sources/udp/parse/fixtures.js';

const BODY: HealthBody = {
  version: '12.1306.0',
  started: '20240312T081512.000+0100',
  mem: { committed: 2048, allocated: 4577.3, free: 27890.4 },
  apps: {
    active_docs: ['a1'],
    in_memory_docs: ['a1', 'SessionApp_8d1c2f', 'a2'],
    loaded_docs: ['a1', 'a2'],
    calls: 15234,
    selections: 812,
  },
  cpu: { total: 7.5 },
  session: { active: 3, total: 12 },
  users: { active: 2, total: 9 },
  cache: { hits: 1290, lookups: 1720, added: 430, replaced: 12, bytes_added: 52428800 },
  saturated: true,
};

const N1_TAGS = { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node', site: 'lab' };
const N2_TAGS = { host: 'node2.lab.local', server_name: 'Node2', server_description: '', site: 'edge' };
const health = (tags: Record<string, string>, body: HealthBody = BODY): HealthSample => ({
  serverName: tags['server_name'] ?? '',
  tags,
  body,
  uptime: '',
});
const sessions = (proxy: string, count: number): SessionSample => ({
  serverName: 'Node1',
  tags: { ...N1_TAGS, user_session_virtual_proxy: proxy, user_session_host: 'node1.lab.local:4243' },
  virtualProxy: proxy,
  sessions: Array.from({ length: count }, (_, i) => ({ UserDirectory: 'LAB', UserId: `u${i}`, SessionId: `s${i}` })),
  userIdList: '',
});

let log: LogCapture;
let started: Component[];
let dirs: string[];

beforeEach(async () => {
  log = await captureLog('debug');
  started = [];
  dirs = [];
});

afterEach(async () => {
  for (const c of started.reverse()) await c.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function start<T extends Component>(component: T): Promise<T> {
  await component.start();
  started.push(component);
  return component;
}

interface Endpoint extends MetricsEndpointParts {
  url: string;
  errors: ErrorTracker;
  observed: Observed;
}

async function endpoint(
  extra: string[] = [],
  errors = new ErrorTracker({ enabled: true, log: silent() }),
): Promise<Endpoint> {
  const port = await freePort();
  const config = svcConfig([
    ...endpointLines(port),
    '  serversToMonitor:',
    '    serverTagsDefinition: [site]',
    '    servers: []',
    ...extra,
  ]);
  const observed = new Observed();
  const parts = metricsEndpoint({ config, logger: log.logger, errors }, observed);
  if (parts === null) throw new Error('the endpoint is enabled');
  await start(parts.component);
  return { ...parts, url: `http://${LOOPBACK}:${port}/metrics`, errors, observed };
}

function silent() {
  return { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
}

describe('metrics endpoint: polled values (§9)', () => {
  it('exposes every §9 metric with its help text, the server tags as labels, and memory in bytes', async () => {
    const e = await endpoint();
    e.pollSink.health(health(N1_TAGS), Date.now());
    const { status, contentType, metrics } = await scrape(e.url);
    expect(status).toBe(200);
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8');

    const labels = { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node', site: 'lab' };
    const expected: Record<string, number> = {
      svc_apps_calls: 15234,
      svc_apps_selections: 812,
      svc_apps_activedocs_total: 1,
      svc_apps_loadeddocs_total: 2,
      svc_apps_inmemorydocs_total: 3,
      svc_cache_hits: 1290,
      svc_cache_lookups: 1720,
      svc_cache_added: 430,
      svc_cache_replaced: 12,
      svc_cache_bytes_added: 52428800,
      svc_cache_saturated: 1,
      svc_cpu_total: 7.5,
      svc_mem_committed: 2147483648,
      svc_mem_allocated: 4799646924.8,
      svc_mem_free: 29245204070.4,
      svc_session_active: 3,
      svc_session_total: 12,
      svc_users_active: 2,
      svc_users_total: 9,
    };
    for (const [name, value] of Object.entries(expected)) {
      expect(metrics.series(name), name).toEqual([{ name, labels, value }]);
      expect(metrics.type.get(name), name).toBe('gauge');
      expect(metrics.help.get(name), name).toMatch(/^Engine: /);
    }
    for (const name of ['svc_mem_committed', 'svc_mem_allocated', 'svc_mem_free'])
      expect(metrics.help.get(name)).toContain('in bytes');
    expect(metrics.help.get('svc_cpu_total')).toBe('Engine: CPU usage in percent (health API cpu.total)');
    expect(metrics.series('svc_engine_metadata')).toEqual([
      {
        name: 'svc_engine_metadata',
        labels: { ...labels, engine_version: '12.1306.0', engine_started: '20240312T081512.000+0100' },
        value: 1,
      },
    ]);
    expect(metrics.type.get('svc_engine_metadata')).toBe('gauge');
  });

  it('exposes sessions per virtual proxy with its own labels', async () => {
    const e = await endpoint();
    e.pollSink.sessions(sessions('/', 3), Date.now());
    e.pollSink.sessions(sessions('/hdr', 0), Date.now());
    const { metrics } = await scrape(e.url);
    expect(metrics.series('svc_user_session_total')).toEqual([
      {
        name: 'svc_user_session_total',
        labels: { ...N1_TAGS, user_session_virtual_proxy: '/', user_session_host: 'node1.lab.local:4243' },
        value: 3,
      },
      {
        name: 'svc_user_session_total',
        labels: { ...N1_TAGS, user_session_virtual_proxy: '/hdr', user_session_host: 'node1.lab.local:4243' },
        value: 0,
      },
    ]);
    expect(metrics.type.get('svc_user_session_total')).toBe('gauge');
  });

  it('shows the last poll only, drops a server whose poll failed and brings it back with the next success', async () => {
    const e = await endpoint();
    e.pollSink.health(health(N1_TAGS), Date.now());
    e.pollSink.health(health(N2_TAGS), Date.now());
    e.pollSink.health(health(N1_TAGS, { ...BODY, version: '12.1400.0', cpu: { total: 55 } }), Date.now());
    let { metrics } = await scrape(e.url);
    expect(metrics.value('svc_cpu_total', { server_name: 'Node1' })).toBe(55);
    // A new engine version replaces the old label set: no stale series beside the current one.
    expect(
      metrics.series('svc_engine_metadata', { server_name: 'Node1' }).map((s) => s.labels['engine_version']),
    ).toEqual(['12.1400.0']);

    e.pollSink.healthFailed('Node1', N1_TAGS);
    ({ metrics } = await scrape(e.url));
    const node1 = metrics.samples.filter((s) => s.labels['server_name'] === 'Node1');
    expect(node1.filter((s) => s.name !== 'svc_polls_failed_total')).toEqual([]);
    expect(metrics.value('svc_cpu_total', { server_name: 'Node2' })).toBe(7.5);
    expect(metrics.value('svc_engine_metadata', { server_name: 'Node2' })).toBe(1);
    expect(metrics.value('svc_polls_failed_total', { kind: 'health', server_name: 'Node1' })).toBe(1);

    e.pollSink.health(health(N1_TAGS), Date.now());
    ({ metrics } = await scrape(e.url));
    expect(metrics.value('svc_cpu_total', { server_name: 'Node1' })).toBe(7.5);
  });

  it('drops only the virtual proxy whose session poll failed', async () => {
    const e = await endpoint();
    e.pollSink.sessions(sessions('/', 3), Date.now());
    e.pollSink.sessions(sessions('/hdr', 1), Date.now());
    e.pollSink.sessionsFailed('Node1', sessions('/hdr', 0).tags);
    const { metrics } = await scrape(e.url);
    expect(metrics.series('svc_user_session_total').map((s) => s.labels['user_session_virtual_proxy'])).toEqual(['/']);
    expect(metrics.value('svc_polls_failed_total', { kind: 'sessions', server_name: 'Node1' })).toBe(1);
  });
});

describe('metrics endpoint: Svc itself', () => {
  it('exposes the process metrics prefixed svc_ and the version', async () => {
    const e = await endpoint();
    const { metrics } = await scrape(e.url);
    for (const name of [
      'svc_process_cpu_user_seconds_total',
      'svc_process_resident_memory_bytes',
      'svc_nodejs_heap_size_used_bytes',
      'svc_nodejs_eventloop_lag_seconds',
    ]) {
      expect(metrics.series(name).length, name).toBeGreaterThan(0);
    }
    expect(metrics.value('svc_process_resident_memory_bytes')).toBeGreaterThan(1_000_000);
    expect(metrics.samples.filter((s) => !s.name.startsWith('svc_'))).toEqual([]);
    expect(metrics.series('svc_info')).toEqual([{ name: 'svc_info', labels: { version: SVC_VERSION }, value: 1 }]);
  });

  it('counts UDP datagrams received, processed, failed and dropped per reason from a real listener', async () => {
    const e = await endpoint();
    const config = svcConfig([
      '  logEvents:',
      '    source:',
      '      proxy:',
      '        enable: true',
      '    udpServerConfig:',
      `      serverHost: ${LOOPBACK}`,
      '      maxMessageSize: 100',
      '      rateLimit: {enable: true, maxMessagesPerMinute: 6}',
    ]);
    const errors = new ErrorTracker({ enabled: false, log: log.logger });
    const listener = await start(logListener(config, log.logger, errors));
    e.observed.listener(listener);

    let { metrics } = await scrape(e.url);
    expect(metrics.value('svc_udp_datagrams_received_total', { listener: 'log_events' })).toBe(0);
    expect(metrics.type.get('svc_udp_datagrams_dropped_total')).toBe('counter');

    // 2 oversized (size), then 8 small: 6 pass the rate limit (malformed, so failed), 2 do not.
    await sendDatagrams(
      listener.port,
      ['x'.repeat(101), 'y'.repeat(150), ...Array.from({ length: 8 }, (_, i) => `garbage ${i}`)],
      { inFlight: 1 },
    );
    await expect
      .poll(async () =>
        (await scrape(e.url)).metrics.value('svc_udp_datagrams_received_total', { listener: 'log_events' }),
      )
      .toBe(10);
    await expect
      .poll(async () =>
        (await scrape(e.url)).metrics.value('svc_udp_datagrams_failed_total', { listener: 'log_events' }),
      )
      .toBe(6);
    ({ metrics } = await scrape(e.url));
    expect(metrics.value('svc_udp_datagrams_processed_total', { listener: 'log_events' })).toBe(0);
    expect(metrics.value('svc_udp_datagrams_dropped_total', { listener: 'log_events', reason: 'size' })).toBe(2);
    expect(metrics.value('svc_udp_datagrams_dropped_total', { listener: 'log_events', reason: 'rate_limit' })).toBe(2);
    expect(metrics.value('svc_udp_datagrams_dropped_total', { listener: 'log_events', reason: 'source' })).toBe(0);
    expect(metrics.value('svc_udp_datagrams_dropped_total', { listener: 'log_events', reason: 'queue_full' })).toBe(0);
    // Linux counts the socket's receive-buffer overflows: the kernel reason is there.
    expect(metrics.value('svc_udp_datagrams_dropped_total', { listener: 'log_events', reason: 'kernel' })).toBe(0);

    // A queue-metrics write resets §3's counters, not the endpoint's.
    listener.commitMetrics(listener.metrics());
    ({ metrics } = await scrape(e.url));
    expect(metrics.value('svc_udp_datagrams_received_total', { listener: 'log_events' })).toBe(10);
  });

  it('shows queue depth and failed writes of a destination that is down, whose events wait (none dead-lettered)', async () => {
    const e = await endpoint();
    const dir = mkdtempSync(join(tmpdir(), 'metrics-queue-'));
    dirs.push(dir);
    // The audit path's tsdb destination, from the registry, aimed at a port where nothing listens.
    const closed = await freePort();
    const config = svcConfig(auditTsdbLines(closed));
    // The first delivery waits for a fuller batch: the events are pending meanwhile.
    const audit = auditTsdbQueue(config, log.logger, e.errors, dir, 1500);
    const queue = await start(audit.queue);
    e.observed.queue({ name: 'audit', queue, destinations: [audit.destination] });
    await queue.send([auditQueued(), auditQueued(), auditQueued()]);

    let { metrics } = await scrape(e.url);
    expect(metrics.value('svc_queue_pending_events', { queue: 'audit', destination: 'tsdb' })).toBe(3);
    expect(metrics.value('svc_queue_capacity_events', { queue: 'audit' })).toBe(50);
    expect(metrics.value('svc_destination_events_failed_total', { queue: 'audit', destination: 'tsdb' })).toBe(0);
    expect(metrics.value('svc_queue_dead_lettered_messages_total', { queue: 'audit', destination: 'tsdb' })).toBe(0);

    // An unreachable tsdb makes its events wait (the group pauses; no attempt counts towards
    // maxReceiveCount): failed writes are counted, nothing is dead-lettered, all stays pending.
    await expect
      .poll(
        async () =>
          (await scrape(e.url)).metrics.value('svc_destination_events_failed_total', {
            queue: 'audit',
            destination: 'tsdb',
          }),
        { timeout: 15_000 },
      )
      .toBeGreaterThanOrEqual(3);
    ({ metrics } = await scrape(e.url));
    expect(metrics.value('svc_queue_dead_lettered_messages_total', { queue: 'audit', destination: 'tsdb' })).toBe(0);
    expect(metrics.value('svc_queue_pending_events', { queue: 'audit', destination: 'tsdb' })).toBe(3);
    expect(metrics.type.get('svc_queue_pending_events')).toBe('gauge');
    expect(metrics.type.get('svc_destination_events_failed_total')).toBe('counter');
  });

  it("shows polls skipped by the pollers' schedules and errors tracked per type", async () => {
    const e = await endpoint();
    let release: () => void = () => undefined;
    const task = new IntervalTask({
      name: 'slow poll',
      intervalMs: 5,
      task: () => new Promise<void>((resolve) => (release = resolve)),
    });
    await task.start();
    // The pollers' PollGroup: one IntervalTask per target, read through counts().
    e.observed.pollGroup('health', { counts: () => [{ label: 'Node1', skipped: task.skipped }] });
    e.observed.pollGroup('sessions', {
      counts: () => [
        { label: 'Node1 /', skipped: 2 },
        { label: 'Node1 /hdr', skipped: 3 },
      ],
    });
    await sleep(60);
    release();
    await task.stop();
    e.errors.track('MQTT_PUBLISH', new Error('no broker'));
    e.errors.track('MQTT_PUBLISH', new Error('no broker'));
    e.errors.track('HEALTH_API', new Error('down'), { serverName: 'Node1' });
    const { metrics } = await scrape(e.url);
    expect(task.skipped).toBeGreaterThan(0);
    expect(metrics.series('svc_polls_skipped_total')).toEqual([
      { name: 'svc_polls_skipped_total', labels: { kind: 'health', target: 'Node1' }, value: task.skipped },
      { name: 'svc_polls_skipped_total', labels: { kind: 'sessions', target: 'Node1 /' }, value: 2 },
      { name: 'svc_polls_skipped_total', labels: { kind: 'sessions', target: 'Node1 /hdr' }, value: 3 },
    ]);
    // The other types are there at 0 (the next describe).
    expect(metrics.series('svc_errors_tracked_total').filter((s) => s.value > 0)).toEqual([
      { name: 'svc_errors_tracked_total', labels: { error_type: 'HEALTH_API' }, value: 1 },
      { name: 'svc_errors_tracked_total', labels: { error_type: 'MQTT_PUBLISH' }, value: 2 },
    ]);
  });
});

describe('metrics endpoint: HTTP', () => {
  it('answers 404 beside /metrics and 405 to other methods; HEAD has the headers only', async () => {
    const e = await endpoint();
    const base = e.url.replace(/\/metrics$/, '');
    for (const path of ['/', '/metric', '/metrics/', '/other']) {
      const res = await fetch(`${base}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toBe('not found\n');
    }
    expect((await fetch(`${e.url}?name[]=svc_cpu_total`)).status).toBe(200);
    const post = await fetch(e.url, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    const head = await fetch(e.url, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(await head.text()).toBe('');
  });

  it('answers 500 without details when collecting fails, logs the error, and recovers', async () => {
    const e = await endpoint();
    let broken = true;
    e.observed.pollGroup('health', {
      counts: () => {
        if (broken) throw new Error('poller state unreadable at /secret/path');
        return [];
      },
    });
    const failed = await fetch(e.url);
    expect(failed.status).toBe(500);
    expect(await failed.text()).toBe('internal error\n');
    await expect
      .poll(() =>
        log
          .lines()
          .filter((l) => l['level'] === 'error')
          .map((l) => l['msg']),
      )
      .toEqual(['metrics endpoint: collecting the metrics failed; answered 500']);
    const line = log.lines().find((l) => l['level'] === 'error');
    expect(JSON.stringify(line?.['err'])).toContain('poller state unreadable');

    broken = false;
    expect((await fetch(e.url)).status).toBe(200);
  });

  it('refuses to start on a taken port, naming it', async () => {
    const e = await endpoint();
    const port = Number(new URL(e.url).port);
    const config = svcConfig(endpointLines(port));
    const second = metricsEndpoint({ config, logger: log.logger, errors: e.errors }, new Observed());
    await expect(second?.component.start()).rejects.toThrow(
      `the metrics endpoint cannot listen on ${LOOPBACK}:${port}: listen EADDRINUSE`,
    );
  });

  it('is not built when metricsEndpoint.enable is false', () => {
    expect(
      metricsEndpoint(
        { config: svcConfig([]), logger: log.logger, errors: new ErrorTracker({ enabled: true, log: silent() }) },
        new Observed(),
      ),
    ).toBeNull();
  });
});

describe('metrics endpoint: the counters behind the alerts exist from the start', () => {
  it('shows each at 0 for every label combination known at start, so the first failure is an increase', async () => {
    const rig = await startMetricsRig(log.logger);
    started.push({ name: 'metrics rig', start: () => Promise.resolve(), stop: () => rig.stop() });
    let { metrics } = await scrape(rig.url);
    // The configured server, for each poller that runs.
    expect(metrics.series('svc_polls_failed_total')).toEqual([
      { name: 'svc_polls_failed_total', labels: { kind: 'health', server_name: 'Node1' }, value: 0 },
      { name: 'svc_polls_failed_total', labels: { kind: 'sessions', server_name: 'Node1' }, value: 0 },
    ]);
    expect(metrics.series('svc_errors_tracked_total').map((s) => [s.labels['error_type'], s.value])).toEqual(
      ERROR_TYPES.map((type) => [type, 0]),
    );
    // Linux counts the kernel's drops, so every reason is there.
    expect(
      metrics
        .series('svc_udp_datagrams_dropped_total', { listener: 'log_events' })
        .map((s) => [s.labels['reason'], s.value]),
    ).toEqual(DROP_REASONS.map((reason) => [reason, 0]));
    const audit = { queue: 'audit', destination: 'tsdb' };
    expect(metrics.value('svc_destination_events_failed_total', audit)).toBe(0);
    expect(metrics.value('svc_queue_dead_lettered_messages_total', audit)).toBe(0);
    const pairs = metrics
      .series('svc_log_events_total')
      .map((s) => `${s.labels['source']} ${s.labels['level']} ${s.value}`);
    for (const source of ['engine', 'proxy', 'repository', 'scheduler', 'qix-perf'])
      for (const level of LOG_LEVELS) expect(pairs).toContain(`${source} ${level} 0`);
    expect(pairs).toHaveLength(5 * LOG_LEVELS.length);
    expect(metrics.type.get('svc_log_events_total')).toBe('counter');
    const days =
      (metrics.value('svc_client_certificate_expiry_timestamp_seconds', { file: RIG_CERTIFICATE_FILE }) * 1000 -
        Date.now()) /
      86_400_000;
    expect(days).toBeGreaterThan(RIG_CERTIFICATE_DAYS - 1);
    expect(days).toBeLessThanOrEqual(RIG_CERTIFICATE_DAYS);

    // Then they count: a failed health poll, a tracked error; from real datagrams ERRORs (in any case), a WARN, a level of no known name.
    rig.pollSink.healthFailed('Node1', RIG_SERVER);
    rig.errors.track('HEALTH_API', new Error('down'), { serverName: 'Node1' });
    await sendDatagrams(rig.listener.port, [
      LOG_REPOSITORY,
      LOG_ENGINE,
      withField(LOG_ENGINE, 4, 'error'),
      withField(LOG_ENGINE, 4, 'NOTICE'),
    ]);
    await expect
      .poll(async () =>
        (await scrape(rig.url)).metrics.value('svc_log_events_total', { source: 'engine', level: 'ERROR' }),
      )
      .toBe(1);
    ({ metrics } = await scrape(rig.url));
    expect(metrics.value('svc_log_events_total', { source: 'repository', level: 'ERROR' })).toBe(1);
    expect(metrics.value('svc_log_events_total', { source: 'engine', level: 'WARN' })).toBe(1);
    expect(metrics.value('svc_log_events_total', { source: 'engine', level: 'other' })).toBe(1);
    expect(metrics.value('svc_polls_failed_total', { kind: 'health', server_name: 'Node1' })).toBe(1);
    expect(metrics.value('svc_errors_tracked_total', { error_type: 'HEALTH_API' })).toBe(1);
  });

  it('shows no error counters while error tracking is off, and no certificate while no poller uses one', async () => {
    const e = await endpoint([], new ErrorTracker({ enabled: false, log: silent() }));
    const { metrics } = await scrape(e.url);
    expect(metrics.series('svc_errors_tracked_total')).toEqual([]);
    expect(metrics.series('svc_client_certificate_expiry_timestamp_seconds')).toEqual([]);
    expect(metrics.series('svc_log_events_total')).toEqual([]);
    expect(metrics.series('svc_polls_failed_total')).toEqual([]);
  });
});

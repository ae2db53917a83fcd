/**
 * The alert engine in-process, composed from a config as boot.ts composes it, with real parts: the
 * real rules and evaluator, facts from a real Observed and error tracker, a real store file, a real
 * HTTP receiver. The evaluation interval is 1 s of real time; the clock the engine reads is the test's
 * (`now`), advanced past `for` and the windows, so nothing sleeps for minutes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { alertComponents } from '../../../edge-agent/alerts/compose.js';
import { metricsEndpoint } from '../../../edge-agent/endpoints/metrics/compose.js';
import { Observed } from '../../../edge-agent/endpoints/observed.js';
import type { MqttWriter } from '../../../shared/destinations/mqtt/client.js';
import { ErrorTracker, type TrackedError } from '../../../shared/errors/tracker.js';
import { PointClock } from '../../../shared/queue/point-clock.js';
import type { AppContext } from '../../../shared/runtime/context.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { captureLog, type LogCapture } from '../../support/audit.js';
import { endpointLines } from '../../support/metrics-rig.js';
import { startMqttRig } from '../../support/mqtt-rig.js';
import { freePort, LOOPBACK, until } from '../../support/ports.js';
import { scrape } from '../../support/prometheus.js';
import { type RecordingServer, recordingServerForFile } from '../../support/recording-http.js';
import { svcConfig } from '../../support/udp.js';

const MINUTE = 60_000;

const recording = recordingServerForFile();
/** The file's receiver (reset before each test). */
let receiver: RecordingServer;
let dir: string;
let log: LogCapture;
let started: Component[];
let tracked: TrackedError[];
/** The engine's clock. */
let clock: number;

beforeEach(async () => {
  receiver = recording();
  dir = mkdtempSync(join(tmpdir(), 'svc-alert-engine-'));
  log = await captureLog('info');
  started = [];
  tracked = [];
  clock = Date.now();
});
afterEach(async () => {
  for (const component of started.reverse()) await component.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A rule of the operator's own: errors of type HEALTH_API tracked within the last minute. */
const RULE_LINES = [
  '    rules:',
  '      - name: healthApiErrors',
  '        expr: {field: errors, where: {type: HEALTH_API}, by: [type], aggregate: increase, window: 1m, op: ">", threshold: 0}',
  '        severity: warning',
  '        summary: "{{type}} errors: {{value}}"',
];

/** The config of the test: the store in the temp dir, a 1 s interval, no groupWait, a webhook channel unless `channels` says otherwise. */
function config(
  extra: string[] = [],
  channels = [`      - {name: ops, type: webhook, url: "${receiver.url}/hook/s3cr3t"}`],
) {
  return svcConfig([
    `  store: {path: ${join(dir, 'svc.db')}}`,
    '  alerts:',
    '    evaluationInterval: 1s',
    '    groupWait: "0"',
    '    externalUrl: http://svc.example.test:3100',
    ...RULE_LINES,
    ...(channels.length === 0 ? ['    channels: []'] : ['    channels:', ...channels]),
    ...extra,
  ]);
}

/** Composes the engine (and its parts) as boot.ts does, opens and starts them. */
async function startEngine(
  svc = config(),
  errors = new ErrorTracker({ enabled: true, log: log.logger, sink: (error) => tracked.push(error) }),
  mqtt: MqttWriter | null = null,
) {
  const ctx: AppContext = {
    config: svc,
    configFile: join(dir, 'svc.yaml'),
    logger: log.logger,
    errors,
    clock: new PointClock(),
  };
  const observed = new Observed();
  const alerts = alertComponents(ctx, { observed, storeOn: true, mqtt, now: () => clock });
  if (alerts === null) throw new Error('alerts are on');
  alerts.engine.open();
  for (const component of alerts.components) {
    await component.start();
    started.push(component);
  }
  return { ...alerts, observed, errors };
}

/** Stops the started components (a restart's first half). */
async function stopAll(): Promise<void> {
  for (const component of started.reverse()) await component.stop();
  started = [];
}

type Posted = { status: string; alerts: { status: string; labels: Record<string, string>; generatorURL: string }[] };
const body = (index: number) => receiver.requests[index]?.body as Posted;
const messages = () => log.lines().map((line) => String(line.msg));

describe('alert engine', () => {
  it('evaluates at start and every interval: fires, sends, resolves at once, and keeps the history', async () => {
    const { engine, errors } = await startEngine();
    expect(messages()).toContainEqual(expect.stringMatching(/^alerts: \d+ rules \(\d+ built in\), 1 channel \(ops\)$/));
    await until('the first evaluation', () => engine.rules().every((rule) => rule.lastEvaluation !== null));
    expect(engine.active()).toEqual([]);

    errors.track('HEALTH_API', new Error('node1 does not answer'), { serverName: 'node1' });
    clock += 5_000;
    await until('the firing notification', () => receiver.requests.length === 1, 5_000);
    expect(body(0).status).toBe('firing');
    expect(body(0).alerts[0]?.labels).toEqual({
      alertname: 'healthApiErrors',
      severity: 'warning',
      type: 'HEALTH_API',
    });
    expect(body(0).alerts[0]?.generatorURL.startsWith('http://svc.example.test:3100/')).toBe(true);
    expect(messages()).toContainEqual(
      expect.stringMatching(/^alert healthApiErrors fired \(type=HEALTH_API\): HEALTH_API errors: 1/),
    );

    // A minute later the window holds no new error: resolved, and told at once.
    clock += MINUTE + 5_000;
    await until('the resolved notification', () => receiver.requests.length === 2, 5_000);
    expect(body(1).status).toBe('resolved');
    expect(messages()).toContainEqual(expect.stringMatching(/^alert healthApiErrors resolved \(type=HEALTH_API\)/));
    expect(engine.active()).toEqual([]);
    expect(engine.channels()).toEqual([
      {
        name: 'ops',
        type: 'webhook',
        target: `${receiver.url}/…`,
        sent: 2,
        failed: 0,
        lastError: null,
        failing: false,
      },
    ]);
    const history = engine.store.history({ from: clock - 10 * MINUTE, to: clock + MINUTE, limit: 10 });
    expect(history.map((entry) => entry.event).reverse()).toEqual(['fired', 'notified', 'resolved', 'notified']);
    expect(JSON.stringify(log.lines())).not.toContain('s3cr3t');
  });

  it("fires the built-in serverDown 2 minutes after the pollers' sink saw a server stop answering", async () => {
    const { engine, pollSink } = await startEngine();
    await until('the first evaluation', () => engine.rules().every((rule) => rule.lastEvaluation !== null));
    pollSink.healthFailed('node1', { server_name: 'node1' });
    clock += 1_000;
    await until('pending', () => engine.active().some((record) => record.rule === 'serverDown'), 5_000);
    expect(engine.active().find((record) => record.rule === 'serverDown')?.phase).toBe('pending');
    expect(receiver.requests).toHaveLength(0);
    clock += 2 * MINUTE;
    await until('the firing notification', () => receiver.requests.length === 1, 5_000);
    const [alert] = body(0).alerts;
    expect(alert?.labels).toEqual({ alertname: 'serverDown', severity: 'critical', server: 'node1' });
    expect(alert?.generatorURL).toMatch(/^http:\/\/svc\.example\.test:3100\/.*node1/);
  });

  it('after a restart neither fires nor sends again what fired, and still resolves it', async () => {
    const first = await startEngine();
    await until('the first evaluation', () => first.engine.rules().every((rule) => rule.lastEvaluation !== null));
    first.errors.track('HEALTH_API', new Error('down'));
    clock += 5_000;
    await until('the firing notification', () => receiver.requests.length === 1, 5_000);
    await stopAll();

    clock += 5_000;
    const second = await startEngine();
    // Restored from the store: firing, before and after the evaluations of the new process.
    expect(second.engine.active().map((record) => [record.rule, record.phase])).toEqual([
      ['healthApiErrors', 'firing'],
    ]);
    for (let evaluation = 0; evaluation < 2; evaluation += 1) {
      clock += 1_000;
      await until('an evaluation', () => second.engine.rules()[0]?.lastEvaluation?.at === clock, 5_000);
    }
    expect(receiver.requests).toHaveLength(1);
    expect(second.engine.active().map((record) => record.phase)).toEqual(['firing']);
    const fired = second.engine.store
      .history({ from: clock - 10 * MINUTE, to: clock + MINUTE, limit: 20 })
      .filter((entry) => entry.event === 'fired');
    expect(fired).toHaveLength(1);

    // Once its window is covered by the new process's samples, the alert resolves and that is told.
    clock += MINUTE + 5_000;
    await until('the resolved notification', () => receiver.requests.length === 2, 5_000);
    expect(body(1).status).toBe('resolved');
  });

  it('records a silence once for an alert it still covers across a restart, and sends nothing', async () => {
    const first = await startEngine();
    await until('the first evaluation', () => first.engine.rules().every((rule) => rule.lastEvaluation !== null));
    const silence = first.engine.store.addSilence({
      rule: 'healthApiErrors',
      matchers: {},
      startsAt: clock - 1_000,
      endsAt: clock + 10 * MINUTE,
      createdBy: 'ops',
      comment: 'maintenance',
    });
    first.errors.track('HEALTH_API', new Error('down'));
    clock += 5_000;
    const silencedRows = (engine: typeof first.engine) =>
      engine.store
        .history({ from: clock - 10 * MINUTE, to: clock + MINUTE, limit: 50 })
        .filter((entry) => entry.event === 'silenced');
    await until('the silenced row', () => silencedRows(first.engine).length === 1, 5_000);
    await stopAll();

    clock += 5_000;
    const second = await startEngine();
    for (let evaluation = 0; evaluation < 2; evaluation += 1) {
      clock += 1_000;
      await until('an evaluation', () => second.engine.rules()[0]?.lastEvaluation?.at === clock, 5_000);
    }
    expect(second.engine.active().map((record) => record.phase)).toEqual(['firing']);
    expect(silencedRows(second.engine).map((entry) => entry.detail)).toEqual([silence.id]);
    expect(receiver.requests).toHaveLength(0);
  });

  it("publishes to an mqtt channel through the process's MQTT client, which it does not start or stop", async () => {
    // The rig's writer stands for the process's client (boot.ts processMqttWriter), connected before the engine starts.
    const rig = await startMqttRig();
    try {
      const svc = config(
        [`  mqttConfig: {enable: true, brokerHost: ${LOOPBACK}, brokerPort: ${rig.broker.port}}`],
        ['      - {name: broker, type: mqtt, topic: svc/alerts/engine}'],
      );
      const { engine, errors, components } = await startEngine(svc, undefined, rig.writer);
      expect(components.map((component) => component.name)).toEqual(['alert engine']);
      await until('the first evaluation', () => engine.rules().every((rule) => rule.lastEvaluation !== null));
      errors.track('HEALTH_API', new Error('down'));
      clock += 5_000;
      const published = () => rig.received.filter((message) => message.topic === 'svc/alerts/engine');
      await until('the alert on the topic', () => published().length > 0, 30_000);
      expect(JSON.parse(published()[0]?.payload ?? 'null')).toMatchObject({
        version: '4',
        receiver: 'broker',
        status: 'firing',
        alerts: [{ labels: { alertname: 'healthApiErrors', type: 'HEALTH_API' } }],
      });
      expect(engine.channels()[0]).toMatchObject({ name: 'broker', type: 'mqtt', sent: 1, failed: 0 });
      // The engine stopped, the process's client still publishes.
      await stopAll();
      expect(rig.writer.connected).toBe(true);
    } finally {
      await stopAll();
      await rig.stop();
    }
  });

  it('logs a store failure once, tracks it, and goes on evaluating and sending', async () => {
    const { engine, errors } = await startEngine();
    await until('the first evaluation', () => engine.rules().every((rule) => rule.lastEvaluation !== null));
    // Another connection breaks the file's alert tables under the engine.
    const other = new DatabaseSync(join(dir, 'svc.db'));
    other.exec('DROP TABLE alert_state');
    other.close();
    errors.track('HEALTH_API', new Error('down'));
    clock += 5_000;
    await until('the firing notification', () => receiver.requests.length === 1, 5_000);
    clock += 1_000;
    await until(
      'a second failing evaluation',
      () => tracked.filter((error) => error.type === 'STORE_WRITE').length >= 2,
      5_000,
    );
    const failures = messages().filter((message) => message.startsWith('alerts: the store failed'));
    expect(failures).toHaveLength(1);
    expect(tracked.find((error) => error.type === 'STORE_WRITE')?.module).toBe('ALERTS');
    expect(engine.active().map((record) => record.rule)).toEqual(['healthApiErrors']);
  });

  it('says at start that firing alerts are not sent when no channel is set, and registers itself for the page and metrics', async () => {
    const { engine, observed } = await startEngine(config([], []));
    expect(messages()).toContainEqual(
      expect.stringMatching(
        /^alerts: \d+ rules \(\d+ built in\), no channel: firing alerts show on \/alerts and the metrics endpoint but are not sent$/,
      ),
    );
    expect(observed.alerts).toBe(engine);
    expect(engine.channels()).toEqual([]);
    expect(engine.rules().map((rule) => rule.name)).toContain('serverDown');
  });

  it('shows on the metrics endpoint every rule at 0 firing and every channel at 0 sent and failed, then counts them', async () => {
    receiver.setFallback(404);
    const port = await freePort();
    const { engine, observed, errors } = await startEngine(config(endpointLines(port)));
    const endpoint = metricsEndpoint({ config: config(endpointLines(port)), logger: log.logger, errors }, observed);
    if (endpoint === null) throw new Error('the metrics endpoint is on');
    await endpoint.component.start();
    started.push(endpoint.component);
    const url = `http://${LOOPBACK}:${port}/metrics`;
    let { metrics } = await scrape(url);
    const firing = metrics
      .series('svc_alerts_firing')
      .map((sample) => `${sample.labels.rule} ${sample.labels.severity} ${sample.value}`);
    expect(firing).toContain('healthApiErrors warning 0');
    expect(firing).toContain('serverDown critical 0');
    expect(firing).toContain('clientCertificateExpiring warning 0');
    expect(firing).toContain('clientCertificateExpiring critical 0');
    expect(firing).toHaveLength(engine.rules().length);
    expect(metrics.value('svc_alert_notifications_total', { channel: 'ops', outcome: 'sent' })).toBe(0);
    expect(metrics.value('svc_alert_notifications_total', { channel: 'ops', outcome: 'failed' })).toBe(0);
    expect(metrics.type.get('svc_alert_notifications_total')).toBe('counter');

    await until('the first evaluation', () => engine.rules().every((rule) => rule.lastEvaluation !== null));
    errors.track('HEALTH_API', new Error('down'));
    clock += 5_000;
    await until('the failed notification', () => engine.channels()[0]?.failed === 1, 5_000);
    ({ metrics } = await scrape(url));
    expect(metrics.value('svc_alerts_firing', { rule: 'healthApiErrors', severity: 'warning' })).toBe(1);
    expect(metrics.value('svc_alert_notifications_total', { channel: 'ops', outcome: 'failed' })).toBe(1);
    expect(metrics.value('svc_alert_notifications_total', { channel: 'ops', outcome: 'sent' })).toBe(0);
  });

  it('is not built, saying why, when alerts are off or the store is off', () => {
    const errors = new ErrorTracker({ enabled: true, log: log.logger });
    const ctx = (svc: ReturnType<typeof config>): AppContext => ({
      config: svc,
      configFile: 'svc.yaml',
      logger: log.logger,
      errors,
      clock: new PointClock(),
    });
    expect(alertComponents(ctx(config(['    enable: false'])), { observed: new Observed(), storeOn: true })).toBeNull();
    expect(alertComponents(ctx(config()), { observed: new Observed(), storeOn: false })).toBeNull();
    const lines = log.lines().map((line) => [line.level, String(line.msg)]);
    expect(lines).toContainEqual(['info', 'alerts: off (Svc.alerts.enable is false)']);
    expect(lines).toContainEqual(['warn', expect.stringContaining('Svc.store.enable is false')]);
  });
});

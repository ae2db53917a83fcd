/**
 * The issue's end-to-end path for alerts, all real: the platform simulator (three servers over mutual
 * TLS, polled every second) → `svc local` (the built CLI as a child process) with the embedded store →
 * the built-in `serverDown` rule → five channels with real receivers: a recording HTTP server for the
 * webhook (Alertmanager v4), Slack and Teams payloads, Debian's aiosmtpd for e-mail over STARTTLS with
 * credentials, and mosquitto for MQTT; plus a sixth channel whose receiver always answers 500.
 *
 * - the simulator's failure switch makes node2 stop answering: the alert fires once `for` has passed
 *   since the first failed poll, not before; every channel gets it with the server, the time, the value
 *   and the link; the failing channel's failure is counted and kept in the history;
 * - it is sent again at the repeat interval while it fires;
 * - `svc local` is restarted while it fires: it is neither fired again (one `fired` in its history, the
 *   same startsAt, no notification before the repeat is due) nor forgotten (`svc alerts list`);
 * - a silence from the CLI keeps node3's alert from every channel until it is expired;
 * - healing resolves it: the resolved notification arrives.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectAsync, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { makeCertificates, writeCertificates } from '../../edge-agent/simulate/platform/certs.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../edge-agent/simulate/platform/server.js';
import type { AlertmanagerPayload } from '../../shared/alerts/channels/webhook.js';
import type { AlertHistoryAnswer, AlertsAnswer } from '../../shared/store/api-types.js';
import { type MosquittoHandle, startMosquitto } from '../support/mosquitto.js';
import { mqttTestSettings } from '../support/mqtt-rig.js';
import { freePort, LOOPBACK, sleep } from '../support/ports.js';
import { type RecordedHttpRequest, type RecordingServer, startRecordingServer } from '../support/recording-http.js';
import { emailChannelTo, type SmtpServer, startSmtpServer } from '../support/smtp.js';
import { logLines, type SvcProcess, startSvcCommand, startSvcRunning } from '../support/svc-process.js';
import { eventually } from '../support/udp.js';

const FOR_MS = 3_000;
const REPEAT_MS = 8_000;
const SMTP_USER = 'svc-alerts';
const SMTP_PASSWORD = 'e2e-Never-Logged-7';
/** Between two reads of the rate-limited read API (300 requests a minute from one address). */
const API_POLL_MS = 500;

let dir: string;
let cwd: string;
let sim: PlatformSimulator;
let svc: SvcProcess;
let receiver: RecordingServer;
let broken: RecordingServer;
let smtp: SmtpServer;
let broker: MosquittoHandle;
let subscriber: MqttClient;
const mqttMessages: { at: number; payload: unknown }[] = [];
let base: string;
let metricsUrl: string;

const startLocal = (): Promise<SvcProcess> => startSvcRunning(cwd, 'local');

/** Runs `svc <args> --config svc.yaml` in the service's folder to its end. */
async function runSvcCommand(args: readonly string[]): Promise<{ code: number | null; stdout: string }> {
  const run = startSvcCommand(cwd, [...args, '--config', 'svc.yaml']);
  const code = await run.exited;
  return { code, stdout: run.output() };
}

async function stopLocal(): Promise<void> {
  svc.child.kill('SIGTERM');
  await eventually(() => svc.child.exitCode !== null, 20_000, 'svc local stopped');
}

async function alerts(): Promise<AlertsAnswer> {
  const res = await fetch(`${base}/api/v1/alerts`);
  if (res.status !== 200) throw new Error(`alerts: ${res.status} ${await res.text()}`);
  return (await res.json()) as AlertsAnswer;
}

async function history(rule: string): Promise<AlertHistoryAnswer['entries']> {
  const from = new Date(Date.now() - 3_600_000).toISOString();
  const res = await fetch(`${base}/api/v1/alerts/history?rule=${rule}&from=${encodeURIComponent(from)}&limit=1000`);
  if (res.status !== 200) throw new Error(`history: ${res.status} ${await res.text()}`);
  return ((await res.json()) as AlertHistoryAnswer).entries;
}

/** The webhook payloads about serverDown on `server`, in arrival order. */
function webhooks(server: string): { at: number; payload: AlertmanagerPayload }[] {
  return receiver.requests
    .filter((r) => r.url === '/webhook')
    .map((r) => ({ at: r.at, payload: r.body as AlertmanagerPayload }))
    .filter(({ payload }) =>
      payload.alerts.some((a) => a.labels.alertname === 'serverDown' && a.labels.server === server),
    );
}

function posted(path: string, server: string): RecordedHttpRequest[] {
  return receiver.requests.filter(
    (r) => r.url === path && r.rawBody.includes('serverDown') && r.rawBody.includes(server),
  );
}

async function metric(line: string): Promise<number | undefined> {
  const text = await (await fetch(metricsUrl)).text();
  const found = text.split('\n').find((l) => l.startsWith(`${line} `));
  return found === undefined ? undefined : Number(found.slice(line.length + 1));
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'svc-alerts-e2e-'));
  const certs = writeCertificates(
    join(dir, 'smtp-certs'),
    makeCertificates(['127.0.0.1', 'localhost'], { commonName: 'SMTP e2e CA' }),
  );
  [sim, receiver, broken, smtp, broker] = await Promise.all([
    startPlatformSimulator({ servers: 3, seed: 11, certDir: join(dir, 'certs') }),
    startRecordingServer(),
    startRecordingServer(),
    startSmtpServer({
      mode: 'starttls',
      certFile: certs.serverCert,
      keyFile: certs.serverKey,
      user: SMTP_USER,
      password: SMTP_PASSWORD,
    }),
    startMosquitto(),
  ]);
  broken.setFallback(500);
  subscriber = await connectAsync(broker.url, { protocolVersion: 5 });
  subscriber.on('message', (_topic, payload) =>
    mqttMessages.push({ at: Date.now(), payload: JSON.parse(payload.toString()) }),
  );
  await subscriber.subscribeAsync('svc/alerts');

  const [webPort, metricsPort] = await Promise.all([freePort(), freePort()]);
  base = `http://${LOOPBACK}:${webPort}`;
  metricsUrl = `http://${LOOPBACK}:${metricsPort}/metrics`;
  cwd = join(dir, 'svc');
  mkdirSync(cwd);
  const config = {
    Svc: {
      uptimeMonitor: { enable: false },
      systemInfo: { enable: false },
      localQueue: { directory: 'queue' },
      store: { path: 'store/svc.db' },
      configVisualisation: { enable: true, host: LOOPBACK, port: webPort },
      metricsEndpoint: { enable: true, host: LOOPBACK, port: metricsPort },
      mqttConfig: mqttTestSettings(broker.port),
      cert: sim.config.Svc.cert,
      serversToMonitor: { ...sim.config.Svc.serversToMonitor, pollingInterval: 1_000 },
      userSessions: { ...sim.config.Svc.userSessions, enableSessionExtract: false },
      appNames: sim.config.Svc.appNames,
      alerts: {
        evaluationInterval: '1s',
        groupWait: '0',
        repeatInterval: `${REPEAT_MS / 1000}s`,
        externalUrl: 'https://svc.example.com:3100',
        builtIn: { serverDown: { for: `${FOR_MS / 1000}s` } },
        channels: [
          { name: 'hook', type: 'webhook', url: `${receiver.url}/webhook` },
          { name: 'slack', type: 'slack', url: `${receiver.url}/slack` },
          { name: 'teams', type: 'teams', url: `${receiver.url}/teams` },
          emailChannelTo(smtp, { user: SMTP_USER, password: SMTP_PASSWORD, caFile: certs.clientCertCA }, [
            'admins@example.com',
          ]),
          { name: 'bus', type: 'mqtt', topic: 'svc/alerts' },
          { name: 'broken', type: 'webhook', url: `${broken.url}/hook` },
        ],
      },
    },
  };
  writeFileSync(join(cwd, 'svc.yaml'), stringify(config));
  svc = await startLocal();
  // Every server answered once and every rule was evaluated with them up.
  await eventually(
    async () => (await alerts()).rules.every((rule) => rule.lastEvaluation !== null),
    20_000,
    'rules evaluated',
    API_POLL_MS,
  );
}, 90_000);

afterAll(async () => {
  if (svc && svc.child.exitCode === null) await stopLocal();
  await subscriber?.endAsync();
  await Promise.all([sim?.stop(), receiver?.stop(), broken?.stop(), smtp?.stop(), broker?.stop()]);
}, 60_000);

describe('alerts end to end', () => {
  let failedAt: number;
  let firstFiring: { at: number; payload: AlertmanagerPayload };

  it('fires serverDown for node2 once `for` has passed since its first failed poll, to every channel', async () => {
    expect(webhooks('node2')).toEqual([]);
    failedAt = Date.now();
    sim.fail('node2', 'http-500');
    await eventually(() => webhooks('node2').length > 0, 30_000, 'the webhook notified of node2', 200);
    firstFiring = webhooks('node2')[0] as { at: number; payload: AlertmanagerPayload };
    // Not before `for` had passed since the failure.
    expect(firstFiring.at - failedAt).toBeGreaterThanOrEqual(FOR_MS);
    const { payload } = firstFiring;
    expect(payload).toMatchObject({
      version: '4',
      status: 'firing',
      receiver: 'hook',
      externalURL: 'https://svc.example.com:3100',
    });
    const [alert] = payload.alerts;
    expect(alert).toMatchObject({
      status: 'firing',
      labels: { alertname: 'serverDown', severity: 'critical', server: 'node2' },
      endsAt: '0001-01-01T00:00:00Z',
    });
    expect(alert?.generatorURL).toMatch(/^https:\/\/svc\.example\.com:3100\/servers\?server=node2/);
    expect(alert?.annotations.summary).toContain('node2');
    // Since when: the first evaluation at which node2 was down, after the failure.
    expect(Date.parse(alert?.startsAt ?? '')).toBeGreaterThanOrEqual(failedAt - 1_000);

    // Slack, Teams, e-mail and MQTT got it too.
    await eventually(
      () => posted('/slack', 'node2').length > 0 && posted('/teams', 'node2').length > 0,
      15_000,
      'slack and teams',
    );
    const slack = posted('/slack', 'node2')[0]?.body as { text: string; blocks: unknown[] };
    expect(slack.text).toContain('serverDown');
    expect(Array.isArray(slack.blocks)).toBe(true);
    const teams = posted('/teams', 'node2')[0]?.body as {
      type: string;
      attachments: { contentType: string; content: { type: string } }[];
    };
    expect(teams.type).toBe('message');
    expect(teams.attachments[0]?.contentType).toBe('application/vnd.microsoft.card.adaptive');
    expect(teams.attachments[0]?.content.type).toBe('AdaptiveCard');
    await eventually(
      async () => (await smtp.messages()).some((m) => m.content.includes('node2')),
      15_000,
      'the e-mail',
    );
    const mail = (await smtp.messages()).find((m) => m.content.includes('node2'));
    expect(mail).toMatchObject({ tls: true, authenticated: true, rcptTos: ['admins@example.com'] });
    expect(mail?.content).toMatch(/Subject:.*serverDown/);
    await eventually(
      () => mqttMessages.some((m) => JSON.stringify(m.payload).includes('node2')),
      15_000,
      'the MQTT message',
    );
  }, 60_000);

  it('counts and records the failing channel while the others deliver', async () => {
    await eventually(
      async () => ((await metric('svc_alert_notifications_total{channel="broken",outcome="failed"}')) ?? 0) >= 1,
      30_000,
      'the broken channel counted as failed',
      API_POLL_MS,
    );
    expect(broken.requests.length).toBeGreaterThan(1); // retried before giving up
    expect(await metric('svc_alert_notifications_total{channel="hook",outcome="sent"}')).toBeGreaterThanOrEqual(1);
    expect(await metric('svc_alerts_firing{rule="serverDown",severity="critical"}')).toBe(1);
    const entries = await history('serverDown');
    expect(entries.some((e) => e.event === 'notify_failed' && e.channel === 'broken')).toBe(true);
    expect(entries.some((e) => e.event === 'notified' && e.channel === 'hook')).toBe(true);
    const answer = await alerts();
    expect(answer.channels.find((c) => c.name === 'broken')?.lastError).toMatch(/500/);
    // The URL is a secret: masked where the page shows it.
    expect(JSON.stringify(answer.channels)).not.toContain(`${broken.url}/hook`);
  }, 60_000);

  it('sends it again at the repeat interval while it fires', async () => {
    await eventually(() => webhooks('node2').length >= 2, REPEAT_MS + 10_000, 'the repeat', 200);
    const [first, second] = webhooks('node2');
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(REPEAT_MS - 1_000);
    expect(second?.payload.alerts[0]?.startsAt).toBe(first?.payload.alerts[0]?.startsAt);
  }, 60_000);

  it('neither fires again nor forgets across a restart in the middle of firing', async () => {
    // Just after a notification, so that the next one is not due for a repeat interval.
    const before = webhooks('node2').length;
    await eventually(
      () => webhooks('node2').length > before,
      REPEAT_MS + 10_000,
      'a notification to restart after',
      200,
    );
    const lastBefore = webhooks('node2').at(-1) as { at: number; payload: AlertmanagerPayload };
    await stopLocal();
    const listed = await runSvcCommand(['alerts', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/serverDown.*node2/);
    svc = await startLocal();
    const restartedAt = Date.now();
    await eventually(
      async () => (await alerts()).rules.some((r) => (r.lastEvaluation?.at ?? 0) > restartedAt + 2_000),
      20_000,
      'evaluations after the restart',
      API_POLL_MS,
    );
    const firing = (await alerts()).alerts.find((a) => a.rule === 'serverDown' && a.labels.server === 'node2');
    expect(firing?.phase).toBe('firing');
    expect(firing?.activeSince).toBeLessThan(restartedAt);
    // No notification before the repeat was due, and the same alert (same startsAt) after.
    const after = webhooks('node2').filter((w) => w.at > lastBefore.at);
    for (const w of after) expect(w.at - lastBefore.at).toBeGreaterThanOrEqual(REPEAT_MS - 1_000);
    await eventually(
      () => webhooks('node2').some((w) => w.at > lastBefore.at),
      REPEAT_MS + 10_000,
      'the repeat after the restart',
      200,
    );
    const next = webhooks('node2').find((w) => w.at > lastBefore.at);
    expect(next?.payload.alerts[0]?.startsAt).toBe(firstFiring.payload.alerts[0]?.startsAt);
    expect(
      (await history('serverDown')).filter((e) => e.event === 'fired' && e.labels.server === 'node2'),
    ).toHaveLength(1);
  }, 90_000);

  it('keeps a silenced alert from every channel until the silence is expired (CLI)', async () => {
    const silenced = await runSvcCommand([
      'alerts',
      'silence',
      '--rule',
      'serverDown',
      '--label',
      'server=node3',
      '--for',
      '1h',
      '--comment',
      'maintenance',
    ]);
    expect(silenced.code).toBe(0);
    const id = /\b([0-9a-f]{8})\b/.exec(silenced.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    sim.fail('node3', 'timeout');
    await eventually(
      async () =>
        (await alerts()).alerts.some((a) => a.labels.server === 'node3' && a.phase === 'firing' && a.silencedBy === id),
      30_000,
      'node3 firing and silenced',
      API_POLL_MS,
    );
    await sleep(3_000);
    expect(webhooks('node3')).toEqual([]);
    expect(posted('/slack', 'node3')).toEqual([]);
    const listed = await runSvcCommand(['alerts', 'list']);
    expect(listed.stdout).toContain(id);
    const expired = await runSvcCommand(['alerts', 'expire', id]);
    expect(expired.code).toBe(0);
    await eventually(() => webhooks('node3').length > 0, 15_000, 'node3 notified once the silence ended', 200);
    expect((await history('serverDown')).some((e) => e.event === 'silenced' && e.labels.server === 'node3')).toBe(true);
  }, 90_000);

  it('resolves when the servers answer again, within an evaluation of the first answer', async () => {
    const healedAt = Date.now();
    sim.heal();
    await eventually(
      () =>
        webhooks('node2').some((w) =>
          w.payload.alerts.some((a) => a.labels.server === 'node2' && a.status === 'resolved'),
        ),
      20_000,
      'the resolved notification of node2',
      200,
    ).catch((err: unknown) => {
      // What Svc logged about node2 and its alerts since the heal says where it stopped.
      const lines = logLines(svc.output()).filter((line) => line.time >= new Date(healedAt).toISOString());
      throw new Error(`${String(err)}\n${lines.map((line) => `${line.time} ${line.msg}`).join('\n')}`);
    });
    const resolved = webhooks('node2').find((w) => w.payload.alerts.some((a) => a.status === 'resolved'));
    const alert = resolved?.payload.alerts.find((a) => a.labels.server === 'node2');
    expect(alert?.endsAt).not.toBe('0001-01-01T00:00:00Z');
    await eventually(async () => (await alerts()).alerts.length === 0, 20_000, 'nothing firing', API_POLL_MS);
    expect(await metric('svc_alerts_firing{rule="serverDown",severity="critical"}')).toBe(0);
    const events = (await history('serverDown')).filter((e) => e.labels.server === 'node2').map((e) => e.event);
    expect(events).toEqual(expect.arrayContaining(['fired', 'notified', 'notify_failed', 'resolved']));
  }, 60_000);

  it('publishes the health samples and the alerts over one MQTT connection, which no other pushed off', () => {
    // Health goes to MQTT too (mqttConfig is on): the MQTT destination and the mqtt channel share
    // the process's one client. Two clients with one client id push each other off the broker.
    const lines = logLines(svc.output()).map((line) => line.msg);
    expect(lines.filter((msg) => /^connected to the MQTT broker/.test(msg))).toHaveLength(1);
    expect(lines.filter((msg) => /MQTT connection (lost|error)|reconnected to the MQTT broker/.test(msg))).toEqual([]);
  });
});

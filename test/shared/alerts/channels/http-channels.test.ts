/**
 * The webhook, Slack and Teams channels against real local HTTP receivers (test/support/recording-http.ts:
 * no local stand-in of Slack or Teams exists, so the bodies are checked against their documented
 * shapes here), and the retries of a failing channel: the receiver down, a 500, a 429 with Retry-After.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../../../shared/alerts/channels/http.js';
import type { Channel } from '../../../../shared/alerts/channels/port.js';
import { ALERT_CHANNEL_MODULE, RetryingChannel, type RetryOptions } from '../../../../shared/alerts/channels/retry.js';
import { slackChannel } from '../../../../shared/alerts/channels/slack.js';
import { ADAPTIVE_CARD_VERSION, teamsChannel } from '../../../../shared/alerts/channels/teams.js';
import { webhookChannel, ZERO_TIME } from '../../../../shared/alerts/channels/webhook.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { recordingLog } from '../../../support/log.js';
import { freePort } from '../../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../../support/recording-http.js';
import { serverDownNotification } from '../fixtures.js';

/** The key part of the URLs, which must never reach a log line or an error. */
const SECRET = 'T0123/B0456/s3cr3tK3yNeverLogged';

let receiver: RecordingServer;

beforeAll(async () => {
  receiver = await startRecordingServer();
});
afterAll(async () => {
  await receiver.stop();
});
beforeEach(() => {
  receiver.reset();
});

/** `channel` behind a RetryingChannel with short waits, a log and an error tracker that record. */
function retrying(channel: Channel, overrides: RetryOptions = {}) {
  const { log, lines } = recordingLog();
  const tracked: TrackedError[] = [];
  const errors = new ErrorTracker({ enabled: true, log, sink: (error) => tracked.push(error) });
  const options = { attempts: 3, baseDelayMs: 20, ...overrides };
  return { channel: new RetryingChannel(channel, { log, errors }, options), lines, tracked, options };
}

/** The JSON object the receiver got in request `index`. */
function bodyOf(index = 0): Record<string, unknown> {
  const body = receiver.requests[index]?.body;
  if (!isRecord(body)) throw new Error(`request ${index} has no JSON object body`);
  return body;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

describe('webhook channel', () => {
  it("POSTs Alertmanager's webhook payload, version 4, with every field of the documented shape", async () => {
    const { channel } = retrying(webhookChannel('am', `${receiver.url}/hook/${SECRET}`));
    const notification = serverDownNotification('am', ['sense-central', 'sense-rim']);
    expect(await channel.deliver(notification)).toEqual({ delivered: true, attempts: 1 });

    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0];
    expect(request?.method).toBe('POST');
    expect(request?.headers['content-type']).toBe('application/json');
    const body = request?.body;
    if (!isRecord(body)) throw new Error('the body is not a JSON object');
    expect(Object.keys(body).sort()).toEqual(
      [
        'version',
        'groupKey',
        'truncatedAlerts',
        'status',
        'receiver',
        'groupLabels',
        'commonLabels',
        'commonAnnotations',
        'externalURL',
        'alerts',
      ].sort(),
    );
    expect(body.version).toBe('4');
    expect(body.groupKey).toBe('{}:{alertname="serverDown"}');
    expect(body.truncatedAlerts).toBe(0);
    expect(body.status).toBe('firing');
    expect(body.receiver).toBe('am');
    expect(body.groupLabels).toEqual({ alertname: 'serverDown' });
    // `server` differs between the two alerts, so it is not common.
    expect(body.commonLabels).toEqual({ alertname: 'serverDown', severity: 'critical' });
    expect(body.commonAnnotations).toEqual({ description: 'The health API is not answering.', value: '1' });
    expect(body.externalURL).toBe('http://svc.example.test:3100');
    const alerts = body.alerts;
    if (!Array.isArray(alerts)) throw new Error('alerts is not an array');
    expect(alerts).toHaveLength(2);
    const [first] = alerts;
    if (!isRecord(first)) throw new Error('an alert is not an object');
    expect(Object.keys(first).sort()).toEqual(
      ['status', 'labels', 'annotations', 'startsAt', 'endsAt', 'generatorURL', 'fingerprint'].sort(),
    );
    expect(first.status).toBe('firing');
    expect(first.labels).toEqual({ alertname: 'serverDown', severity: 'critical', server: 'sense-central' });
    expect(first.annotations).toEqual({
      summary: 'sense-central has not answered for 2 minutes',
      description: 'The health API is not answering.',
      value: '1',
    });
    expect(typeof first.startsAt).toBe('string');
    expect(new Date(String(first.startsAt)).toISOString()).toBe(first.startsAt);
    expect(first.endsAt).toBe(ZERO_TIME);
    expect(first.generatorURL).toBe('http://svc.example.test:3100/alerts#serverDown-sense-central');
    expect(first.fingerprint).toBe('fp-sense-central');
  });

  it('says resolved, with the end time, when the alerts cleared', async () => {
    const { channel } = retrying(webhookChannel('am', `${receiver.url}/hook`));
    await channel.deliver(serverDownNotification('am', ['sense-central'], 'resolved'));
    const body = bodyOf();
    if (!Array.isArray(body.alerts) || !isRecord(body.alerts[0])) throw new Error('no alerts');
    expect(body.status).toBe('resolved');
    expect(body.alerts[0].status).toBe('resolved');
    expect(Date.parse(String(body.alerts[0].endsAt))).toBeGreaterThan(Date.parse(String(body.alerts[0].startsAt)));
  });
});

describe('slack channel', () => {
  it('sends text and blocks naming the rule, the server, since when, the value and the link', async () => {
    const { channel } = retrying(slackChannel('ops', `${receiver.url}/services/${SECRET}`));
    const notification = serverDownNotification('ops');
    await channel.deliver(notification);
    const body = bodyOf();
    expect(typeof body.text).toBe('string');
    const text = String(body.text);
    const alert = notification.alerts[0];
    for (const needle of ['serverDown', 'sense-central', alert?.startsAt.toISOString(), 'Value: 1', alert?.link])
      expect(text).toContain(needle);
    expect(Array.isArray(body.blocks)).toBe(true);
    const blocks = JSON.stringify(body.blocks);
    expect(blocks).toContain('"type":"header"');
    expect(blocks).toContain('sense-central');
    expect(blocks).toContain(`<${alert?.link}|Open in Svc>`);
  });

  it('says the alert is resolved and when', async () => {
    const { channel } = retrying(slackChannel('ops', `${receiver.url}/services/${SECRET}`));
    const notification = serverDownNotification('ops', ['sense-central'], 'resolved');
    await channel.deliver(notification);
    const body = bodyOf();
    expect(String(body.text)).toContain('[RESOLVED] serverDown');
    expect(String(body.text)).toContain(`Resolved: ${notification.alerts[0]?.endsAt?.toISOString()}`);
  });
});

describe('teams channel', () => {
  it('sends a message with one Adaptive Card attachment naming rule, server, value and link', async () => {
    const url = `${receiver.url}/workflows/triggers/manual/paths/invoke?api-version=1&sig=${SECRET}`;
    const { channel } = retrying(teamsChannel('teams', url));
    const notification = serverDownNotification('teams');
    await channel.deliver(notification);
    const body = bodyOf();
    if (!Array.isArray(body.attachments)) throw new Error('no attachments');
    expect(body.type).toBe('message');
    expect(body.attachments).toHaveLength(1);
    const attachment = body.attachments[0];
    if (!isRecord(attachment) || !isRecord(attachment.content)) throw new Error('bad attachment');
    expect(attachment.contentType).toBe('application/vnd.microsoft.card.adaptive');
    const card = attachment.content;
    expect(card.type).toBe('AdaptiveCard');
    expect(card.$schema).toBe('http://adaptivecards.io/schemas/adaptive-card.json');
    expect(card.version).toBe(ADAPTIVE_CARD_VERSION);
    expect(Number(card.version)).toBeGreaterThanOrEqual(1.4);
    const text = JSON.stringify(card);
    const alert = notification.alerts[0];
    for (const needle of ['serverDown', 'sense-central', '"Value","value":"1"', `"url":"${alert?.link}"`])
      expect(text).toContain(needle);
  });
});

describe('a failing channel', () => {
  it('retries a 500 with back-off and delivers when the receiver recovers', async () => {
    receiver.reply(500, 500);
    const { channel, tracked, options } = retrying(webhookChannel('am', `${receiver.url}/hook`));
    expect(await channel.deliver(serverDownNotification('am'))).toEqual({ delivered: true, attempts: 3 });
    expect(receiver.requests).toHaveLength(3);
    // Doubling waits: the second gap is longer than the first base delay times two.
    const [a, b, c] = receiver.requests.map((request) => request.at);
    expect((b ?? 0) - (a ?? 0)).toBeGreaterThanOrEqual(options.baseDelayMs);
    expect((c ?? 0) - (b ?? 0)).toBeGreaterThanOrEqual(options.baseDelayMs * 2);
    expect(tracked).toHaveLength(0);
  });

  it("waits what a 429's Retry-After asks, longer than its own back-off", async () => {
    receiver.reply({ status: 429, headers: { 'retry-after': '1' } });
    const { channel } = retrying(webhookChannel('am', `${receiver.url}/hook`));
    expect((await channel.deliver(serverDownNotification('am'))).delivered).toBe(true);
    const [first, second] = receiver.requests.map((request) => request.at);
    expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('gives up after its attempts, tracks ALERT_NOTIFY, logs once per state change, never the secret', async () => {
    const downPort = await freePort();
    const url = `http://127.0.0.1:${downPort}/services/${SECRET}`;
    const { channel, lines, tracked } = retrying(slackChannel('ops', url));

    const first = await channel.deliver(serverDownNotification('ops'));
    expect(first.delivered).toBe(false);
    expect(first.attempts).toBe(3);
    expect(first.error).toContain('ECONNREFUSED');
    expect(first.error).not.toContain(SECRET);
    expect(tracked).toHaveLength(1);
    expect(tracked[0]?.type).toBe('ALERT_NOTIFY');
    expect(tracked[0]?.module).toBe(ALERT_CHANNEL_MODULE);
    expect(tracked[0]?.category).toBe('connection_refused');
    expect(channel.isFailing).toBe(true);

    // Still down: tracked again, but no second ERROR line.
    await channel.deliver(serverDownNotification('ops'));
    expect(tracked).toHaveLength(2);
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);

    const everything = JSON.stringify(lines) + JSON.stringify(tracked.map((error) => String(error.error)));
    expect(everything).not.toContain(SECRET);
    expect(everything).toContain(`http://127.0.0.1:${downPort}/…`);
  });

  it('tracks the 500s it gave up on, logs the recovery once it delivers again', async () => {
    receiver.setFallback(500);
    const { channel, lines, tracked } = retrying(teamsChannel('teams', `${receiver.url}/x?sig=${SECRET}`));
    expect((await channel.deliver(serverDownNotification('teams'))).delivered).toBe(false);
    expect(receiver.requests).toHaveLength(3);
    expect(tracked[0]?.category).toBe('http_5xx');
    receiver.setFallback(202);
    expect((await channel.deliver(serverDownNotification('teams'))).delivered).toBe(true);
    expect(channel.isFailing).toBe(false);
    expect(lines.filter((line) => line.level === 'info').map((line) => line.msg)).toEqual([
      'alert channel "teams" delivers again',
    ]);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  it('does not retry a 404 (a wrong URL will not mend)', async () => {
    receiver.reply(404);
    const { channel, tracked } = retrying(webhookChannel('am', `${receiver.url}/nowhere`));
    expect(await channel.deliver(serverDownNotification('am'))).toMatchObject({ delivered: false, attempts: 1 });
    expect(receiver.requests).toHaveLength(1);
    expect(tracked[0]?.category).toBe('not_found');
  });

  it('reads Retry-After as seconds or as an HTTP date, and ignores what is neither', () => {
    const now = Date.now();
    expect(retryAfterMs('3', now)).toBe(3_000);
    expect(retryAfterMs(new Date(now + 5_000).toUTCString(), now)).toBeGreaterThan(3_000);
    expect(retryAfterMs('soon', now)).toBeUndefined();
    expect(retryAfterMs(null, now)).toBeUndefined();
  });
});

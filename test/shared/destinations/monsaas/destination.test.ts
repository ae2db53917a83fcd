/**
 * MonSaasDestination against a recording HTTP server standing in for the monitoring SaaS:
 * one POST per event to each configured account with the §8.3 body; a 500 that outlasts the retries
 * makes the event come back; a redelivery goes only to the accounts that did not take it; log events
 * monsaas does not take and kinds it does not serve are neither sent nor failed.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../../shared/config/load.js';
import type { SvcConfig } from '../../../../shared/config/schema.js';
import { MonSaasWriter } from '../../../../shared/destinations/monsaas/client.js';
import {
  LOG_EVENTS_MONSAAS_MODULE,
  MonSaasDestination,
  USER_EVENTS_MONSAAS_MODULE,
} from '../../../../shared/destinations/monsaas/destination.js';
import {
  type LogMonSaasOptions,
  logMonSaasEvent,
  type UserMonSaasOptions,
  userMonSaasEvent,
} from '../../../../shared/destinations/monsaas/mappers.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { silentLog } from '../../../support/log.js';
import { type RecordingServer, startRecordingServer } from '../../../support/recording-http.js';
import {
  ENGINE,
  logQueued,
  OPEN_CONNECTION,
  PROXY,
  QIX_PERF_USER,
  START_SESSION,
  userQueued,
} from '../../platform/fixtures.js';
import { auditQueued, EVENT_COUNT, pointsQueued } from '../../platform/queued.js';

const quiet = silentLog;
const CREDENTIALS: SvcConfig['thirdPartyToolsCredentials']['monsaas'] = [
  { accountName: 'ops', insertApiKey: 'ops-key-0123456789', accountId: '111' },
  { accountName: 'dev', insertApiKey: 'dev-key-0123456789', accountId: '222' },
];

function settings(url: string): SvcConfig['monsaas'] {
  const yaml = [
    'Svc:',
    '  monsaas:',
    '    enable: true',
    '    metric:',
    `      url: ${url}/metric/v1`,
    '    event:',
    `      url: ${url}/events-api`,
    '',
  ].join('\n');
  return parseConfigText(yaml, 'test.yaml', {}).config.monsaas;
}

const USER_OPTIONS: UserMonSaasOptions = {
  tags: [{ name: 'env', value: 'prod' }],
  staticAttributes: [{ name: 'team', value: 'platform' }],
  svcVersion: '15.0.0',
  scrambleKey: null,
};
const source = (enable: boolean) => ({ enable, logLevel: { error: true, warn: true } });
const LOG_OPTIONS: LogMonSaasOptions = {
  tags: [],
  staticAttributes: [],
  svcVersion: null,
  sources: { engine: source(false), proxy: source(true), repository: source(true), scheduler: source(true) },
};

describe('MonSaasDestination', () => {
  let server: RecordingServer;
  const tracked: TrackedError[] = [];
  let writer: MonSaasWriter;
  let noRetries: MonSaasWriter;

  beforeAll(async () => {
    server = await startRecordingServer();
    const errors = new ErrorTracker({ enabled: true, log: silentLog, sink: (e) => tracked.push(e) });
    writer = new MonSaasWriter({
      settings: settings(server.url),
      credentials: CREDENTIALS,
      log: quiet,
      errors,
      retryDelaysMs: [10],
    });
    noRetries = new MonSaasWriter({
      settings: settings(server.url),
      credentials: CREDENTIALS,
      log: quiet,
      errors,
      retryDelaysMs: [],
    });
  });
  beforeEach(() => {
    server.reset();
    tracked.length = 0;
  });
  afterAll(() => server.stop());

  it('posts one §8.3 event per event to the account, and ignores what monsaas does not take', async () => {
    const destination = new MonSaasDestination({
      writer,
      userEvents: { accounts: ['ops'], options: USER_OPTIONS },
      logEvents: { accounts: ['ops'], options: LOG_OPTIONS },
      log: quiet,
    });
    const user = userQueued(OPEN_CONNECTION, '1710234000000000002');
    const proxy = logQueued(PROXY, '1710233101876000003');
    const events = [
      user,
      proxy,
      logQueued(QIX_PERF_USER),
      logQueued(ENGINE),
      pointsQueued('EVENT_COUNTS', [EVENT_COUNT]),
      auditQueued(),
    ];
    expect(await destination.write(events)).toEqual(new Set());

    expect(server.requests).toHaveLength(2);
    for (const r of server.requests) {
      expect(r.method).toBe('POST');
      expect(r.url).toBe('/events-api/v1/accounts/111/events');
      expect(r.headers['api-key']).toBe('ops-key-0123456789');
      expect(r.headers['content-type']).toBe('application/json');
    }
    const bodies = server.requests.map((r) => r.rawBody).sort();
    expect(bodies).toEqual(
      [
        JSON.stringify(userMonSaasEvent(user, USER_OPTIONS)),
        JSON.stringify(logMonSaasEvent(proxy, LOG_OPTIONS)),
      ].sort(),
    );
    const userBody = server.requests
      .map((r) => r.body as Record<string, unknown>)
      .find((b) => b['eventType'] === 'qs_userEvent');
    expect(userBody).toMatchObject({
      timestamp: 1710234000000,
      qs_userId: 'goran',
      env: 'prod',
      team: 'platform',
      svcVersion: '15.0.0',
    });
  });

  it('a 500 that outlasts the retries makes the event come back as failed; the redelivery is sent', async () => {
    const destination = new MonSaasDestination({
      writer,
      userEvents: { accounts: ['ops'], options: USER_OPTIONS },
      logEvents: null,
      log: quiet,
    });
    const q = userQueued(START_SESSION);
    server.reply(500, 500);
    expect(await destination.write([q, logQueued(PROXY)])).toEqual(new Set([q.id]));
    expect(server.requests).toHaveLength(2);
    expect(tracked.map((t) => [t.type, t.module])).toEqual([['MONSAAS_POST', USER_EVENTS_MONSAAS_MODULE]]);

    expect(await destination.write([q])).toEqual(new Set());
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]?.rawBody).toBe(server.requests[0]?.rawBody);
  });

  it('a transient 503 is retried by the writer and the event counts as written', async () => {
    const destination = new MonSaasDestination({
      writer,
      userEvents: null,
      logEvents: { accounts: ['ops'], options: LOG_OPTIONS },
      log: quiet,
    });
    server.reply(503);
    expect(await destination.write([logQueued(PROXY)])).toEqual(new Set());
    expect(server.requests.map((r) => r.url)).toEqual([
      '/events-api/v1/accounts/111/events',
      '/events-api/v1/accounts/111/events',
    ]);
  });

  it('sends a redelivered event only to the accounts that did not take it', async () => {
    const destination = new MonSaasDestination({
      writer: noRetries,
      userEvents: null,
      logEvents: { accounts: ['ops', 'dev'], options: LOG_OPTIONS },
      log: quiet,
    });
    const q = logQueued(PROXY);
    server.reply(500);
    expect(await destination.write([q])).toEqual(new Set([q.id]));
    expect(server.requests).toHaveLength(2);
    const failedUrl = server.requests[0]?.url;
    expect(tracked.map((t) => t.module)).toEqual([LOG_EVENTS_MONSAAS_MODULE]);

    expect(await destination.write([q])).toEqual(new Set());
    expect(server.requests).toHaveLength(3);
    expect(server.requests[2]?.url).toBe(failedUrl);
    // A further delivery (e.g. after a crash between write and acknowledgement) sends to both again.
    expect(await destination.write([q])).toEqual(new Set());
    expect(server.requests).toHaveLength(5);
  });

  it('scrambles the user names with the key', async () => {
    const destination = new MonSaasDestination({
      writer,
      userEvents: {
        accounts: ['dev'],
        options: { ...USER_OPTIONS, scrambleKey: 'example-secret-change-me-0123456789' },
      },
      logEvents: null,
      log: quiet,
    });
    expect(await destination.write([userQueued(START_SESSION)])).toEqual(new Set());
    expect(server.requests[0]?.url).toBe('/events-api/v1/accounts/222/events');
    expect(server.requests[0]?.body).toMatchObject({
      qs_userFull: '74ca917114fe1672fe7e0981cd8992af',
      qs_userDirectory: 'df628e14b3ffd2f5f455504fd02e5138',
      qs_userId: '624d96cc0450a23a8f654d068720d4c8',
    });
  });

  it('an account without credentials is not retried (a config error, not a passing outage)', async () => {
    const destination = new MonSaasDestination({
      writer,
      userEvents: { accounts: ['nobody', 'ops'], options: USER_OPTIONS },
      logEvents: null,
      log: quiet,
    });
    expect(await destination.write([userQueued(START_SESSION)])).toEqual(new Set());
    expect(server.requests).toHaveLength(1);
  });
});

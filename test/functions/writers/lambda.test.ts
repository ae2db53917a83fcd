/**
 * The writer Lambda entries (functions/writers/<destination>.ts, built into dist/) run as AWS runs
 * them: a fresh Node process with its bundled config and environment, the handler called with SQS
 * events, its logs on stdout. The tsdb writer takes every kind the config routes to the tsdb (audit,
 * user, log, points) and writes them to a real influxd; the monsaas writer takes the platform kinds
 * routed to monsaas and POSTs them to a recording HTTP server standing in for the SaaS (no local
 * stand-in of the service exists, test/support/recording-http.ts). An event of a kind a writer does
 * not take fails its message (batch item failure) and is logged at ERROR, never acknowledged unwritten.
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { healthQueued } from '../../shared/destinations/polled.js';
import { logQueued, PROXY, START_SESSION, userQueued } from '../../shared/platform/fixtures.js';
import { EVENT_COUNT, pointsQueued } from '../../shared/platform/queued.js';
import { auditQueued } from '../../support/audit.js';
import { REPO_ROOT } from '../../support/build.js';
import { bundledConfig, bundledConfigFiles } from '../../support/config-document.js';
import { type InfluxdHandle, query, startInfluxd } from '../../support/influxd.js';
import { trackChild } from '../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';
import { packedRecord } from '../../support/sqs-record.js';

const DB = 'writer_lambda';

const record = (messageId: string, events: QueuedEvent[]): SQSRecord => packedRecord(messageId, events);

/**
 * Runs the built Lambda entry in a child process and calls its handler with each event in turn: the
 * answers come back on stderr (one line), the log lines on stdout (the logger writes to fd 1).
 */
async function invoke(
  destination: 'tsdb' | 'monsaas',
  configFile: string,
  events: SQSEvent[],
  env: Record<string, string> = {},
): Promise<{ responses: SQSBatchResponse[]; log: Record<string, unknown>[]; code: number | null; stderr: string }> {
  const entry = join(REPO_ROOT, `dist/functions/writers/${destination}.js`);
  const script = `const { handler } = await import(${JSON.stringify(entry)});
const out = [];
for (const event of JSON.parse(process.env.TEST_EVENTS)) out.push(await handler(event));
process.stderr.write('RESPONSES ' + JSON.stringify(out) + '\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    // No S3 is reached (no claim checks in these events); the client only needs a region to be made.
    env: {
      PATH: process.env.PATH ?? '',
      SVC_CONFIG: configFile,
      SVC_DESTINATION: destination,
      SVC_CLAIM_CHECK_BUCKET: 'claims',
      AWS_REGION: 'us-east-1',
      TEST_EVENTS: JSON.stringify(events),
      ...env,
    },
  });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const line = stderr.split('\n').find((l) => l.startsWith('RESPONSES '));
  if (events.length > 0 && (code !== 0 || line === undefined))
    throw new Error(`writer Lambda exited with ${code}:\n${stderr}\n${stdout}`);
  const responses = line === undefined ? [] : (JSON.parse(line.slice('RESPONSES '.length)) as SQSBatchResponse[]);
  const log = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { responses, log, code, stderr };
}

/** The bundled config document synth makes of these `Svc:` lines. */
function writeConfig(lines: string[]): string {
  return bundledConfig(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'));
}

async function measurements(influx: InfluxdHandle): Promise<string[]> {
  const result = (await query(influx, 'SHOW MEASUREMENTS', DB)) as { results: { series?: { values: string[][] }[] }[] };
  return (result.results[0]?.series?.[0]?.values.flat() ?? []).sort();
}

describe('writer Lambda (tsdb)', () => {
  let influx: InfluxdHandle;
  let configFile: string;
  beforeAll(async () => {
    influx = await startInfluxd();
    configFile = bundledConfig(
      [
        'Svc:',
        '  tsdbConfig:',
        '    enable: true',
        '    host: 127.0.0.1',
        `    port: ${influx.port}`,
        '    v1Config:',
        `      dbName: ${DB}`,
        '      retentionPolicy:',
        '        duration: 5000w',
        '  auditEvents:',
        '    enable: true',
        '    destination:',
        '      enable: true',
        '      type: tsdb',
        '  userEvents:',
        '    enable: true',
        '    sendToTsdb:',
        '      enable: true',
        '  logEvents:',
        '    source:',
        '      proxy:',
        '        enable: true',
        '    sendToTsdb:',
        '      enable: true',
        '  platformEvents:',
        '    tsdb:',
        '      enable: true',
        '    eventCount:',
        '      enable: true',
        '',
      ].join('\n'),
    );
  });
  afterAll(() => influx?.stop());

  it('writes audit, user, log and points events with one destination, and fails a kind it does not take', async () => {
    const audit = { ...auditQueued(), timeNs: '1710233120000000001' };
    const user = userQueued(START_SESSION, '1710234000000000041');
    const log = logQueued(PROXY, '1710233101876000042');
    const points = pointsQueued('EVENT_COUNTS', [EVENT_COUNT]);
    // No server is monitored in this config, so health samples go nowhere: not the tsdb's kind.
    const health = healthQueued();
    const user2 = userQueued(START_SESSION, '1710234000000000043');

    const { responses, log: lines } = await invoke('tsdb', configFile, [
      {
        Records: [
          record('m-audit', [audit]),
          record('m-user', [user]),
          record('m-log', [log]),
          record('m-points', [points]),
        ],
      },
      { Records: [record('m-health', [health]), record('m-user2', [user2])] },
    ]);

    expect(responses).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [{ itemIdentifier: 'm-health' }] }]);
    expect(await measurements(influx)).toEqual(['audit_events', 'event_count', 'log_event', 'user_events']);
    const users = (await query(influx, 'SELECT count(userId_field) FROM user_events', DB)) as {
      results: { series?: { values: unknown[][] }[] }[];
    };
    expect(users.results[0]?.series?.[0]?.values[0]?.[1]).toBe(2);

    const refused = lines.filter((l) => l.eventId === health.id);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 'error', destination: 'tsdb', kind: 'health', messageId: 'm-health' });
    expect(refused[0]?.msg).toContain('does not take that kind');
  });
});

describe('writer Lambda (monsaas)', () => {
  let saas: RecordingServer;
  let configFile: string;
  beforeAll(async () => {
    saas = await startRecordingServer();
    configFile = writeConfig([
      'monsaas:',
      '  enable: true',
      '  metric:',
      `    url: ${saas.url}/metric/v1`,
      '  event:',
      `    url: ${saas.url}`,
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
      'userEvents:',
      '  enable: true',
      '  sendToMonSaas:',
      '    enable: true',
      '    destinationAccount: [ops]',
      'logEvents:',
      '  source:',
      '    proxy:',
      '      enable: true',
      '  sendToMonSaas:',
      '    enable: true',
      '    destinationAccount: [ops]',
      '    source:',
      '      proxy:',
      '        enable: true',
    ]);
  });
  afterAll(() => saas?.stop());

  it('POSTs the user and log events routed to monsaas, and fails a kind it does not take', async () => {
    const user = userQueued(START_SESSION, '1710234000000000051');
    const log = { ...logQueued(PROXY, '1710233101876000052') };
    // monsaas never takes audit events, and this config sends no points anywhere.
    const audit = { ...auditQueued(), timeNs: '1710233120000000053' };
    const points = pointsQueued('EVENT_COUNTS', [EVENT_COUNT]);

    const { responses, log: lines } = await invoke('monsaas', configFile, [
      { Records: [record('m-user', [user]), record('m-log', [log])] },
      { Records: [record('m-audit', [audit]), record('m-points', [points])] },
    ]);

    expect(responses).toEqual([
      { batchItemFailures: [] },
      { batchItemFailures: [{ itemIdentifier: 'm-audit' }, { itemIdentifier: 'm-points' }] },
    ]);
    expect(saas.requests.map((r) => [r.method, r.url, r.headers['api-key']])).toEqual([
      ['POST', '/v1/accounts/111/events', 'key-1'],
      ['POST', '/v1/accounts/111/events', 'key-1'],
    ]);
    expect(saas.requests.map((r) => (r.body as { eventType?: string }).eventType).sort()).toEqual([
      'qs_logEvent',
      'qs_userEvent',
    ]);
    const refused = lines.filter((l) => l.eventId === audit.id || l.eventId === points.id);
    expect(refused.map((l) => [l.level, l.destination, l.kind])).toEqual([
      ['error', 'monsaas', 'audit'],
      ['error', 'monsaas', 'points'],
    ]);
  });

  it('refuses to start when SVC_DESTINATION names another destination than its bundle', async () => {
    const { code, stderr } = await invoke('monsaas', configFile, [], { SVC_DESTINATION: 'tsdb' });
    expect(code).not.toBe(0);
    expect(stderr).toContain("SVC_DESTINATION=tsdb, but this is the monsaas writer's bundle");
  });
});

describe('writer Lambda cold start with ${env:…} in the bundled config', () => {
  /** The tsdb host from a variable the stack's functions have; the document is made as synth makes it. */
  const files = () =>
    bundledConfigFiles(
      [
        'Svc:',
        '  tsdbConfig:',
        '    enable: true',
        '    host: ${env:AWS_LAMBDA_FUNCTION_NAME}',
        '  auditEvents:',
        '    enable: true',
        '    destination:',
        '      enable: true',
        '      type: tsdb',
        '',
      ].join('\n'),
    );

  it("substitutes the variable from the function's environment", () => {
    const { file } = files();
    const runtime = join(REPO_ROOT, 'dist/functions/lambda-runtime.js');
    const child = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { lambdaRuntime } = await import(${JSON.stringify(runtime)}); process.stderr.write('HOST ' + (await lambdaRuntime('tsdb')).config.tsdbConfig.host + '\\n');`,
      ],
      {
        env: { PATH: process.env.PATH ?? '', SVC_CONFIG: file, AWS_LAMBDA_FUNCTION_NAME: 'tsdb.internal.example.com' },
        encoding: 'utf8',
      },
    );
    expect(child.status, child.stderr).toBe(0);
    expect(child.stderr).toContain('HOST tsdb.internal.example.com');
  });

  it('fails naming the key when the variable is missing or its value does not fit the key', async () => {
    const { file, source } = files();
    const missing = await invoke('tsdb', file, []);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toContain(
      `${source}:4:11 Svc.tsdbConfig.host: environment variable AWS_LAMBDA_FUNCTION_NAME is not set (referenced as \${env:AWS_LAMBDA_FUNCTION_NAME})`,
    );
    const empty = await invoke('tsdb', file, [], { AWS_LAMBDA_FUNCTION_NAME: '' });
    expect(empty.code).not.toBe(0);
    expect(empty.stderr).toContain(`${source}:4:11 Svc.tsdbConfig.host: must be a non-empty string (got "")`);
  });
});

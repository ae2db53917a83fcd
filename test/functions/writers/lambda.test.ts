/**
 * The writer Lambda entry (functions/writers/lambda.ts, built into dist/) run as AWS runs it: a
 * fresh Node process with its bundled config and environment, the handler called with SQS events,
 * its logs on stdout. The tsdb writer takes every kind the config routes to the tsdb (audit, user,
 * log, points) and writes them to a real influxd; an event of a kind it does not take fails its
 * message (batch item failure) and is logged at ERROR, never acknowledged unwritten.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePacked } from '../../../shared/queue/codec.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import { auditQueued } from '../../support/audit.js';
import { REPO_ROOT } from '../../support/build.js';
import { query, startInfluxd, type InfluxdHandle } from '../../support/influxd.js';
import { PROXY, START_SESSION, logQueued, userQueued } from '../../shared/platform/fixtures.js';
import { EVENT_COUNT, pointsQueued } from '../../shared/platform/queued.js';
import { healthQueued } from '../../shared/destinations/polled.js';

const DB = 'writer_lambda';

function record(messageId: string, events: QueuedEvent[]): SQSRecord {
  return {
    messageId,
    receiptHandle: messageId,
    body: encodePacked(events),
    attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:svc-tsdb',
    awsRegion: 'us-east-1',
  };
}

/**
 * Runs the built Lambda entry in a child process and calls its handler with each event in turn: the
 * answers come back on stderr (one line), the log lines on stdout (the logger writes to fd 1).
 */
async function invoke(configFile: string, events: SQSEvent[]): Promise<{ responses: SQSBatchResponse[]; log: Record<string, unknown>[] }> {
  const entry = join(REPO_ROOT, 'dist/functions/writers/lambda.js');
  const script = `const { handler } = await import(${JSON.stringify(entry)});
const out = [];
for (const event of JSON.parse(process.env.TEST_EVENTS)) out.push(await handler(event));
process.stderr.write('RESPONSES ' + JSON.stringify(out) + '\\n');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    // No S3 is reached (no claim checks in these events); the client only needs a region to be made.
    env: { PATH: process.env.PATH ?? '', SVC_CONFIG: configFile, SVC_DESTINATION: 'tsdb', SVC_CLAIM_CHECK_BUCKET: 'claims', AWS_REGION: 'us-east-1', TEST_EVENTS: JSON.stringify(events) },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const line = stderr.split('\n').find((l) => l.startsWith('RESPONSES '));
  if (code !== 0 || line === undefined) throw new Error(`writer Lambda exited with ${code}:\n${stderr}\n${stdout}`);
  const responses = JSON.parse(line.slice('RESPONSES '.length)) as SQSBatchResponse[];
  const log = stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { responses, log };
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
    configFile = join(mkdtempSync(join(tmpdir(), 'writer-lambda-')), 'svc.yaml');
    writeFileSync(
      configFile,
      [
        'Svc:',
        '  tsdbConfig:', '    enable: true', '    host: 127.0.0.1', `    port: ${influx.port}`, '    v1Config:', `      dbName: ${DB}`, '      retentionPolicy:', '        duration: 5000w',
        '  auditEvents:', '    enable: true', '    destination:', '      enable: true', '      type: tsdb',
        '  userEvents:', '    enable: true', '    sendToTsdb:', '      enable: true',
        '  logEvents:', '    source:', '      proxy:', '        enable: true', '    sendToTsdb:', '      enable: true',
        '  platformEvents:', '    tsdb:', '      enable: true', '    eventCount:', '      enable: true',
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

    const { responses, log: lines } = await invoke(configFile, [
      { Records: [record('m-audit', [audit]), record('m-user', [user]), record('m-log', [log]), record('m-points', [points])] },
      { Records: [record('m-health', [health]), record('m-user2', [user2])] },
    ]);

    expect(responses).toEqual([{ batchItemFailures: [] }, { batchItemFailures: [{ itemIdentifier: 'm-health' }] }]);
    expect(await measurements(influx)).toEqual(['audit_events', 'event_count', 'log_event', 'user_events']);
    const users = (await query(influx, 'SELECT count(userId_field) FROM user_events', DB)) as { results: { series?: { values: unknown[][] }[] }[] };
    expect(users.results[0]?.series?.[0]?.values[0]?.[1]).toBe(2);

    const refused = lines.filter((l) => l.eventId === health.id);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ level: 'error', destination: 'tsdb', kind: 'health', messageId: 'm-health' });
    expect(refused[0]?.msg).toContain('does not take that kind');
  });
});

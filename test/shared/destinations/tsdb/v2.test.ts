/**
 * TsdbWriter version 2 against the fake InfluxDB 2.x (test/support/fake-influx.ts): no InfluxDB 2
 * server can be installed here, so the fake answers its HTTP API the way the real one does and
 * records the requests: bucket setup, the write request line, authorisation, body, failures.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  TsdbWriteError,
  type TsdbWriter,
  type TsdbWriterOptions,
} from '../../../../shared/destinations/tsdb/writer.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import {
  type ConfigParts,
  fakeWriter,
  lineCounts,
  points,
  type Recorder,
  recorder,
  recordingSleep,
} from './helpers.js';

const MODULE = 'test-module';

let v2: FakeInflux;

beforeAll(async () => {
  v2 = await startFakeInflux({ version: 2, token: 'v2-token', org: 'acme' });
});

afterAll(async () => {
  await v2.close();
});

let rec: Recorder;
beforeEach(() => {
  rec = recorder();
  v2.reset();
  if (!v2.buckets.has('svc')) {
    v2.buckets.set('svc', { id: 'b-svc', orgID: v2.orgId, name: 'svc', description: '', retentionRules: [] });
  }
});

const writerFor = (
  fake: FakeInflux,
  parts: Partial<ConfigParts> = {},
  options: Partial<TsdbWriterOptions> = {},
): TsdbWriter => fakeWriter(fake, rec, parts, options);

describe('version 2 (fake 2.x)', () => {
  it('ensureDatabase: finds the org, creates the missing bucket with its retention rule, leaves an existing one', async () => {
    v2.buckets.delete('svc');
    const writer = writerFor(v2, { v2: { retentionDuration: '10d', description: 'Svc data' } });
    await writer.ensureDatabase();
    expect(v2.requests.map((r) => `${r.method} ${r.path}?${r.rawQuery} ${r.status}`)).toEqual([
      'GET /api/v2/orgs?org=acme 200',
      `GET /api/v2/buckets?name=svc&orgID=${v2.orgId} 200`,
      'POST /api/v2/buckets? 201',
    ]);
    for (const r of v2.requests) expect(r.headers.authorization).toBe('Token v2-token');
    expect(JSON.parse(v2.requests[2]?.body ?? '')).toEqual({
      orgID: v2.orgId,
      name: 'svc',
      description: 'Svc data',
      retentionRules: [{ type: 'expire', everySeconds: 864_000 }],
    });

    v2.reset();
    const bucket = v2.buckets.get('svc');
    await writer.ensureDatabase();
    expect(v2.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/v2/orgs', 'GET /api/v2/buckets']);
    expect(v2.buckets.get('svc')).toBe(bucket);
  });

  it('ensureDatabase: a retention in weeks or hours becomes seconds; an unknown org or a bad token fails', async () => {
    v2.buckets.delete('wk');
    await writerFor(v2, { v2: { bucket: 'wk', retentionDuration: '2w' } }).ensureDatabase();
    expect(v2.buckets.get('wk')?.retentionRules).toEqual([{ type: 'expire', everySeconds: 1_209_600 }]);
    await expect(writerFor(v2, { v2: { org: 'nope' } }).ensureDatabase()).rejects.toThrow(
      /orgs\?org=nope answered HTTP 404/,
    );
    await expect(writerFor(v2, { v2: { token: 'wrong' } }).ensureDatabase()).rejects.toThrow(/HTTP 401/);
  });

  it('posts the line protocol as is to /api/v2/write?org=&bucket=&precision=ns with Token auth', async () => {
    const pts = points(40); // > 1000 bytes: the client would gzip by default
    const report = await writerFor(v2).write(pts, MODULE);
    expect(report).toEqual({ written: 40, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 1 });
    const [req] = v2.writes();
    expect(req?.method).toBe('POST');
    expect(req?.path).toBe('/api/v2/write');
    expect(req?.rawQuery).toBe('org=acme&bucket=svc&precision=ns');
    expect(req?.headers.authorization).toBe('Token v2-token');
    expect(req?.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(req?.headers['content-encoding']).toBeUndefined();
    expect(req?.body).toBe(pts.map((p, i) => `m,host=h1,seq=s${i} n=${i}i,text="value ${i}" ${p.timeNs}`).join('\n'));
    expect(rec.errors).toEqual([]);
  });

  it('401: the chunk fails whole without retries or ladder, and the rest of the call is not sent', async () => {
    const pts = points(25);
    const report = await writerFor(v2, { maxBatchSize: 10, v2: { token: 'wrong' } }).write(pts, MODULE);
    expect(report.requests).toBe(1);
    expect(report.written).toBe(0);
    expect(report.dropped).toBe(0);
    expect(report.failedWhole).toEqual(pts);
    expect(lineCounts(v2)).toEqual([10]);
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0]?.type).toBe('TSDB_V2_WRITE');
    expect(rec.errors[0]?.module).toBe(MODULE);
    expect(rec.errors[0]?.err).toBeInstanceOf(TsdbWriteError);
    expect(rec.errors[0]?.err).toMatchObject({ status: 401 });
    // One ERROR naming the tsdb, the status and the key to check; no WARN.
    expect(rec.at('error').map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^tsdb v2 at http:\/\/127\.0\.0\.1:\d+ refused Svc's credentials: .*HTTP 401: unauthorized access; check Svc\.tsdbConfig\.v2Config\.token/,
      ),
    ]);
    expect(rec.at('error')[0]?.obj).toMatchObject({ status: 401, module: MODULE });
    expect(rec.at('warn')).toEqual([]);
  });

  it('403 also fails whole', async () => {
    v2.failNext(1, 403);
    const report = await writerFor(v2).write(points(3), MODULE);
    expect(report).toMatchObject({ written: 0, dropped: 0, requests: 1 });
    expect(report.failedWhole).toHaveLength(3);
  });

  it('503 twice then OK: retried after 1 s and 2 s (default schedule), nothing split', async () => {
    v2.failNext(2, 503);
    const { sleep, waits } = recordingSleep();
    const report = await writerFor(v2, {}, { retryDelaysMs: undefined, sleep }).write(points(5), MODULE);
    expect(report).toEqual({ written: 5, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 3 });
    expect(waits).toEqual([1000, 2000]);
    expect(v2.writes().map((r) => r.status)).toEqual([503, 503, 204]);
    expect(lineCounts(v2)).toEqual([5, 5, 5]);
    expect(v2.lines()).toHaveLength(5);
    expect(rec.errors).toEqual([]);
  });

  it('429 with Retry-After waits as asked, capped at 10 s', async () => {
    v2.failNext(1, { status: 429, headers: { 'retry-after': '30' } });
    v2.failNext(1, { status: 429, headers: { 'retry-after': '3' } });
    const { sleep, waits } = recordingSleep();
    const report = await writerFor(v2, {}, { retryDelaysMs: undefined, sleep }).write(points(2), MODULE);
    expect(report.written).toBe(2);
    expect(waits).toEqual([10_000, 3_000]);
  });

  it('a request timeout (client socket timeout) is a connection-level failure: retried, then failed whole', async () => {
    v2.hangNext(4);
    const report = await writerFor(v2, {}, { requestTimeoutMs: 150 }).write(points(2), MODULE);
    expect(report).toMatchObject({ written: 0, requests: 4 });
    expect(report.failedWhole).toHaveLength(2);
    expect(rec.errors[0]?.err).toMatchObject({ code: 'ETIMEDOUT' });
  });

  it('a 5xx that outlasts the 3 retries (1, 2, 4 s) sends the chunk down the ladder', async () => {
    v2.failNext(4, 500);
    const { sleep, waits } = recordingSleep();
    const report = await writerFor(v2, { maxBatchSize: 2 }, { retryDelaysMs: undefined, sleep }).write(
      points(2),
      MODULE,
    );
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(lineCounts(v2)).toEqual([2, 2, 2, 2, 1, 1]);
    expect(report).toEqual({ written: 2, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 6 });
  });
});

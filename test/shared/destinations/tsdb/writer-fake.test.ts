/**
 * TsdbWriter against the fake InfluxDB (test/support/fake-influx.ts) for versions 2 and 3, which
 * cannot be installed here, and for the version-independent rules (ladder sizes, retries, whole
 * failures). Version 1 against a real influxd: writer-v1.test.ts.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../../shared/logging/logger.js';
import { int, str, type Point } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { TsdbWriteError, TsdbWriter, type TsdbWriterOptions } from '../../../../shared/destinations/tsdb/writer.js';
import { startFakeInflux, type FakeInflux } from '../../../support/fake-influx.js';
import { recorder, recordingSleep, tsdbConfig, type ConfigParts, type Recorder } from './helpers.js';

const BASE_MS = 1_760_000_000_000;
const MODULE = 'test-module';

function points(count: number, measurement = 'm'): Point[] {
  return Array.from({ length: count }, (_, i) => ({
    measurement,
    tags: { host: 'h1', seq: `s${i}` },
    fields: { n: int(i), text: str(`value ${i}`) },
    timeNs: BigInt(BASE_MS + i) * 1_000_000n + BigInt(i),
  }));
}

const lineCounts = (fake: FakeInflux): number[] => fake.writes().map((r) => r.body.split('\n').length);

let v1: FakeInflux;
let v2: FakeInflux;
let v3: FakeInflux;
const fakes = (): FakeInflux[] => [v1, v2, v3];

beforeAll(async () => {
  [v1, v2, v3] = await Promise.all([
    startFakeInflux({ version: 1, existing: ['svc'] }),
    startFakeInflux({ version: 2, token: 'v2-token', org: 'acme' }),
    startFakeInflux({ version: 3, token: 'v3-token' }),
  ]);
});

afterAll(async () => {
  await Promise.all(fakes().map((f) => f.close()));
});

let rec: Recorder;
beforeEach(async () => {
  rec = recorder();
  for (const fake of fakes()) {
    fake.reset();
    await fake.acceptConnections();
  }
  if (!v2.buckets.has('svc')) {
    v2.buckets.set('svc', { id: 'b-svc', orgID: v2.orgId, name: 'svc', description: '', retentionRules: [] });
  }
});

function writerFor(fake: FakeInflux, parts: Partial<ConfigParts> = {}, options: Partial<TsdbWriterOptions> = {}): TsdbWriter {
  const config = tsdbConfig({
    version: fake.version,
    port: fake.port,
    ...parts,
    v2: { org: 'acme', token: 'v2-token', ...parts.v2 },
    v3: { token: 'v3-token', ...parts.v3 },
  });
  return new TsdbWriter({ config, log: rec.log, onError: rec.onError, retryDelaysMs: [1, 1, 1], ...options });
}

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
    await expect(writerFor(v2, { v2: { org: 'nope' } }).ensureDatabase()).rejects.toThrow(/orgs\?org=nope answered HTTP 404/);
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
    expect(req?.body).toBe(
      pts.map((p, i) => `m,host=h1,seq=s${i} n=${i}i,text="value ${i}" ${p.timeNs}`).join('\n'),
    );
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
    expect(rec.at('error')).toEqual([]);
    expect(rec.at('warn')[0]?.msg).toMatch(/failed whole/);
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
    const report = await writerFor(v2, { maxBatchSize: 2 }, { retryDelaysMs: undefined, sleep }).write(points(2), MODULE);
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(lineCounts(v2)).toEqual([2, 2, 2, 2, 1, 1]);
    expect(report).toEqual({ written: 2, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 6 });
  });
});

describe('version 3 (fake 3.x)', () => {
  it('ensureDatabase: POST /api/v3/configure/database with the retention; 409 (exists) leaves it as it is', async () => {
    v3.databases.delete('svc');
    const writer = writerFor(v3, { v3: { retentionDuration: '10d' } });
    await writer.ensureDatabase();
    const [req] = v3.requests;
    expect(`${req?.method} ${req?.path}`).toBe('POST /api/v3/configure/database');
    expect(req?.headers.authorization).toBe('Bearer v3-token');
    expect(req?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(req?.body ?? '')).toEqual({ db: 'svc', retention_period: '240h' });
    expect(v3.databases.get('svc')).toEqual({ name: 'svc', retentionPeriod: '240h' });

    await writerFor(v3, { v3: { retentionDuration: '1h' } }).ensureDatabase();
    expect(v3.requests.map((r) => r.status)).toEqual([200, 409]);
    expect(v3.databases.get('svc')?.retentionPeriod).toBe('240h');
    await expect(writerFor(v3, { v3: { token: 'wrong' } }).ensureDatabase()).rejects.toThrow(/HTTP 401/);
  });

  it('posts to /api/v3/write_lp?db=&precision=nanosecond with Bearer auth; no Authorization without a token', async () => {
    const pts = points(3);
    expect(await writerFor(v3).write(pts, MODULE)).toMatchObject({ written: 3, requests: 1 });
    const [req] = v3.writes();
    expect(req?.path).toBe('/api/v3/write_lp');
    expect(req?.rawQuery).toBe('db=svc&precision=nanosecond');
    expect(req?.headers.authorization).toBe('Bearer v3-token');
    expect(req?.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(req?.body).toBe(pts.map((p, i) => `m,host=h1,seq=s${i} n=${i}i,text="value ${i}" ${p.timeNs}`).join('\n'));

    const open = await startFakeInflux({ version: 3 });
    try {
      const writer = new TsdbWriter({ config: tsdbConfig({ version: 3, port: open.port, v3: { token: '' } }), log: rec.log, onError: rec.onError });
      expect((await writer.write(pts, MODULE)).written).toBe(3);
      expect(open.writes()[0]?.headers.authorization).toBeUndefined();
    } finally {
      await open.close();
    }
  });

  it('respects v3Config.writeTimeout: a hung server is a connection-level failure (retried, then failed whole)', async () => {
    v3.hangNext(4);
    const started = Date.now();
    const report = await writerFor(v3, { v3: { writeTimeout: 150 } }).write(points(3), MODULE);
    const elapsed = Date.now() - started;
    expect(report.requests).toBe(4);
    expect(report.failedWhole).toHaveLength(3);
    expect(elapsed).toBeGreaterThanOrEqual(4 * 140);
    expect(elapsed).toBeLessThan(4_000);
    expect(rec.errors[0]?.err).toMatchObject({ code: 'ETIMEDOUT' });
  });
});

describe.each([1, 2, 3] as const)('version %i: the chunk ladder and connection failures', (version) => {
  const fake = (): FakeInflux => (version === 1 ? v1 : version === 2 ? v2 : v3);

  it('a poisoned line: only failing sub-chunks are re-sent (1000 → 500 → 250 → 100 → 10 → 1), the point is dropped', async () => {
    const pts = points(1000);
    fake().poison('seq=s7 ');
    const report = await writerFor(fake()).write(pts, MODULE);
    // depth first: [0,1000) → [0,500) → [0,250) → [0,100) → [0,10) → ten single points, then the
    // rest of each level once: nine 10s, [100,200), [200,250), [250,500), [500,1000)
    expect(lineCounts(fake())).toEqual([1000, 500, 250, 100, 10, ...Array<number>(10).fill(1), ...Array<number>(9).fill(10), 100, 50, 250, 500]);
    expect(report).toEqual({ written: 999, dropped: 1, droppedBeyondRetention: 0, failedWhole: [], requests: 28 });
    // every good line stored exactly once: nothing written was sent again
    const stored = fake().lines();
    expect(stored).toHaveLength(999);
    expect(new Set(stored).size).toBe(999);
    expect(stored.some((l) => l.includes('seq=s7 '))).toBe(false);

    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0]?.type).toBe(`TSDB_V${version}_WRITE`);
    expect(rec.errors[0]?.module).toBe(MODULE);
    expect(rec.errors[0]?.err).toMatchObject({ status: 400 });
    const errorLogs = rec.at('error');
    expect(errorLogs).toHaveLength(1);
    expect(errorLogs[0]?.obj.line).toBe(`m,host=h1,seq=s7 n=7i,text="value 7" ${pts[7]?.timeNs}`);
    expect(errorLogs[0]?.obj.module).toBe(MODULE);
  });

  it('ladder sizes start below a short last chunk; the ERROR log truncates the line to 1,000 characters', async () => {
    const pts = points(300, 'long');
    const poisoned = pts[260];
    if (poisoned === undefined) throw new Error('no point 260');
    poisoned.fields.text = str(`POISON ${'é'.repeat(3000)}`);
    fake().poison('POISON');
    const report = await writerFor(fake(), { maxBatchSize: 1000 }).write(pts, MODULE);
    // 300 (fails) → [0,250) ok, [250,300) fails → [250,260) ok, [260,270) fails → ten single points → [270,300) in 10s
    expect(lineCounts(fake())).toEqual([300, 250, 50, 10, 10, ...Array<number>(10).fill(1), 10, 10, 10]);
    expect(report).toMatchObject({ written: 299, dropped: 1, requests: 18 });
    const logged = rec.at('error')[0]?.obj.line;
    expect(typeof logged === 'string' ? [...logged].length : -1).toBe(1000);
    expect(typeof logged === 'string' && logged.startsWith('long,host=h1,seq=s260 n=260i,text="POISON éé')).toBe(true);
  });

  it('connection refused: retried 3 times, then the chunk and the rest fail whole (no ladder); later writes succeed', async () => {
    const pts = points(5);
    await fake().refuseConnections();
    const { sleep, waits } = recordingSleep();
    const writer = writerFor(fake(), { maxBatchSize: 2 }, { retryDelaysMs: undefined, sleep });
    const report = await writer.write(pts, MODULE);
    expect(report).toEqual({ written: 0, dropped: 0, droppedBeyondRetention: 0, failedWhole: pts, requests: 4 });
    expect(waits).toEqual([1000, 2000, 4000]);
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0]?.err).toMatchObject({ code: 'ECONNREFUSED' });

    await fake().acceptConnections();
    const again = await writer.write(report.failedWhole, MODULE);
    expect(again).toEqual({ written: 5, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 3 });
    expect(fake().lines()).toHaveLength(5);
  });

  it('a point that is not valid line protocol is dropped before sending; the rest is written', async () => {
    const pts = points(3);
    const bad: Point = { measurement: 'm', tags: { host: '' }, fields: { n: int(1) }, timeNs: 1n };
    const report = await writerFor(fake()).write([pts[0], bad, pts[1], pts[2]].filter((p) => p !== undefined), MODULE);
    expect(report).toEqual({ written: 3, dropped: 1, droppedBeyondRetention: 0, failedWhole: [], requests: 1 });
    expect(rec.errors).toHaveLength(1);
    expect(String(rec.errors[0]?.err)).toMatch(/at least one non-empty tag/);
  });

  it('untracked writes (error points, §6.10): failures are logged at DEBUG and not passed to onError', async () => {
    fake().poison('seq=s1 ');
    const report = await writerFor(fake()).write(points(2), MODULE, { untracked: true });
    expect(report).toMatchObject({ written: 1, dropped: 1 });
    expect(rec.errors).toEqual([]);
    expect(rec.at('error')).toEqual([]);
    expect(rec.at('debug').some((e) => /dropped/.test(e.msg))).toBe(true);
  });
});

describe('version 1 (fake): request line', () => {
  it('POST /write?db=&precision=ns, Basic auth only when v1Config.auth.enable', async () => {
    await writerFor(v1).write(points(1), MODULE);
    await writerFor(v1, { v1: { auth: { enable: true, username: 'svc', password: 'p:w' } } }).write(points(1), MODULE);
    const [plain, auth] = v1.writes();
    expect(`${plain?.path}?${plain?.rawQuery}`).toBe('/write?db=svc&precision=ns');
    expect(plain?.headers.authorization).toBeUndefined();
    expect(auth?.headers.authorization).toBe(`Basic ${Buffer.from('svc:p:w').toString('base64')}`);
  });
});

describe('with the service logger', () => {
  it('takes the pino Logger as its log and writes the drop as an ERROR line with module and line', async () => {
    const chunks: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    });
    const handle = await createLogger({ level: 'info', pretty: false, destination });
    try {
      const writer = new TsdbWriter({ config: tsdbConfig({ version: 2, port: v2.port, v2: { org: 'acme' } }), log: handle.logger, onError: rec.onError });
      v2.poison('seq=s0 ');
      expect((await writer.write(points(1), MODULE)).dropped).toBe(1);
      handle.flush();
      const lines = chunks.join('').split('\n').filter((l) => l !== '').map((l): unknown => JSON.parse(l));
      expect(lines).toContainEqual(expect.objectContaining({ level: 'error', module: MODULE, status: 400, msg: 'tsdb refused a point; dropped' }));
    } finally {
      await handle.close();
    }
  });
});

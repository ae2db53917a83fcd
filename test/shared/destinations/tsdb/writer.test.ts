/**
 * The version-independent rules of TsdbWriter (the chunk ladder, retries, whole failures, dropped
 * points, untracked writes, logging), for each version against the fake InfluxDB
 * (test/support/fake-influx.ts), which fails requests on demand. What each version sends: v1.test.ts
 * (a real influxd 1.6), v2.test.ts and v3.test.ts (the fake: no InfluxDB 2 or 3 can be installed here).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { int, type Point, str, toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { TsdbWriter, type TsdbWriterOptions } from '../../../../shared/destinations/tsdb/writer.js';
import { createLogger } from '../../../../shared/logging/logger.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import {
  type ConfigParts,
  fakeWriter,
  lineCounts,
  points,
  type Recorder,
  recorder,
  recordingSleep,
  tsdbConfig,
} from './helpers.js';

const MODULE = 'test-module';

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

const writerFor = (
  fake: FakeInflux,
  parts: Partial<ConfigParts> = {},
  options: Partial<TsdbWriterOptions> = {},
): TsdbWriter => fakeWriter(fake, rec, parts, options);

describe.each([1, 2, 3] as const)('version %i: the chunk ladder and connection failures', (version) => {
  const fake = (): FakeInflux => (version === 1 ? v1 : version === 2 ? v2 : v3);

  it('a poisoned line: only failing sub-chunks are re-sent (1000 → 500 → 250 → 100 → 10 → 1), the point is dropped', async () => {
    const pts = points(1000);
    fake().poison('seq=s7 ');
    const report = await writerFor(fake()).write(pts, MODULE);
    // depth first: [0,1000) → [0,500) → [0,250) → [0,100) → [0,10) → ten single points, then the
    // rest of each level once: nine 10s, [100,200), [200,250), [250,500), [500,1000)
    expect(lineCounts(fake())).toEqual([
      1000,
      500,
      250,
      100,
      10,
      ...Array<number>(10).fill(1),
      ...Array<number>(9).fill(10),
      100,
      50,
      250,
      500,
    ]);
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

  it('sends exactly the lines toLine makes, multi-byte text included, in chunks of maxBatchSize (the body is built in one buffer, grown as needed)', async () => {
    const pts = points(450, 'wide');
    // Long lines (the buffer starts at 64 KiB and grows) with 2-, 3- and 4-byte UTF-8 and a quote.
    for (const [i, p] of pts.entries()) p.fields.text = str(`${'é'.repeat(i)} ✓ 😀 "q" ${i}`);
    // Points refused only at their last piece (the time), after a long field was written: nothing of their line is sent.
    const refused = [17, 230, 449].map((i) => ({ ...(pts[i] as Point), timeNs: 2n ** 63n }));
    const all = [
      ...pts.slice(0, 17),
      refused[0],
      ...pts.slice(17, 230),
      refused[1],
      ...pts.slice(230),
      refused[2],
    ].filter((p): p is Point => p !== undefined);
    const report = await writerFor(fake(), { maxBatchSize: 200 }).write(all, MODULE);
    expect(report).toMatchObject({ written: 450, dropped: 3, failedWhole: [], requests: 3 });
    expect(lineCounts(fake())).toEqual([200, 200, 50]);
    expect(fake().lines()).toEqual(pts.map(toLine));
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
    expect(report).toMatchObject({ written: 0, dropped: 0, droppedBeyondRetention: 0, failedWhole: pts, requests: 4 });
    expect(report.refusal).toMatch(/cannot be written: a write \(POST \/.*\) failed whole: ECONNREFUSED/);
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
    const report = await writerFor(fake()).write(
      [pts[0], bad, pts[1], pts[2]].filter((p) => p !== undefined),
      MODULE,
    );
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

describe('a large batch', () => {
  it('builds its lines in slices, letting the event loop run between them (other work is not held up for the whole build)', async () => {
    // 8 lines of ≈ 100 KB: the loop gets a turn after each ≈ 256 KiB of line protocol.
    const pts = points(8, 'big');
    for (const p of pts) p.fields.text = str('x'.repeat(100_000));
    const order: string[] = [];
    const last = pts[7];
    if (last === undefined) throw new Error('no point 7');
    Object.defineProperty(last, 'measurement', {
      get: () => {
        order.push('last point built');
        return 'big';
      },
    });
    // Due before the write starts: it runs at the loop's next turn.
    setImmediate(() => order.push('loop ran'));
    const report = await writerFor(v1, { maxBatchSize: 1000 }).write(pts, MODULE);
    expect(order).toEqual(['loop ran', 'last point built']);
    expect(report).toMatchObject({ written: 8, dropped: 0, requests: 1 });
    expect(v1.lines()).toEqual(pts.map(toLine));
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
      const writer = new TsdbWriter({
        config: tsdbConfig({ version: 2, port: v2.port, v2: { org: 'acme' } }),
        log: handle.logger,
        onError: rec.onError,
      });
      v2.poison('seq=s0 ');
      expect((await writer.write(points(1), MODULE)).dropped).toBe(1);
      handle.flush();
      const lines = chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l): unknown => JSON.parse(l));
      expect(lines).toContainEqual(
        expect.objectContaining({ level: 'error', module: MODULE, status: 400, msg: 'tsdb refused a point; dropped' }),
      );
    } finally {
      await handle.close();
    }
  });
});

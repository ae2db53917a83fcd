/**
 * TsdbWriter version 1 against a real influxd 1.6 (test/support/influxd.ts), started once.
 * The tests run in order; each uses its own database. The last one turns authentication on.
 * The request line and headers, which influxd does not show, against the fake (test/support/fake-influx.ts).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bool, float, int, type Point, str } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { quoteIdentifier } from '../../../../shared/destinations/tsdb/v1.js';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import { type InfluxdHandle, query, startInfluxd } from '../../../support/influxd.js';
import { type ConfigParts, fakeWriter, points, type Recorder, recorder, rfc3339Nano, tsdbConfig } from './helpers.js';

const MODULE = 'v1-test';
let influx: InfluxdHandle;
let rec: Recorder;
const clock = new PointClock();

beforeAll(async () => {
  influx = await startInfluxd();
});

afterAll(async () => {
  await influx?.stop();
});

beforeEach(() => {
  rec = recorder();
});

function writer(dbName: string, parts: Partial<ConfigParts> = {}): TsdbWriter {
  const config = tsdbConfig({ version: 1, port: influx.port, ...parts, v1: { dbName, ...parts.v1 } });
  return new TsdbWriter({ config, log: rec.log, onError: rec.onError, retryDelaysMs: [5, 5, 5] });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `results[0].series[0]` of an InfluxQL response, checked. */
function firstSeries(json: unknown): { columns: unknown[]; values: unknown[][] } | undefined {
  const results = isRecord(json) ? json.results : undefined;
  const result: unknown = Array.isArray(results) ? results[0] : undefined;
  const series = isRecord(result) ? result.series : undefined;
  const first: unknown = Array.isArray(series) ? series[0] : undefined;
  if (!isRecord(first)) return undefined;
  const { columns, values } = first;
  if (!Array.isArray(columns) || !Array.isArray(values)) throw new Error(`unexpected series: ${JSON.stringify(first)}`);
  return { columns, values: values.filter((row): row is unknown[] => Array.isArray(row)) };
}

/** `series[0].values` of a single-statement query ([] when there is no series). */
async function values(q: string, db?: string): Promise<unknown[][]> {
  return firstSeries(await query(influx, q, db))?.values ?? [];
}

function seqPoints(measurement: string, count: number, eventMs: number): Point[] {
  return Array.from({ length: count }, (_, i) => ({
    measurement,
    tags: { host: 'h1', seq: String(i).padStart(3, '0') },
    fields: { x: int(i) },
    timeNs: clock.next(eventMs + i),
  }));
}

describe('TsdbWriter version 1 (real influxd 1.6)', () => {
  it('ensureDatabase creates the database with the configured retention policy as default; an existing one is left as it is', async () => {
    const w = writer('svc_v1', { v1: { retentionPolicy: { name: 'svc_rp', duration: '10d' } } });
    await w.ensureDatabase();
    expect(await values('SHOW DATABASES')).toContainEqual(['svc_v1']);
    // columns: name, duration, shardGroupDuration, replicaN, default
    const rps = await values('SHOW RETENTION POLICIES ON svc_v1');
    expect(rps).toContainEqual(['svc_rp', '240h0m0s', '24h0m0s', 1, true]);
    expect(rps.filter((rp) => rp[4] === true)).toHaveLength(1);

    await query(influx, 'ALTER RETENTION POLICY svc_rp ON svc_v1 DURATION 480h');
    await writer('svc_v1', { v1: { retentionPolicy: { name: 'other_rp', duration: '1w' } } }).ensureDatabase();
    const after = await values('SHOW RETENTION POLICIES ON svc_v1');
    expect(after).toContainEqual(['svc_rp', '480h0m0s', '24h0m0s', 1, true]);
    expect(after.map((rp) => rp[0])).not.toContain('other_rp');

    await writer('svc_weeks', { v1: { retentionPolicy: { name: 'two_weeks', duration: '2w' } } }).ensureDatabase();
    expect(await values('SHOW RETENTION POLICIES ON svc_weeks')).toContainEqual([
      'two_weeks',
      '336h0m0s',
      '24h0m0s',
      1,
      true,
    ]);
  });

  it('creates a database and policy whose names need quoting (a space, a quote) and writes to it', async () => {
    const name = 'svc "odd" db';
    const w = writer(name, { v1: { retentionPolicy: { name: 'my rp', duration: '1d' } } });
    await w.ensureDatabase();
    expect(await values('SHOW DATABASES')).toContainEqual([name]);
    expect(await values(`SHOW RETENTION POLICIES ON ${quoteIdentifier(name)}`)).toContainEqual([
      'my rp',
      '24h0m0s',
      '1h0m0s',
      1,
      true,
    ]);
    const report = await w.write(seqPoints('odd', 2, Date.now() - 60_000), 'test');
    expect(report).toMatchObject({ written: 2, dropped: 0 });
    expect(await values('SELECT count(x) FROM odd', name)).toMatchObject([[expect.any(String), 2]]);
  });

  it('says what InfluxDB refused when a statement fails inside a 200 answer (a name it does not take)', async () => {
    await expect(writer('back\\slash').ensureDatabase()).rejects.toThrow(
      'tsdb v1: POST /query (CREATE DATABASE) answered HTTP 200: invalid name',
    );
  });

  it('quoteIdentifier escapes the quotes and backslashes of an InfluxQL identifier', () => {
    expect(quoteIdentifier('svc')).toBe('"svc"');
    expect(quoteIdentifier('a "b" c\\d')).toBe('"a \\"b\\" c\\\\d"');
  });

  it('writes points that read back with exact tags, field types, values and nanosecond times', async () => {
    const w = writer('types');
    await w.ensureDatabase();
    const timeNs = clock.next(Date.now() - 60_000);
    const point: Point = {
      measurement: 'health check',
      tags: { host: 'node 1', server_name: 'a,b=c', user: 'LAB\\goran', empty: '' },
      fields: {
        count: int(42),
        big: int(9007199254740993n),
        total: float(7),
        ratio: float(0.25),
        version: str('say "hi" \\ C:\\dir\\'),
        saturated: bool(true),
        host: str('shadow'),
        missing: null,
      },
      timeNs,
    };
    const report = await w.write([point], MODULE);
    expect(report).toEqual({ written: 1, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 1 });

    expect(await values('SHOW FIELD KEYS FROM "health check"', 'types')).toEqual([
      ['big', 'integer'],
      ['count', 'integer'],
      ['host_field', 'string'],
      ['ratio', 'float'],
      ['saturated', 'boolean'],
      ['total', 'float'],
      ['version', 'string'],
    ]);
    expect(await values('SHOW TAG KEYS FROM "health check"', 'types')).toEqual([['host'], ['server_name'], ['user']]);
    const series = firstSeries(await query(influx, 'SELECT * FROM "health check"', 'types'));
    expect(series?.columns).toEqual([
      'time',
      'big',
      'count',
      'host',
      'host_field',
      'ratio',
      'saturated',
      'server_name',
      'total',
      'user',
      'version',
    ]);
    expect(series?.values).toEqual([
      [
        rfc3339Nano(timeNs),
        9007199254740992 /* JSON number; exact value checked below */,
        42,
        'node 1',
        'shadow',
        0.25,
        true,
        'a,b=c',
        7,
        'LAB\\goran',
        'say "hi" \\ C:\\dir\\',
      ],
    ]);
    const raw = await fetch(
      `${influx.url}/query?${new URLSearchParams({ db: 'types', q: 'SELECT big FROM "health check"' }).toString()}`,
    );
    expect(await raw.text()).toContain(',9007199254740993]');
  });

  it('ladder: a field type conflict drops only that point; only failing sub-chunks are re-sent', async () => {
    const w = writer('ladder', { maxBatchSize: 20 });
    await w.ensureDatabase();
    const now = Date.now() - 120_000;
    const first = await w.write(
      [{ measurement: 'conflict', tags: { host: 'h0' }, fields: { x: int(1) }, timeNs: clock.next(now - 1) }],
      MODULE,
    );
    expect(first.written).toBe(1);

    const pts = seqPoints('conflict', 25, now);
    const poisoned = pts[13];
    if (poisoned === undefined) throw new Error('no point 13');
    poisoned.fields = { x: str('not an integer') };
    const report = await w.write(pts, MODULE);
    // [0,20) fails (influxd: 400 partial write) → [0,10) ok, [10,20) fails → ten single points, one fails → [20,25) ok
    expect(report).toEqual({ written: 24, dropped: 1, droppedBeyondRetention: 0, failedWhole: [], requests: 14 });

    expect(await values('SELECT count(x) FROM conflict', 'ladder')).toEqual([['1970-01-01T00:00:00Z', 25]]);
    expect(await values(`SELECT * FROM conflict WHERE seq = '013'`, 'ladder')).toEqual([]);
    expect(rec.errors).toHaveLength(1);
    expect(rec.errors[0]?.type).toBe('TSDB_V1_WRITE');
    expect(rec.errors[0]?.module).toBe(MODULE);
    expect(rec.errors[0]?.err).toMatchObject({ status: 400 });
    expect(String(rec.errors[0]?.err)).toMatch(/field type conflict/);
    const dropLog = rec.at('error');
    expect(dropLog).toHaveLength(1);
    expect(dropLog[0]?.obj.line).toBe(`conflict,host=h1,seq=013 x="not an integer" ${poisoned.timeNs}`);
  });

  it('points older than the retention period are counted as droppedBeyondRetention, not retried, one WARN per chunk', async () => {
    const w = writer('retention', { maxBatchSize: 3, v1: { retentionPolicy: { name: 'short', duration: '1h' } } });
    await w.ensureDatabase();
    const now = Date.now() - 1_000;
    const old = now - 3 * 3_600_000;
    const pts = seqPoints('kept', 6, now);
    const [p0, , , , p4] = pts;
    if (p0 === undefined || p4 === undefined) throw new Error('points missing');
    p0.timeNs = clock.next(old);
    p4.timeNs = clock.next(old + 1);
    const report = await w.write(pts, MODULE);
    expect(report).toEqual({ written: 4, dropped: 0, droppedBeyondRetention: 2, failedWhole: [], requests: 2 });
    expect(await values('SELECT count(x) FROM kept', 'retention')).toEqual([['1970-01-01T00:00:00Z', 4]]);
    const warns = rec.at('warn');
    expect(warns).toHaveLength(2);
    expect(warns[0]?.msg).toMatch(/retention/);
    expect(warns[0]?.obj).toMatchObject({ dropped: 1, chunk: 3, module: MODULE });
    expect(rec.errors).toEqual([]);
  });

  it('influxd stopped: the chunk fails whole (connection refused, retried, no ladder) and returns for redelivery; after a restart it is written', async () => {
    const w = writer('outage', { maxBatchSize: 2 });
    await w.ensureDatabase();
    const pts = seqPoints('outage', 5, Date.now() - 10_000);
    await influx.stopProcess();
    try {
      const report = await w.write(pts, MODULE);
      expect(report).toEqual({
        written: 0,
        dropped: 0,
        droppedBeyondRetention: 0,
        failedWhole: pts,
        refusal: expect.stringMatching(/^tsdb v1 at http:\/\/127\.0\.0\.1:\d+ cannot be written: .*ECONNREFUSED/),
        requests: 4,
      });
      expect(rec.errors).toHaveLength(1);
      expect(rec.errors[0]?.err).toMatchObject({ code: 'ECONNREFUSED' });
      expect(rec.at('error')).toEqual([]);
      await expect(w.ensureDatabase()).rejects.toThrow();
    } finally {
      await influx.startProcess();
    }
    const again = await w.write(pts, MODULE);
    expect(again).toEqual({ written: 5, dropped: 0, droppedBeyondRetention: 0, failedWhole: [], requests: 3 });
    expect(await values('SELECT count(x) FROM outage', 'outage')).toEqual([['1970-01-01T00:00:00Z', 5]]);
  });

  it('with authentication on: Basic auth for setup and writes; wrong credentials fail whole (401, no retries, no ladder)', async () => {
    await query(influx, `CREATE USER admin WITH PASSWORD 'pa ss' WITH ALL PRIVILEGES`);
    const conf = await readFile(influx.configPath, 'utf8');
    await writeFile(influx.configPath, conf.replace('auth-enabled = false', 'auth-enabled = true'));
    await influx.restart();

    const auth = { enable: true, username: 'admin', password: 'pa ss' };
    const w = writer('secured', { v1: { auth } });
    await w.ensureDatabase();
    const pts = seqPoints('secure', 3, Date.now() - 5_000);
    expect(await w.write(pts, MODULE)).toMatchObject({ written: 3, requests: 1 });

    const unauthenticated = await fetch(`${influx.url}/query?q=SHOW+DATABASES`);
    expect(unauthenticated.status).toBe(401);

    const wrong = writer('secured', { maxBatchSize: 2, v1: { auth: { ...auth, password: 'nope' } } });
    const report = await wrong.write(pts, MODULE);
    expect(report).toEqual({
      written: 0,
      dropped: 0,
      droppedBeyondRetention: 0,
      failedWhole: pts,
      refusal: expect.stringContaining("refused Svc's credentials"),
      requests: 1,
    });
    expect(rec.errors.at(-1)?.err).toMatchObject({ status: 401 });
    await expect(wrong.ensureDatabase()).rejects.toThrow();
    await expect(writer('secured').write(pts, MODULE)).resolves.toMatchObject({ failedWhole: pts, requests: 1 });
  });
});

describe('version 1 (fake): request line', () => {
  let v1: FakeInflux;
  beforeAll(async () => {
    v1 = await startFakeInflux({ version: 1, existing: ['svc'] });
  });
  afterAll(async () => {
    await v1.close();
  });

  it('POST /write?db=&precision=ns, Basic auth only when v1Config.auth.enable', async () => {
    await fakeWriter(v1, rec).write(points(1), MODULE);
    await fakeWriter(v1, rec, { v1: { auth: { enable: true, username: 'svc', password: 'p:w' } } }).write(
      points(1),
      MODULE,
    );
    const [plain, auth] = v1.writes();
    expect(`${plain?.path}?${plain?.rawQuery}`).toBe('/write?db=svc&precision=ns');
    expect(plain?.headers.authorization).toBeUndefined();
    expect(auth?.headers.authorization).toBe(`Basic ${Buffer.from('svc:p:w').toString('base64')}`);
  });
});

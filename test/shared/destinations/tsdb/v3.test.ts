/**
 * TsdbWriter version 3 against the fake InfluxDB 3.x (test/support/fake-influx.ts): no InfluxDB 3
 * server can be installed here, so the fake answers its HTTP API the way the real one does and
 * records the requests: database setup, the write request line, authorisation, body, timeouts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TsdbWriter, type TsdbWriterOptions } from '../../../../shared/destinations/tsdb/writer.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import { type ConfigParts, fakeWriter, points, type Recorder, recorder, tsdbConfig } from './helpers.js';

const MODULE = 'test-module';

let v3: FakeInflux;

beforeAll(async () => {
  v3 = await startFakeInflux({ version: 3, token: 'v3-token' });
});

afterAll(async () => {
  await v3.close();
});

let rec: Recorder;
beforeEach(() => {
  rec = recorder();
  v3.reset();
});

const writerFor = (
  fake: FakeInflux,
  parts: Partial<ConfigParts> = {},
  options: Partial<TsdbWriterOptions> = {},
): TsdbWriter => fakeWriter(fake, rec, parts, options);

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
      const writer = new TsdbWriter({
        config: tsdbConfig({ version: 3, port: open.port, v3: { token: '' } }),
        log: rec.log,
        onError: rec.onError,
      });
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

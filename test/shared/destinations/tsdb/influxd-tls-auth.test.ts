/**
 * TLS and credentials against a real influxd 1.6 (Debian's): one serving https with a certificate
 * signed by a CA the test makes, one with `auth-enabled`. Writes land over https when the CA is
 * trusted (`tls.caFile`) or the check is off (`rejectUnauthorized: false`); an untrusted certificate
 * and refused credentials are one clear log line each, tracked, and the events wait in the durable
 * queue (none dead-lettered) until the cause is fixed, then land once each. No log line, at any
 * level, holds the password or its Basic-auth encoding.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Point } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { captureLog, type LogCapture } from '../../../support/audit.js';
import { createAdmin, type InfluxdHandle, query, startInfluxd } from '../../../support/influxd.js';
import { type ConfigParts, points, recorder, tsdbConfig } from './helpers.js';
import { testTls, tsdbPipeline } from './pipeline.js';

const tls = testTls();
const { dir, caFile } = tls;
afterAll(() => tls.remove());

/** `count(event_id)` of the audit points in `db`, and how many distinct event ids they hold. */
async function written(influx: InfluxdHandle, db: string): Promise<{ points: number; ids: number }> {
  const result = (await query(influx, 'SELECT event_id FROM audit_events', db)) as {
    results: { series?: { values: [string, string][] }[] }[];
  };
  const values = result.results[0]?.series?.[0]?.values ?? [];
  return { points: values.length, ids: new Set(values.map((v) => v[1])).size };
}

/** `count` points timed just before now (within the retention of the database Svc creates). */
function recentPoints(count: number): Point[] {
  const at = BigInt(Date.now() - 60_000) * 1_000_000n;
  return points(count).map((p, i) => ({ ...p, timeNs: at + BigInt(i) }));
}

/** The lines of `log` at `level` whose message matches `pattern`. */
function linesAt(log: LogCapture, level: string, pattern: RegExp): Record<string, unknown>[] {
  return log.lines().filter((l) => l['level'] === level && pattern.test(String(l['msg'])));
}

/** Waits long enough for the paused group to try again several times (its pause is 50 to 200 ms here). */
const severalTries = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1_500));

describe('tsdb v1 over https (real influxd with a test CA)', () => {
  let influx: InfluxdHandle;
  beforeAll(async () => {
    influx = await startInfluxd({
      https: { certFile: tls.serverCertFile, keyFile: tls.serverKeyFile, ca: tls.certs.ca.cert },
    });
  });
  afterAll(() => influx.stop());

  const config = (db: string, tls: ConfigParts['tls']) =>
    tsdbConfig({ version: 1, port: influx.port, tls: { enable: true, ...tls }, v1: { dbName: db } });

  it('with tls.caFile = the test CA: setup and writes go over https and land', async () => {
    const rec = recorder();
    const writer = new TsdbWriter({ config: config('tls_ca', { caFile }), log: rec.log, onError: rec.onError });
    expect(writer.writeUrl).toBe(`https://127.0.0.1:${influx.port}/write?db=tls_ca&precision=ns`);
    await writer.ensureDatabase();
    expect(await writer.write(recentPoints(3), 'TEST')).toMatchObject({ written: 3, failedWhole: [] });
    const rows = (await query(influx, 'SELECT count(n) FROM m', 'tls_ca')) as {
      results: { series?: { values: [string, number][] }[] }[];
    };
    expect(rows.results[0]?.series?.[0]?.values[0]?.[1]).toBe(3);
    expect(rec.errors).toEqual([]);
  });

  it('with rejectUnauthorized: false and no CA: the certificate is not checked, and writes land', async () => {
    const rec = recorder();
    const writer = new TsdbWriter({
      config: config('tls_unchecked', { rejectUnauthorized: false }),
      log: rec.log,
      onError: rec.onError,
    });
    await writer.ensureDatabase();
    expect(await writer.write(recentPoints(2), 'TEST')).toMatchObject({ written: 2, failedWhole: [] });
  });

  it('plain http to the https port: setup fails saying to turn tls on', async () => {
    const rec = recorder();
    const plain = tsdbConfig({ version: 1, port: influx.port, v1: { dbName: 'tls_plain' } });
    const writer = new TsdbWriter({ config: plain, log: rec.log, onError: rec.onError });
    await expect(writer.ensureDatabase('TEST')).rejects.toThrow(/HTTP 400/);
    expect(rec.at('error').map((l) => l.msg)).toEqual([
      expect.stringContaining('the server speaks https: set Svc.tsdbConfig.tls.enable to true'),
    ]);
    expect(rec.errors).toHaveLength(1);
  });

  it('without the CA: one ERROR naming the certificate problem, tracked; the events wait, and land once each with the CA', async () => {
    const queueDir = mkdtempSync(join(dir, 'queue-'));
    const log = await captureLog('debug');
    const untrusted = await tsdbPipeline(config('tls_wait', {}), queueDir, log.logger);
    const ids = await untrusted.send(20);
    await expect.poll(() => untrusted.stats().unavailableSince, { timeout: 15_000 }).not.toBeNull();
    await severalTries();
    const errors = linesAt(log, 'error', /certificate/);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.['msg']).toMatch(
      /^tsdb v1 at https:\/\/127\.0\.0\.1:\d+ cannot be written: .*(SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY).*; the server's certificate is not trusted: set Svc\.tsdbConfig\.tls\.caFile/,
    );
    expect(untrusted.errors.summary().details['TSDB_V1_WRITE']?.total).toBeGreaterThanOrEqual(1);
    expect(untrusted.stats()).toMatchObject({ pendingEvents: 20, deadLettered: 0 });
    expect(untrusted.deadLettered()).toBe(false);
    await untrusted.stop();

    // The operator sets the CA and restarts: what waited is written, each event once.
    const trusted = await tsdbPipeline(config('tls_wait', { caFile }), queueDir, log.logger);
    await expect.poll(() => written(influx, 'tls_wait'), { timeout: 15_000 }).toEqual({ points: 20, ids: 20 });
    await expect.poll(() => trusted.stats().pendingEvents).toBe(0);
    await trusted.stop();
    expect(ids).toHaveLength(20);
    expect(trusted.deadLettered()).toBe(false);
  }, 60_000);
});

describe('tsdb v1 with authentication (real influxd, auth-enabled)', () => {
  const ADMIN_PASSWORD = 'admin-Pass-7301';
  const WRONG_PASSWORD = 'wrong-Pass-4412';
  const SVC_PASSWORD = 'svc-Pass-9087';
  let influx: InfluxdHandle;
  beforeAll(async () => {
    influx = await startInfluxd({ auth: true });
    await createAdmin(influx, 'admin', ADMIN_PASSWORD);
  });
  afterAll(() => influx.stop());

  it('a refused password is one ERROR naming what to check, tracked; the events wait, and land once each when the user exists; nothing logs a credential', async () => {
    const queueDir = mkdtempSync(join(dir, 'queue-'));
    const log = await captureLog('debug');
    const auth = { enable: true, username: 'svc', password: SVC_PASSWORD };
    const config = tsdbConfig({ version: 1, port: influx.port, v1: { dbName: 'auth_wait', auth } });
    const pipeline = await tsdbPipeline(config, queueDir, log.logger);

    // 1. The user does not exist yet: the setup (SHOW DATABASES) is refused.
    await pipeline.send(10);
    await expect.poll(() => pipeline.stats().unavailableSince, { timeout: 15_000 }).not.toBeNull();
    await severalTries();
    const refused = linesAt(log, 'error', /refused Svc's credentials/);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ status: 401 });
    expect(refused[0]?.['msg']).toMatch(
      /^tsdb v1 at http:\/\/127\.0\.0\.1:\d+ refused Svc's credentials: tsdb v1: GET \/query \(SHOW DATABASES\) answered HTTP 401: authorization failed; check Svc\.tsdbConfig\.v1Config\.auth\.username and \.password/,
    );
    expect(pipeline.errors.summary().details['TSDB_V1_WRITE']?.total).toBeGreaterThanOrEqual(1);
    expect(pipeline.stats()).toMatchObject({ pendingEvents: 10, deadLettered: 0 });

    // 2. The operator creates the user with that password: the waiting events land, once each.
    await query(influx, `CREATE USER "svc" WITH PASSWORD '${SVC_PASSWORD}' WITH ALL PRIVILEGES`);
    await expect.poll(() => written(influx, 'auth_wait'), { timeout: 15_000 }).toEqual({ points: 10, ids: 10 });
    expect(linesAt(log, 'info', /accepts Svc's requests again/)).toHaveLength(1);

    // 3. The password changes on the server: now the writes are refused (the database exists).
    await query(influx, `SET PASSWORD FOR "svc" = '${WRONG_PASSWORD}'`);
    await pipeline.send(5);
    await expect.poll(() => linesAt(log, 'error', /refused Svc's credentials/).length, { timeout: 15_000 }).toBe(2);
    await severalTries();
    const writeRefusal = linesAt(log, 'error', /refused Svc's credentials/)[1];
    expect(writeRefusal?.['msg']).toMatch(/a write \(POST \/write\?db=auth_wait&precision=ns\) failed whole: HTTP 401/);
    expect(linesAt(log, 'error', /refused Svc's credentials/)).toHaveLength(2);
    expect(pipeline.stats()).toMatchObject({ pendingEvents: 5, deadLettered: 0 });

    // 4. And back: the five land, nothing twice.
    await query(influx, `SET PASSWORD FOR "svc" = '${SVC_PASSWORD}'`);
    await expect.poll(() => written(influx, 'auth_wait'), { timeout: 15_000 }).toEqual({ points: 15, ids: 15 });
    await pipeline.stop();
    expect(pipeline.deadLettered()).toBe(false);

    // Across setup failure, write failure and success, at every level: no password, no Basic-auth value.
    const text = log.lines().map((l) => JSON.stringify(l));
    expect(text.length).toBeGreaterThan(5);
    for (const secret of [SVC_PASSWORD, WRONG_PASSWORD, ADMIN_PASSWORD]) {
      for (const form of [secret, Buffer.from(`svc:${secret}`).toString('base64')])
        expect(text.filter((line) => line.includes(form))).toEqual([]);
    }
    // No request header either (InfluxDB's own "authorization failed" is fine).
    expect(text.filter((line) => /"authorization"|Basic [A-Za-z0-9+/]{4}/i.test(line))).toEqual([]);
  }, 90_000);
});

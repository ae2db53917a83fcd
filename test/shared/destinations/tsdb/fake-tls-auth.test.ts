/**
 * Versions 2 and 3 over https with their tokens, against the stand-in for InfluxDB 2.x/3.x
 * (test/support/fake-influx.ts: no real 2.x or 3.x server can be installed here) serving https with
 * a certificate of a CA the test makes. A refused token (401) is one clear ERROR, tracked; the
 * events wait in the durable queue and land once each when the token is right. No log line holds
 * the token.
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { captureLog } from '../../../support/audit.js';
import { type FakeInflux, startFakeInflux } from '../../../support/fake-influx.js';
import { points, recorder, tsdbConfig } from './helpers.js';
import { testTls, tsdbPipeline } from './pipeline.js';

const tls = testTls();
const { dir, caFile } = tls;
afterAll(() => tls.remove());

const TOKENS = { 2: 'v2-Token-Right-5521', 3: 'v3-Token-Right-8830' } as const;
const WRONG = 'Token-Wrong-1177';

describe.each([2, 3] as const)('tsdb v%i over https (stand-in server)', (version) => {
  let fake: FakeInflux;
  beforeAll(async () => {
    fake = await startFakeInflux({
      version,
      token: TOKENS[version],
      existing: ['svc'],
      tls: { cert: tls.certs.server.cert, key: tls.certs.server.key },
    });
  });
  afterAll(() => fake.close());

  const config = (token: string, tls: { caFile?: string; rejectUnauthorized?: boolean } = { caFile }) =>
    tsdbConfig({
      version,
      port: fake.port,
      tls: { enable: true, ...tls },
      ...(version === 2 ? { v2: { token } } : { v3: { token } }),
    });

  it('sets up and writes over https with the CA, sending its token', async () => {
    fake.reset();
    const rec = recorder();
    const writer = new TsdbWriter({ config: config(TOKENS[version]), log: rec.log, onError: rec.onError });
    expect(writer.writeUrl).toMatch(new RegExp(`^https://127\\.0\\.0\\.1:${fake.port}/api/v${version}/write`));
    await writer.ensureDatabase();
    expect(await writer.write(points(3), 'TEST')).toMatchObject({ written: 3, failedWhole: [] });
    expect(fake.lines()).toHaveLength(3);
    const scheme = version === 2 ? 'Token' : 'Bearer';
    // Setup and write alike went to the https server with the token.
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
    for (const request of fake.requests) expect(request.headers.authorization).toBe(`${scheme} ${TOKENS[version]}`);
    expect(rec.errors).toEqual([]);
  });

  it('without the CA the certificate is refused (a clear error), with rejectUnauthorized: false it is not checked', async () => {
    fake.reset();
    const rec = recorder();
    const untrusted = new TsdbWriter({ config: config(TOKENS[version], {}), log: rec.log, onError: rec.onError });
    await expect(untrusted.ensureDatabase('TEST')).rejects.toThrow(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY/);
    expect(rec.at('error').map((l) => l.msg)).toEqual([
      expect.stringContaining("the server's certificate is not trusted"),
    ]);
    expect(fake.requests).toEqual([]);

    const unchecked = new TsdbWriter({
      config: config(TOKENS[version], { rejectUnauthorized: false }),
      log: rec.log,
      onError: rec.onError,
    });
    expect(await unchecked.write(points(1), 'TEST')).toMatchObject({ written: 1 });
  });

  it('a refused token is one ERROR naming the key, tracked; the events wait and land once each with the right token; no line holds a token', async () => {
    fake.reset();
    const queueDir = mkdtempSync(join(dir, 'queue-'));
    const log = await captureLog('debug');
    const wrong = await tsdbPipeline(config(WRONG), queueDir, log.logger);
    await wrong.send(12);
    await expect.poll(() => wrong.stats().unavailableSince, { timeout: 15_000 }).not.toBeNull();
    // Several tries of the paused group (its pause is 50 to 200 ms here).
    await expect.poll(() => fake.requests.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(4);
    const refused = log.lines().filter((l) => l['level'] === 'error');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ status: 401 });
    expect(refused[0]?.['msg']).toMatch(
      new RegExp(
        `^tsdb v${version} at https://127\\.0\\.0\\.1:\\d+ refused Svc's credentials: .*HTTP 401.*; check Svc\\.tsdbConfig\\.v${version}Config\\.token`,
      ),
    );
    expect(wrong.errors.summary().details[`TSDB_V${version}_WRITE`]?.total).toBeGreaterThanOrEqual(1);
    expect(wrong.stats()).toMatchObject({ pendingEvents: 12, deadLettered: 0 });
    await wrong.stop();

    // Restarted with the right token: what waited is written, each event once.
    const right = await tsdbPipeline(config(TOKENS[version]), queueDir, log.logger);
    await expect.poll(() => fake.lines().length, { timeout: 15_000 }).toBe(12);
    await expect.poll(() => right.stats().pendingEvents).toBe(0);
    await right.stop();
    expect(new Set(fake.lines().map((l) => /event_id="([^"]+)"/.exec(l)?.[1])).size).toBe(12);
    expect(right.deadLettered()).toBe(false);

    const text = log.lines().map((l) => JSON.stringify(l));
    for (const token of [TOKENS[version], WRONG]) expect(text.filter((line) => line.includes(token))).toEqual([]);
  }, 60_000);
});

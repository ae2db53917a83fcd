/**
 * The embedded store in a real `svc local` (the built CLI as a child process), fed over real UDP
 * and HTTP on loopback ports, its file read by a second SQLite connection as the read API reads it:
 * - with no tsdb, MQTT or monitoring SaaS, the UDP events are now stored (the gating);
 * - a store that cannot write (its file locked by another connection) stops neither the listeners
 *   nor another destination (the parquet audit files), and its events come again when it writes again;
 * - `kill -9` in the middle of the store's writes loses no row and duplicates none, and the file
 *   passes `PRAGMA integrity_check`;
 * - `svc store backup` copies it while Svc runs, and Svc's counters are sampled into it at stop;
 * - a store written by a newer Svc stops the start, and `svc validate-config` refuses a store
 *   folder that cannot be created, both naming `Svc.store.path`;
 * - `svc demo` (config/demo.yaml) stores what it polls and receives.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { envelope } from '../../../support/audit.js';
import { startDemo } from '../../../support/demo.js';
import { freePort, freeUdpPort, LOOPBACK, until } from '../../../support/ports.js';
import { scrape } from '../../../support/prometheus.js';
import {
  logLines,
  parquetEventIds,
  postAuditEvent,
  SVC_BIN,
  type SvcProcess,
  startSvc,
} from '../../../support/svc-process.js';
import { sendDatagrams } from '../../../support/udp.js';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A working folder removed after the test. */
function workFolder(): string {
  const cwd = mkdtempSync(join(tmpdir(), 'svc-store-e2e-'));
  cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
  return cwd;
}

interface Ports {
  log: number;
  metrics: number;
  audit: number;
}

/** svc.yaml of a `svc local` with the proxy log listener, the metrics endpoint, the audit API to parquet files, and the store at its default path. */
function writeConfig(cwd: string, ports: Ports): void {
  const config = {
    Svc: {
      localQueue: { directory: 'queue' },
      logEvents: {
        udpServerConfig: { serverHost: LOOPBACK, portLogEvents: ports.log },
        source: { proxy: { enable: true } },
      },
      metricsEndpoint: { enable: true, host: LOOPBACK, port: ports.metrics },
      errorTracking: { enable: true },
      auditEvents: {
        enable: true,
        port: ports.audit,
        rateLimit: { enable: false },
        destination: { enable: true, type: 'parquet', parquet: { exportDirectory: 'parquet', writeFrequency: 500 } },
      },
    },
  };
  writeFileSync(join(cwd, 'svc.yaml'), stringify(config));
}

async function start(cwd: string): Promise<SvcProcess> {
  const svc = startSvc(cwd);
  cleanups.push(async () => {
    if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGKILL');
    await svc.exited;
  });
  await until(
    'svc local to run',
    () => svc.output().includes('svc local') && svc.output().includes(' running ('),
    20_000,
  );
  return svc;
}

/** One proxy log line per message, without a platform timestamp (the receive time is the event's). */
const proxyLine = (message: string) =>
  `/qseow-proxy/;1;;;WARN;PLAT-N1;Audit.Proxy.Proxy.Core.RequestListener;LAB\\svc;${message};;LAB;kalle;Login;403;AppAccess;/hub/`;

/** A read-only connection to the store, as the read API opens it. */
function count(file: string, sql: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number(Object.values(db.prepare(sql).get() ?? {})[0]);
  } finally {
    db.close();
  }
}

async function metric(port: number, name: string, labels: Record<string, string>): Promise<number> {
  const { metrics } = await scrape(`http://${LOOPBACK}:${port}/metrics`);
  try {
    return metrics.value(name, labels);
  } catch {
    return 0;
  }
}

/** `svc <args>` run to its end in `cwd`. */
function svcSync(cwd: string, args: string[]) {
  return spawnSync(SVC_BIN, args, { cwd, encoding: 'utf8', env: { ...process.env, SVC_CONFIG: '' }, timeout: 20_000 });
}

async function ports(): Promise<Ports> {
  return { log: await freeUdpPort(), metrics: await freePort(), audit: await freePort() };
}

/**
 * A running `svc local` (writeConfig) whose store another connection holds locked, and `n`
 * datagrams sent with `prefix` + their index as message, all on the queue's disk waiting for the
 * store. `release()` lets the store write.
 */
async function lockedWithPending(prefix: string, n: number) {
  const cwd = workFolder();
  const p = await ports();
  writeConfig(cwd, p);
  const svc = await start(cwd);
  const file = join(cwd, 'data/store/svc.db');
  // Another connection takes the write lock: every store delivery fails with SQLITE_BUSY.
  const lock = new DatabaseSync(file);
  lock.exec('BEGIN EXCLUSIVE');
  await sendDatagrams(
    p.log,
    Array.from({ length: n }, (_, i) => proxyLine(`${prefix} ${i}`)),
    { inFlight: 32 },
  );
  await expect
    .poll(() => metric(p.metrics, 'svc_queue_pending_events', { queue: 'platform', destination: 'store' }), {
      timeout: 30_000,
    })
    .toBe(n);
  const release = () => {
    lock.exec('COMMIT');
    lock.close();
  };
  return { cwd, p, svc, file, release };
}

describe('the store in svc local', () => {
  it('stores UDP events with no other platform destination; a locked store stops neither the listener nor the parquet audit files, and its events come again', async () => {
    const n = 200;
    const { cwd, p, svc, file, release } = await lockedWithPending('locked', n);
    const auditIds: string[] = [];
    for (let i = 0; i < 5; i++) {
      const body = envelope();
      expect((await postAuditEvent(p.audit, body)).status).toBe(202);
      auditIds.push(String(body['eventId']));
    }
    // The listener took every datagram (the platform queue holds them for the store), and the
    // parquet destination wrote every audit event meanwhile.
    expect(await metric(p.metrics, 'svc_udp_datagrams_processed_total', { listener: 'log_events' })).toBe(n);
    await expect
      .poll(async () => (await parquetEventIds(join(cwd, 'parquet'))).sort(), { timeout: 15_000 })
      .toEqual([...auditIds].sort());
    await expect
      .poll(() => logLines(svc.output()).filter((l) => l.msg.startsWith('the store cannot write')).length, {
        timeout: 15_000,
      })
      .toBe(1);
    // Released: the events that waited are written, each once.
    release();
    await expect.poll(() => count(file, 'SELECT count(*) FROM log_events'), { timeout: 40_000, interval: 200 }).toBe(n);
    await expect
      .poll(() => count(file, 'SELECT count(*) FROM audit_events'), { timeout: 40_000, interval: 200 })
      .toBe(5);
    expect(count(file, "SELECT count(DISTINCT message) FROM log_events WHERE message LIKE 'locked %'")).toBe(n);
    expect(count(file, "SELECT count(*) FROM log_counts_hourly WHERE source = 'proxy'")).toBeGreaterThan(0);
    expect(count(file, "SELECT sum(count) FROM log_counts_hourly WHERE source = 'proxy' AND category = ''")).toBe(n);
    expect(svc.output()).toContain('the store writes again');
    // Still one ERROR line for the whole outage, however many deliveries failed.
    expect(logLines(svc.output()).filter((l) => l.msg.startsWith('the store cannot write'))).toHaveLength(1);
    expect(await metric(p.metrics, 'svc_errors_tracked_total', { error_type: 'STORE_WRITE' })).toBeGreaterThan(0);

    // `svc store backup` copies it while Svc runs: one file with every row.
    const backup = svcSync(cwd, ['store', 'backup', '--config', 'svc.yaml', '--to', 'backup.db']);
    expect(backup.status, backup.stderr).toBe(0);
    expect(count(join(cwd, 'backup.db'), 'SELECT count(*) FROM log_events')).toBe(n);
    // A second backup to the same file is refused: nothing is overwritten.
    const again = svcSync(cwd, ['store', 'backup', '--config', 'svc.yaml', '--to', 'backup.db']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('backup.db exists');

    // Stopped, it samples Svc's counters a last time into the store.
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);
    expect(
      count(
        file,
        `SELECT max(value) FROM svc_counters WHERE name = 'received' AND labels = '{"listener":"log_events"}'`,
      ),
    ).toBe(n);
    expect(
      count(
        file,
        `SELECT max(value) FROM svc_counters WHERE name = 'written_events' AND labels = '{"queue":"platform","destination":"store"}'`,
      ),
    ).toBe(n);
  }, 90_000);

  it('refuses to start on a store written by a newer Svc, and validate-config refuses a folder it cannot create, naming Svc.store.path', async () => {
    const cwd = workFolder();
    writeConfig(cwd, await ports());
    const file = join(cwd, 'data/store/svc.db');
    mkdirSync(join(cwd, 'data/store'), { recursive: true });
    const db = new DatabaseSync(file);
    db.exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '99')",
    );
    db.close();
    const svc = startSvc(cwd);
    expect(await svc.exited).toBe(1);
    expect(svc.output()).toContain('Svc.store.path');
    expect(svc.output()).toContain('has schema version 99, written by a newer Svc');

    writeFileSync(join(cwd, 'not-a-folder'), '');
    writeFileSync(
      join(cwd, 'bad.yaml'),
      stringify({ Svc: { localQueue: { directory: 'queue' }, store: { path: 'not-a-folder/store/svc.db' } } }),
    );
    const check = svcSync(cwd, ['validate-config', '--config', 'bad.yaml']);
    expect(check.status).toBe(1);
    expect(check.stderr).toContain('Svc.store.path');
    expect(check.stderr).toContain('not-a-folder is not a folder');
  }, 60_000);

  it('kill -9 in the middle of the store writes: after a restart every event is in the store exactly once, and the file is intact', async () => {
    // The store is held until every event is on the queue's disk, so the kill lands while it writes them.
    const n = 6000;
    const { cwd, svc: first, file, release } = await lockedWithPending('event', n);
    release();
    let atKill = 0;
    await until(
      'the store to write its first rows',
      () => (atKill = count(file, 'SELECT count(*) FROM log_events')) > 0,
      40_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    expect(atKill).toBeLessThan(n);

    await start(cwd);
    await expect.poll(() => count(file, 'SELECT count(*) FROM log_events'), { timeout: 60_000, interval: 250 }).toBe(n);
    expect(count(file, "SELECT count(DISTINCT message) FROM log_events WHERE message LIKE 'event %'")).toBe(n);
    expect(count(file, "SELECT sum(count) FROM log_counts_hourly WHERE source = 'proxy' AND category = ''")).toBe(n);
    const db = new DatabaseSync(file, { readOnly: true });
    expect(db.prepare('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }]);
    db.close();
  }, 150_000);
});

describe('svc demo', () => {
  it('keeps what it polls and receives in data/demo/store/svc.db', async () => {
    const demo = await startDemo();
    cleanups.push(() => demo.remove());
    const file = join(demo.cwd, 'data/demo/store/svc.db');
    for (const table of ['health', 'session_samples', 'log_events', 'perf_events', 'user_events', 'servers'])
      await expect
        .poll(() => count(file, `SELECT count(*) FROM ${table}`), { timeout: 60_000, interval: 500, message: table })
        .toBeGreaterThan(0);
    // Engine performance is named by the simulator's app list (the costliest apps by name).
    await expect
      .poll(() => count(file, "SELECT count(*) FROM perf_hourly WHERE app_name <> ''"), {
        timeout: 60_000,
        interval: 500,
      })
      .toBeGreaterThan(0);
  }, 120_000);
});

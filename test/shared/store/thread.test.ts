/**
 * The store writer in its worker thread (shared/store/thread.ts, worker.ts) and on the main thread
 * (the single executable's way), on real files: the same rows either way, and the errors keep
 * their kind across the thread (StoreOpenError at open, StoreUnavailableError while another
 * connection holds the lock, so the destination makes the events wait). The worker runs the BUILT
 * module (dist/), as Svc does: a worker thread starts a file, not vitest's TypeScript.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type * as Database from '../../../shared/store/database.js';
import type * as Thread from '../../../shared/store/thread.js';
import type * as Writer from '../../../shared/store/writer.js';
import { REPO_ROOT } from '../../support/build.js';
import { logQueued, PROXY } from '../platform/fixtures.js';

const dist = (path: string) => pathToFileURL(join(REPO_ROOT, 'dist', path)).href;
const thread: typeof Thread = await import(dist('shared/store/thread.js'));
const writerModule: typeof Writer = await import(dist('shared/store/writer.js'));
const database: typeof Database = await import(dist('shared/store/database.js'));

let folder: string;
const options = () => ({
  path: join(folder, 'svc.db'),
  servers: [],
  sessionPollMs: 30_000,
  upkeep: { retentionDays: 30, rawHealthHours: 48, maxSizeMB: 0 },
});
const ns = (ms: number, n: number) => String(BigInt(ms) * 1_000_000n + BigInt(n));

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'svc-store-thread-'));
});
afterEach(() => rmSync(folder, { recursive: true, force: true }));

describe.each([
  ['a worker thread', true],
  ['the main thread', false],
])('the store writer in %s', (_where, inWorker) => {
  it('writes a delivery once, redelivered or not, and closes', async () => {
    const store = await thread.openStoreWriting(options(), inWorker);
    const now = Date.now();
    const events = [logQueued(PROXY, ns(now, 1), 'a'), logQueued(PROXY, ns(now, 2), 'b')];
    expect(await store.write(events)).toMatchObject({ inserted: 2, duplicates: 0 });
    const again = await store.write(events);
    expect(again).toMatchObject({ inserted: 0, duplicates: 2 });
    expect(again.rejected).toBeInstanceOf(Map);
    await store.writeCounters(now, [{ name: 'received', labels: {}, value: 2 }]);
    expect((await store.upkeep(now)).expired).toBe(0);
    await store.close();
    const db = new DatabaseSync(join(folder, 'svc.db'), { readOnly: true });
    expect(db.prepare('SELECT count(*) AS n FROM log_events').get()).toEqual({ n: 2 });
    expect(db.prepare('SELECT count(*) AS n FROM svc_counters').get()).toEqual({ n: 1 });
    db.close();
  });

  it('a database of a newer schema: StoreOpenError naming the file', async () => {
    const db = new DatabaseSync(join(folder, 'svc.db'));
    db.exec(
      "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO meta VALUES ('schema_version', '99')",
    );
    db.close();
    const opening = thread.openStoreWriting(options(), inWorker);
    await expect(opening).rejects.toBeInstanceOf(database.StoreOpenError);
    await expect(thread.openStoreWriting(options(), inWorker)).rejects.toThrow(/svc\.db has schema version 99/);
  });

  it('another connection holding the lock: StoreUnavailableError, and the write succeeds once it lets go', async () => {
    const store = await thread.openStoreWriting(options(), inWorker);
    const lock = new DatabaseSync(join(folder, 'svc.db'));
    lock.exec('BEGIN EXCLUSIVE');
    const events = [logQueued(PROXY, ns(Date.now(), 3), 'c')];
    await expect(store.write(events)).rejects.toBeInstanceOf(writerModule.StoreUnavailableError);
    lock.exec('COMMIT');
    lock.close();
    expect(await store.write(events)).toMatchObject({ inserted: 1 });
    await store.close();
  });
});

/** The nice value of each thread of this process (Linux: /proc/self/task/<tid>/stat, field 19). */
function threadNices(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe.skipIf(process.platform !== 'linux')('the store thread on Linux', () => {
  it('runs below the priority of the main thread, which keeps its own', async () => {
    const before = threadNices().filter((nice) => nice === thread.STORE_THREAD_NICE).length;
    const store = await thread.openStoreWriting(options(), true);
    expect(threadNices().filter((nice) => nice === thread.STORE_THREAD_NICE)).toHaveLength(before + 1);
    expect(getPriority()).toBe(0);
    await store.close();
  });
});

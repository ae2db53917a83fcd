/**
 * Opening the embedded store's database file for writing (one connection per process, the store
 * writer's): its folder created, the pragmas that make it safe, the tables of ddl.ts, and the schema
 * version checked against `STORE_SCHEMA_VERSION`.
 *
 * - `journal_mode=WAL`: the read API opens the same file read-only on the main thread and reads
 *   while the writer writes.
 * - `synchronous=FULL`: the durable queue acknowledges a delivery only after the store's commit, and
 *   the queue syncs its own files; with FULL the commit is on disk when `COMMIT` returns, so neither
 *   `kill -9` nor a power cut loses a row the queue no longer holds (NORMAL would be safe from
 *   `kill -9` but could lose the last commits on a power cut). One sync per delivery, not per event.
 * - `busy_timeout` (STORE_BUSY_TIMEOUT_MS): a lock another connection holds briefly (an operator's
 *   `sqlite3` shell, a checkpoint) makes a write wait a moment, not fail.
 * - `auto_vacuum=INCREMENTAL`, set before the first table exists (it cannot be switched on later
 *   without a full VACUUM): the size cap (upkeep.ts) can give freed pages back to the file system.
 */
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { STORE_DDL, STORE_SCHEMA_VERSION } from './ddl.js';

/**
 * How long a write waits for a lock another connection holds before it fails (SQLITE_BUSY). Short:
 * the wait holds the main thread (writer.ts), no other connection of Svc writes the file (the read
 * API's is read-only), and a failed delivery waits in the queue and comes again after a pause.
 */
export const STORE_BUSY_TIMEOUT_MS = 250;

/** The store cannot be opened: the message names the file and what is wrong. */
export class StoreOpenError extends Error {
  override readonly name = 'StoreOpenError';
}

/** The schema version a database file records in `meta`, or null when it records none (a new file). */
function recordedVersion(db: DatabaseSync): number | null {
  const hasMeta = db.prepare("SELECT 1 AS found FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
  if (!hasMeta) return null;
  const row = db.prepare("SELECT value FROM meta WHERE key = 'schema_version'").get();
  return row === undefined ? null : Number(row.value);
}

/**
 * The database at `path` opened for writing, created with the store's tables when new. Throws
 * StoreOpenError naming the file when its folder cannot be created, the file is no SQLite database,
 * or it was written by a newer Svc (a newer schema version).
 */
export function openStoreDatabase(path: string): DatabaseSync {
  const file = resolve(path);
  try {
    mkdirSync(dirname(file), { recursive: true });
  } catch (err) {
    throw new StoreOpenError(`cannot create the folder of the store ${file}: ${messageOf(err)}`);
  }
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { timeout: STORE_BUSY_TIMEOUT_MS });
  } catch (err) {
    throw new StoreOpenError(`cannot open the store ${file}: ${messageOf(err)}`);
  }
  try {
    const version = recordedVersion(db);
    if (version !== null && version > STORE_SCHEMA_VERSION)
      throw new StoreOpenError(
        `the store ${file} has schema version ${version}, written by a newer Svc; this Svc knows version ${STORE_SCHEMA_VERSION}: use a newer Svc, or another Svc.store.path`,
      );
    if (version === null) db.exec('PRAGMA auto_vacuum = INCREMENTAL');
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = FULL');
    db.exec(STORE_DDL);
    db.prepare(
      "INSERT INTO meta (key, value) VALUES ('schema_version', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    ).run(String(STORE_SCHEMA_VERSION));
    return db;
  } catch (err) {
    db.close();
    if (err instanceof StoreOpenError) throw err;
    throw new StoreOpenError(`cannot use the store ${file}: ${messageOf(err)}`);
  }
}

/**
 * Why the store at `path` could not be created or written, or null when it can: the file, when it
 * exists, must be a writable file; else its nearest existing folder must be a writable folder (the
 * missing ones are created at start). Creates nothing, so `svc validate-config` can ask it too.
 */
export function storePathProblem(path: string): string | null {
  const file = resolve(path);
  const existing = statOrNull(file);
  if (existing) {
    if (!existing.isFile()) return `${file} exists and is not a file`;
    return writable(file) ? null : `${file} cannot be written by this user`;
  }
  let folder = dirname(file);
  for (let stat = statOrNull(folder); stat === null; stat = statOrNull(folder)) {
    const parent = dirname(folder);
    if (parent === folder) return `no folder of ${file} exists`;
    folder = parent;
  }
  const stat = statOrNull(folder);
  if (!stat?.isDirectory()) return `${folder} is not a folder, so the store ${file} cannot be created`;
  return writable(folder)
    ? null
    : `the folder ${folder} cannot be written by this user, so the store ${file} cannot be created`;
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

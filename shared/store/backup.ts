/**
 * `svc store backup --to <file>`: a consistent copy of the store while Svc keeps writing it, by
 * SQLite's online backup (node:sqlite `backup`) over a read-only connection: one file, without a
 * WAL, ready to open or to put in place of the store.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { backup, DatabaseSync } from 'node:sqlite';

/** Copies the store at `path` to `to` (which must not exist); resolves to the pages copied. */
export async function backupStore(path: string, to: string): Promise<number> {
  const source = resolve(path);
  const target = resolve(to);
  if (!existsSync(source)) throw new Error(`there is no store at ${source} (Svc.store.path)`);
  if (existsSync(target)) throw new Error(`${target} exists: name a new file`);
  const db = new DatabaseSync(source, { readOnly: true });
  try {
    return await backup(db, target);
  } finally {
    db.close();
  }
}

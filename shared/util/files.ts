/** Durable file writes: the data is on disk (fsync) before the call returns. */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Writes `data` to `path` (creating its directory) and syncs it. `exclusive` refuses an existing file. */
export function writeFileSynced(path: string, data: string | Uint8Array, options: { exclusive?: boolean; mode?: number } = {}): void {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, options.exclusive ? 'wx' : 'w', options.mode ?? 0o640);
  try {
    if (typeof data === 'string') writeSync(fd, data);
    else writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Writes `data` to a temporary file beside `path`, syncs it and renames it: readers see all of it or none. */
export function writeFileAtomically(path: string, data: string | Uint8Array): void {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSynced(temp, data, { exclusive: true });
  renameSync(temp, path);
}

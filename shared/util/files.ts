/**
 * Durable file writes (the data is on disk, fsync, before the call returns) and bounded reads of
 * files an operator names (config, certificates).
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';

/**
 * A file's contents: text, bytes, or bytes in chunks (written as they come, so a producer can hand
 * out a large file piece by piece, each chunk possibly a view of a buffer it then reuses).
 */
export type FileContents = string | Uint8Array | Iterable<Uint8Array>;

/** Writes all of `bytes` (writeSync may write less than asked). */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at, bytes.length - at);
}

/**
 * `mkdir -p`, with the names of the folders it creates made durable: each new folder's parent is
 * synced (a folder's name lives in its parent, like a file's). Nothing is synced when `dir` exists.
 */
export function makeDirectorySynced(dir: string): void {
  const first = mkdirSync(dir, { recursive: true });
  if (first === undefined) return;
  // Every folder from `first` down to `dir` is new: sync the parent of each, deepest first.
  const top = resolve(first);
  for (let at = resolve(dir); ; at = dirname(at)) {
    syncDirectory(dirname(at));
    if (at === top || dirname(at) === at) break;
  }
}

/** Writes `data` to `path` (creating its directory, durably) and syncs it. `exclusive` refuses an existing file. */
export function writeFileSynced(
  path: string,
  data: FileContents,
  options: { exclusive?: boolean; mode?: number } = {},
): void {
  makeDirectorySynced(dirname(path));
  const fd = openSync(path, options.exclusive ? 'wx' : 'w', options.mode ?? 0o640);
  try {
    if (typeof data === 'string') writeSync(fd, data);
    else if (data instanceof Uint8Array) writeSync(fd, data);
    else for (const chunk of data) writeAll(fd, chunk);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Syncs a directory, so that the names created, renamed or removed in it survive a power loss. A
 * file's own fsync makes its data durable, not its name: POSIX leaves that to the directory's
 * fsync, and a file system may keep a rename or a new name in memory for seconds after the file's
 * data is on disk.
 */
export function syncDirectory(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** `syncDirectory` off the main thread (libuv's pool), for a caller on a hot path. */
export async function syncDirectoryAsync(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Writes `data` to a temporary file beside `path`, syncs it, renames it and syncs the directory:
 * readers see all of it or none, and once the call returns the new contents stay `path`'s after a
 * power loss too. When the writing fails (chunks whose producer throws half-way included), the
 * temporary file is removed and the error thrown.
 */
export function writeFileAtomically(path: string, data: FileContents): void {
  const temp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSynced(temp, data, { exclusive: true });
  } catch (err) {
    try {
      rmSync(temp, { force: true });
    } catch {
      // The write's own error is the one to report (e.g. a parent that is a file fails both).
    }
    throw err;
  }
  renameSync(temp, path);
  syncDirectory(dirname(path));
}

/** Chunks as one array; each chunk is copied as it comes (it may be a view of a buffer its producer reuses). */
export function joinChunks(chunks: Iterable<Uint8Array>): Uint8Array {
  const copies: Uint8Array[] = [];
  let length = 0;
  for (const chunk of chunks) {
    copies.push(chunk.slice());
    length += chunk.length;
  }
  const out = new Uint8Array(length);
  let at = 0;
  for (const copy of copies) {
    out.set(copy, at);
    at += copy.length;
  }
  return out;
}

/** A bounded read: the bytes, or why there are none (`tooLarge`: at least this many bytes). */
export type BoundedRead = { ok: true; bytes: Buffer } | { ok: false; reason: string; tooLarge?: number };

const FS_REASONS: Record<string, string> = {
  ENOENT: 'no such file',
  ENOTDIR: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
};

function fsReason(err: unknown): string {
  const code =
    typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string'
      ? err.code
      : 'unknown error';
  return FS_REASONS[code] ?? code;
}

/**
 * Reads at most `maxBytes` from a regular file. Never reads an unbounded amount (a device or a
 * file that grows is cut off) and never waits: a FIFO is refused instead of blocking for a writer.
 */
export function readRegularFile(file: string, maxBytes: number): BoundedRead {
  let fd: number;
  try {
    // Non-blocking, so that a FIFO is refused below instead of waiting for a writer (no effect on
    // regular files; the flag does not exist on Windows, where it is 0 here).
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    return { ok: false, reason: fsReason(err) };
  }
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) return { ok: false, reason: 'is a directory' };
    if (!stat.isFile()) return { ok: false, reason: 'not a regular file' };
    if (stat.size > maxBytes) return { ok: false, reason: 'too large', tooLarge: stat.size };
    const buffer = Buffer.alloc(maxBytes + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
      if (length === buffer.length) return { ok: false, reason: 'too large', tooLarge: length };
    }
    return { ok: true, bytes: buffer.subarray(0, length) };
  } catch (err) {
    return { ok: false, reason: fsReason(err) };
  } finally {
    closeSync(fd);
  }
}

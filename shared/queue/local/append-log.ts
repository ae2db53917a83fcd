/**
 * The journal's files: append-only logs of framed records, written so that a full disk or a failed
 * sync can never leave half a record behind for the next record to be glued onto.
 *
 * A record is one line `<payload bytes> <crc32, 8 hex> <payload>\n`; the payload never holds a
 * newline (it is JSON, or a short ack line). On open every line is checked: length, checksum and
 * terminator. A line that fails is damage (reported with its offset and skipped; the records after
 * it are recovered), except an unterminated last line, which is a write a crash interrupted before
 * it was synced (so before anything was acknowledged) and is cut off.
 *
 * An append resolves only when its whole record is written and (unless the caller asks for a
 * written-only append: the journal's ack logs, synced periodically) synced. A short or failed write, or
 * a failed sync, truncates the file back to the last good record before anything else is appended,
 * and the append rejects with QueueStorageError (the audit API answers 503 with retry-after).
 */

import { closeSync, constants, fsyncSync, ftruncateSync, openSync, readFileSync, writeSync, writevSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { open, stat } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { QueueStorageError } from '../port.js';

const NEWLINE = 0x0a;
const HEADER = /^(\d{1,10}) ([0-9a-f]{8}) /;

function checksum(payload: string | Uint8Array): string {
  return crc32(payload).toString(16).padStart(8, '0');
}

/** One framed record (a line), for a payload without newlines. */
export function frame(payload: string): string {
  return `${Buffer.byteLength(payload)} ${checksum(payload)} ${payload}\n`;
}

const NEWLINE_BYTES = Buffer.from('\n');

/**
 * The bytes of `frame(head + body)` for a payload whose bulk (`body`) is already bytes: the checksum
 * goes on from the head's, so the body is neither copied into a string nor encoded again.
 */
export function frameBytes(head: string, body: Uint8Array): Buffer[] {
  const headBytes = Buffer.from(head, 'utf8');
  const crc = crc32(body, crc32(headBytes)).toString(16).padStart(8, '0');
  return [
    Buffer.from(`${headBytes.length + body.length} ${crc} `, 'latin1'),
    headBytes,
    Buffer.from(body.buffer, body.byteOffset, body.byteLength),
    NEWLINE_BYTES,
  ];
}

/**
 * The bytes of `frame(head + body)` in one buffer of its own, `body` encoded once straight into it
 * (no intermediate Buffer.from of the body, no concatenation of the frame's parts later), and where
 * the body's bytes are in it (`bodyAt`), so a caller can keep them as a view. A body given as UTF-8
 * parts (the edge's event batcher holds its messages so) is copied in, part after part: never made a
 * string, never encoded again.
 */
export function frameText(head: string, body: string | readonly Uint8Array[]): { data: Buffer; bodyAt: number } {
  const headBytes = Buffer.byteLength(head);
  const bodyBytes = typeof body === 'string' ? Buffer.byteLength(body) : partsLength(body);
  const payload = headBytes + bodyBytes;
  const prefix = `${payload} `;
  // `<payload bytes> <crc32, 8 hex> `: the prefix, 8 hex digits and a space.
  const start = prefix.length + 9;
  // Slow (unpooled): a view of the body may outlive the write (the journal's held tail).
  const data = Buffer.allocUnsafeSlow(start + payload + 1);
  data.write(prefix, 0, 'latin1');
  data.write(head, start, 'utf8');
  if (typeof body === 'string') data.write(body, start + headBytes, 'utf8');
  else {
    let at = start + headBytes;
    for (const part of body) {
      data.set(part, at);
      at += part.length;
    }
  }
  data.write(`${checksum(data.subarray(start, start + payload))} `, prefix.length, 'latin1');
  data[start + payload] = NEWLINE;
  return { data, bodyAt: start + headBytes };
}

function partsLength(parts: readonly Uint8Array[]): number {
  let bytes = 0;
  for (const part of parts) bytes += part.length;
  return bytes;
}

/** What an append writes: text (UTF-8) and bytes, in order. */
export type Chunk = string | Buffer;

/** Most buffers handed to one writev (Linux's IOV_MAX): above it libuv splits the call, and each part would be a durable write of its own. */
const MAX_IOVECS = 1024;

/** `data` as buffers for one writev when it is several buffers only (nothing to encode), else null. */
function asBuffers(data: Chunk | readonly Chunk[]): Buffer[] | null {
  if (typeof data === 'string' || Buffer.isBuffer(data) || data.length < 2 || data.length > MAX_IOVECS) return null;
  const buffers: Buffer[] = [];
  for (const chunk of data) {
    if (typeof chunk === 'string') return null;
    buffers.push(chunk);
  }
  return buffers;
}

function toBytes(data: Chunk | readonly Chunk[]): Buffer {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (Buffer.isBuffer(data)) return data;
  return Buffer.concat(data.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c)));
}

/** A region of a file that holds no valid record. */
export interface DamagedRegion {
  offset: number;
  bytes: number;
}

export interface ScanResult {
  /** Payloads of the valid records, in file order. */
  payloads: string[];
  damaged: DamagedRegion[];
  /** Bytes up to the end of the last complete line: an unterminated tail starts here. */
  completeBytes: number;
  /** Length of the file read. */
  totalBytes: number;
}

/**
 * Reads the records of `data`. `legacy` accepts a line written before records were framed (the
 * line itself is its payload), so a queue written by an older Svc is still read.
 */
export function scanRecords(data: Buffer, legacy: (line: string) => boolean = () => false): ScanResult {
  const payloads: string[] = [];
  const damaged: DamagedRegion[] = [];
  let pos = 0;
  while (pos < data.length) {
    const end = data.indexOf(NEWLINE, pos);
    if (end === -1) break;
    const payload = payloadOf(data.subarray(pos, end), legacy);
    if (payload !== null) payloads.push(payload);
    else {
      const last = damaged[damaged.length - 1];
      // Adjacent damaged lines are one region.
      if (last && last.offset + last.bytes === pos) last.bytes += end + 1 - pos;
      else damaged.push({ offset: pos, bytes: end + 1 - pos });
    }
    pos = end + 1;
  }
  return { payloads, damaged, completeBytes: pos, totalBytes: data.length };
}

function payloadOf(line: Buffer, legacy: (line: string) => boolean): string | null {
  const head = HEADER.exec(line.subarray(0, 21).toString('latin1'));
  if (head) {
    const start = (head[0] ?? '').length;
    const body = line.subarray(start);
    if (body.length === Number(head[1]) && checksum(body) === head[2]) return body.toString('utf8');
    return null;
  }
  const text = line.toString('utf8');
  return legacy(text) ? text : null;
}

/** Reads and checks a log file; an unterminated tail is cut off (and the file truncated to match). */
export function readRecords(path: string, legacy?: (line: string) => boolean): ScanResult {
  const result = scanRecords(readFileSync(path), legacy);
  if (result.completeBytes < result.totalBytes) {
    const fd = openSync(path, 'r+');
    try {
      ftruncateSync(fd, result.completeBytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }
  return result;
}

function describe(err: unknown): string {
  if (err instanceof Error && 'code' in err && typeof err.code === 'string')
    return err.code === 'ENOSPC' ? 'ENOSPC: no space left on device' : `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

/** An append-only file whose appends are whole and synced, or rolled back. */
export class AppendLog {
  /** Bytes of whole, synced records: the file is truncated back here after a failure. */
  private good: number;
  /** A rollback that failed: retried before the next append. */
  private dirty = false;

  private constructor(
    readonly path: string,
    private readonly handle: FileHandle,
    size: number,
    private readonly dsync: boolean,
  ) {
    this.good = size;
  }

  /**
   * `dsync`: the file is opened with O_DSYNC, so a write returns once its data is on disk: one
   * system call (and one trip to libuv's thread pool) per append instead of a write and an
   * fdatasync, with the same promise (the queue journal's group commits, bench/pipeline.mjs). Its
   * appends are then always synced (`sync: false` has no effect).
   */
  static async open(path: string, options: { dsync?: boolean } = {}): Promise<AppendLog> {
    const dsync = options.dsync === true;
    const handle = await open(
      path,
      dsync ? constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_DSYNC : 'a',
    );
    const { size } = await stat(path);
    return new AppendLog(path, handle, size, dsync);
  }

  /** Bytes of whole records in the file. */
  get size(): number {
    return this.good;
  }

  /**
   * Appends `data` (whole records) and syncs; on any failure the file is as it was before. With
   * `sync: false` the records are written but not synced (see `sync`): they survive the process,
   * not a power loss.
   *
   * An unsynced append (of a file not opened with O_DSYNC) is written at once, on the calling thread,
   * before `append` returns its promise: not through libuv's thread pool. It only copies a few bytes
   * into the page cache (the queue's ack lines, a few dozen bytes per delivery), a short block of
   * the loop, while the pool's round trip costs a job hand-off, a wake-up of the loop and a promise
   * turn each: with the durable audit API the ack writes were half of the pool's jobs. `node
   * bench/audit-api.mjs --durable --threads` shows the pool's CPU and these appends per request, and
   * test/shared/queue/local/append-log.test.ts that the write is done before `append` returns. A
   * synced append stays in the pool: it waits for the disk.
   */
  async append(data: Chunk | readonly Chunk[], options: { sync?: boolean } = {}): Promise<void> {
    if (this.dirty) {
      try {
        await this.rollback();
      } catch (err) {
        throw new QueueStorageError(`cannot repair ${this.path} after a failed write (${describe(err)})`, {
          cause: err,
        });
      }
    }
    const buffers = asBuffers(data);
    // Several buffers go out in one writev, not copied into one first; a short writev (rare: a
    // signal, a full device) goes on from a copy of them all, at the offset reached.
    const total = buffers === null ? 0 : buffers.reduce((n, b) => n + b.length, 0);
    let written = 0;
    let bytes: Buffer | undefined;
    const now = options.sync === false && !this.dsync;
    try {
      if (buffers !== null) {
        written = now ? writevSync(this.handle.fd, buffers) : (await this.handle.writev(buffers)).bytesWritten;
        if (written < total) bytes = Buffer.concat(buffers, total);
      } else {
        bytes = toBytes(data);
      }
      while (bytes !== undefined && written < bytes.length) {
        const bytesWritten = now
          ? writeSync(this.handle.fd, bytes, written, bytes.length - written)
          : (await this.handle.write(bytes, written, bytes.length - written)).bytesWritten;
        // No progress without an error: the device takes nothing more.
        if (bytesWritten <= 0) throw Object.assign(new Error('the write made no progress'), { code: 'ENOSPC' });
        written += bytesWritten;
      }
      if (options.sync !== false && !this.dsync) await this.handle.datasync();
    } catch (err) {
      await this.rollback().catch(() => undefined);
      throw new QueueStorageError(`cannot write to ${this.path} (${describe(err)})`, { cause: err });
    }
    this.good += written;
  }

  /**
   * Syncs what earlier `append(…, { sync: false })` calls wrote. A failure is the caller's to report:
   * nothing is rolled back (the records are whole; only their durability is in doubt).
   */
  async sync(): Promise<void> {
    await this.handle.datasync();
  }

  private async rollback(): Promise<void> {
    this.dirty = true;
    await this.handle.truncate(this.good);
    await this.handle.datasync();
    this.dirty = false;
  }

  async close(): Promise<void> {
    await this.handle.close();
  }
}

/** Appends that wait together for one write + sync: those made while the last one runs (and, with `wholeTurn`, those of one turn). */
export class GroupCommit {
  private queue: { data: Chunk | readonly Chunk[]; resolve: () => void; reject: (err: unknown) => void }[] = [];
  private running: Promise<void> | undefined;

  /**
   * `flush` writes the data of `added` appends together. `wholeTurn`: the first write waits for the
   * rest of the turn's synchronous work (a microtask), so appends made together go in one write (the
   * journal's segments: a round of the edge's batcher makes its messages at once; bench:udp-steps counted 2
   * writes per round without it, the first message alone). Without it (the ack logs, written
   * unsynced) an append is written before `add` returns.
   */
  constructor(
    private readonly flush: (data: Chunk[], added: number) => Promise<void>,
    private readonly wholeTurn = false,
  ) {}

  add(data: Chunk | readonly Chunk[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ data, resolve, reject });
      this.running ??= this.drain();
    });
  }

  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    if (this.wholeTurn) await Promise.resolve();
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.flush(
          batch.flatMap((b) => b.data),
          batch.length,
        );
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.running = undefined;
  }
}

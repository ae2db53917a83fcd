/**
 * The idempotency store of local mode: records in memory, persisted as an append-only log of
 * framed records (`<key> <receivedAt ms>`, see queue/append-log.ts) in the queue directory, which
 * the queue's lock already reserves for one process. A record is on disk (synced) before
 * `complete` resolves, so it survives `kill -9` and power loss alike. At start the log is read
 * (expired records dropped, the file rewritten when it has grown), and the events still pending in
 * the queue are added, which closes the gap of a crash between queueing an event and recording it.
 *
 * Memory is bounded: at most `maxEntries` records (about 100 bytes each); past that the oldest are
 * forgotten before their window ends, and a repeat of one of those is queued again.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AppendLog, frame, GroupCommit, readRecords } from '../queue/append-log.js';
import type { Component } from '../runtime/lifecycle.js';
import { writeFileAtomically } from '../util/files.js';
import { LogThrottle } from '../logging/throttle.js';
import { assertValidWindow, type Claim, type IdempotencyStore } from './port.js';

export const IDEMPOTENCY_FILE = 'idempotency.log';
const LINE = /^(\S{1,200}) (\d{1,16})$/;

export interface LocalIdempotencyLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface LocalIdempotencyOptions {
  directory: string;
  windowSeconds: number;
  maxEntries: number;
  log: LocalIdempotencyLog;
  /** Events queued but not yet delivered at start (key and receivedAt ms): they count as recorded. */
  recover?: () => Iterable<{ key: string; receivedAtMs: number }>;
  now?: () => number;
}

export class LocalIdempotencyStore implements IdempotencyStore, Component {
  readonly name = 'idempotency store (local)';
  /** key → receivedAt ms, oldest first (insertion order). */
  private readonly records = new Map<string, number>();
  private readonly claims = new Set<string>();
  private file: AppendLog | undefined;
  private commits: GroupCommit | undefined;
  /** Lines in the file, to know when a rewrite pays off. */
  private lines = 0;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly trouble = new LogThrottle(60_000);

  constructor(private readonly options: LocalIdempotencyOptions) {
    assertValidWindow(options.windowSeconds);
    if (!Number.isSafeInteger(options.maxEntries) || options.maxEntries < 1) throw new RangeError(`maxEntries must be a positive integer, got ${String(options.maxEntries)}`);
    this.windowMs = options.windowSeconds * 1000;
    this.now = options.now ?? Date.now;
  }

  private get path(): string {
    return join(this.options.directory, IDEMPOTENCY_FILE);
  }

  async start(): Promise<void> {
    const now = this.now();
    if (existsSync(this.path)) {
      const scan = readRecords(this.path);
      for (const payload of scan.payloads) {
        const m = LINE.exec(payload);
        if (m) this.remember(m[1] ?? '', Number(m[2]), now);
      }
      if (scan.damaged.length > 0) this.options.log.warn({ file: this.path, damaged: scan.damaged }, `idempotency log ${this.path} has ${scan.damaged.length} damaged region(s); repeats of those events may be queued again`);
      this.lines = scan.payloads.length;
    }
    let recovered = 0;
    for (const { key, receivedAtMs } of this.options.recover?.() ?? []) {
      if (!this.records.has(key)) recovered += 1;
      this.remember(key, receivedAtMs, now);
    }
    // Start from a file of exactly the live records (expired ones dropped, recovered ones added).
    if (this.lines !== this.records.size || recovered > 0) this.rewrite();
    this.file = await AppendLog.open(this.path);
    this.commits = new GroupCommit((data) => this.flush(data));
    this.options.log.info({ records: this.records.size, recovered, file: this.path }, `idempotency store holds ${this.records.size} event id(s) of the last ${this.options.windowSeconds} s`);
  }

  async stop(): Promise<void> {
    await this.commits?.idle();
    await this.file?.close();
    this.file = undefined;
  }

  private remember(key: string, receivedAtMs: number, now: number): void {
    if (receivedAtMs + this.windowMs <= now) return;
    this.records.delete(key); // re-inserted at the end: the order stays oldest first
    this.records.set(key, receivedAtMs);
    this.evict(now);
  }

  /** Drops expired records, and the oldest beyond maxEntries. */
  private evict(now: number): void {
    for (const [key, at] of this.records) {
      if (at + this.windowMs > now && this.records.size <= this.options.maxEntries) break;
      this.records.delete(key);
    }
  }

  private rewrite(): void {
    writeFileAtomically(this.path, [...this.records].map(([key, at]) => frame(`${key} ${at}`)).join(''));
    this.lines = this.records.size;
  }

  private async flush(data: string): Promise<void> {
    const file = this.file;
    if (!file) throw new Error('the idempotency store is not running');
    // The file also holds expired and forgotten records: rewrite it once they are the majority.
    if (this.lines > 2 * this.records.size + 10_000) {
      await file.close();
      this.rewrite();
      this.file = await AppendLog.open(this.path);
      return;
    }
    await file.append(data);
    this.lines += data.split('\n').length - 1;
  }

  claim(key: string, nowMs: number): Promise<Claim> {
    const at = this.records.get(key);
    if (at !== undefined && at + this.windowMs > nowMs) return Promise.resolve({ status: 'duplicate', receivedAt: new Date(at).toISOString() });
    if (this.claims.has(key)) return Promise.resolve({ status: 'in-progress' });
    this.claims.add(key);
    return Promise.resolve({ status: 'claimed' });
  }

  async complete(key: string, receivedAt: string, nowMs: number): Promise<void> {
    this.claims.delete(key);
    const at = Date.parse(receivedAt);
    this.remember(key, at, nowMs);
    try {
      if (!this.commits) throw new Error('the idempotency store is not running');
      await this.commits.add(frame(`${key} ${at}`));
    } catch (err) {
      // The event is queued and the record is in memory; only a crash before the next successful
      // write (or the queue's own recovery at start) could forget it. Never fail the request for it.
      const { log, suppressed } = this.trouble.take('write');
      if (log) this.options.log.error({ err, suppressed }, `cannot write the idempotency log ${this.path}; the record is kept in memory`);
    }
  }

  release(key: string): Promise<void> {
    this.claims.delete(key);
    return Promise.resolve();
  }

  /** Records held (for tests and stats). */
  get size(): number {
    return this.records.size;
  }
}

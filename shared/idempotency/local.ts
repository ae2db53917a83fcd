/**
 * The idempotency store of local mode: records in memory, persisted as an append-only log of
 * framed records (`<key> <receivedAt ms>`, see queue/local/append-log.ts) in the queue directory, which
 * the queue's lock already reserves for one process.
 *
 * The queue's journal is what makes a record crash-safe, not this file alone. Every accepted event
 * is in the journal, synced, before the 202; when the queue opens, it shows this store every event
 * still in its files, delivered or not, before it deletes any of them (`recover`), and the store
 * writes those ids to its file at once. So `complete` only notes the record: the lines are written
 * and synced together at most SYNC_INTERVAL_MS later (and at stop). A crash loses at most that
 * second of lines, and the journal still holds every event they were about. Syncing this file
 * before each 202 cost a third of the API's throughput, and syncing at every write a fifth, since
 * the two files' syncs queue behind each other on the disk (`npm run bench:audit -- --durable`);
 * neither bought any safety.
 *
 * Memory is bounded: at most `maxEntries` records (about 100 bytes each); past that the oldest are
 * forgotten before their window ends, and a repeat of one of those is queued again.
 */
import { closeSync, existsSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Log } from '../logging/log.js';
import { LogThrottle } from '../logging/throttle.js';
import { AppendLog, frame, readRecords } from '../queue/local/index.js';
import type { Component } from '../runtime/lifecycle.js';
import { Fifo } from '../util/fifo.js';
import { writeFileAtomically } from '../util/files.js';
import { assertValidWindow, type Claim, type IdempotencyStore } from './port.js';

export const IDEMPOTENCY_FILE = 'idempotency.log';
/** Longest time a record waits in memory before it is written and synced. */
export const SYNC_INTERVAL_MS = 1000;
const LINE = /^(\S{1,200}) (\d{1,16})$/;

export interface LocalIdempotencyOptions {
  directory: string;
  windowSeconds: number;
  maxEntries: number;
  log: Log;
  now?: () => number;
}

export class LocalIdempotencyStore implements IdempotencyStore, Component {
  readonly name = 'idempotency store (local)';
  /** key → receivedAt ms, oldest first (insertion order). */
  private readonly records = new Map<string, number>();
  /**
   * The records' order, oldest first, as key and receivedAt from `head` on; an entry whose key now
   * maps to another time (or to none) is stale and skipped. Eviction reads the oldest here, not from
   * the Map: the first entry of a Map with many deletes sits behind their holes, so iterating from
   * its start walks them on every request once the store is full, at a cost that rises with the
   * holes (bench/eviction.mjs measures claim + complete once full against a plain Set's add and delete).
   */
  private readonly orderKeys = new Fifo<string>();
  private readonly orderTimes = new Fifo<number>();
  private readonly claims = new Set<string>();
  private file: AppendLog | undefined;
  /** Lines noted since the last write. */
  private buffered: string[] = [];
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Lines in the file, to know when a rewrite pays off. */
  private lines = 0;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly trouble = new LogThrottle(60_000);

  constructor(private readonly options: LocalIdempotencyOptions) {
    assertValidWindow(options.windowSeconds);
    if (!Number.isSafeInteger(options.maxEntries) || options.maxEntries < 1)
      throw new RangeError(`maxEntries must be a positive integer, got ${String(options.maxEntries)}`);
    this.windowMs = options.windowSeconds * 1000;
    this.now = options.now ?? Date.now;
  }

  private get path(): string {
    return join(this.options.directory, IDEMPOTENCY_FILE);
  }

  /**
   * Writes (and syncs) records of events the queue found on disk at its start, before it deletes
   * the delivered ones; called before `start`, which then reads them with the rest of the file.
   */
  recover(entries: Iterable<{ key: string; receivedAtMs: number }>): void {
    const now = this.now();
    const lines: string[] = [];
    for (const { key, receivedAtMs } of entries)
      if (receivedAtMs + this.windowMs > now && LINE.test(`${key} ${receivedAtMs}`))
        lines.push(frame(`${key} ${receivedAtMs}`));
    if (lines.length === 0) return;
    const fd = openSync(this.path, 'a', 0o640);
    try {
      writeSync(fd, lines.join(''));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  async start(): Promise<void> {
    const now = this.now();
    if (existsSync(this.path)) {
      const scan = readRecords(this.path);
      for (const payload of scan.payloads) {
        const m = LINE.exec(payload);
        if (m) this.remember(m[1] ?? '', Number(m[2]), now);
      }
      if (scan.damaged.length > 0)
        this.options.log.warn(
          { file: this.path, damaged: scan.damaged },
          `idempotency log ${this.path} has ${scan.damaged.length} damaged region(s); repeats of those events may be queued again`,
        );
      this.lines = scan.payloads.length;
    }
    // Start from a file of exactly the live records (expired and repeated ones dropped).
    if (this.lines !== this.records.size) this.rewrite();
    this.file = await AppendLog.open(this.path);
    this.timer = setInterval(() => void this.write(), SYNC_INTERVAL_MS);
    this.timer.unref();
    this.options.log.info(
      { records: this.records.size, file: this.path },
      `idempotency store holds ${this.records.size} event id(s) of the last ${this.options.windowSeconds} s`,
    );
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.write();
    await this.file?.close();
    this.file = undefined;
  }

  private remember(key: string, receivedAtMs: number, now: number): void {
    if (receivedAtMs + this.windowMs <= now) return;
    // The same record again keeps its place; another time for the key goes to the end, so the
    // order stays oldest first.
    if (this.records.get(key) === receivedAtMs) return;
    this.records.delete(key);
    this.records.set(key, receivedAtMs);
    this.orderKeys.push(key);
    this.orderTimes.push(receivedAtMs);
    this.evict(now);
  }

  /** Drops expired records, and the oldest beyond maxEntries. */
  private evict(now: number): void {
    for (let key = this.orderKeys.peek(); key !== undefined; key = this.orderKeys.peek()) {
      // Pushed with its key, so never missing; NaN would only read as stale.
      const at = this.orderTimes.peek() ?? Number.NaN;
      if (this.records.get(key) === at) {
        if (at + this.windowMs > now && this.records.size <= this.options.maxEntries) break;
        this.records.delete(key);
      }
      this.orderKeys.shift();
      this.orderTimes.shift();
    }
  }

  private rewrite(): void {
    writeFileAtomically(this.path, [...this.records].map(([key, at]) => frame(`${key} ${at}`)).join(''));
    this.lines = this.records.size;
  }

  /** Writes and syncs the noted lines (one at a time); the file is rewritten once stale lines are the majority. */
  private write(): Promise<void> {
    this.writing ??= (async () => {
      while (this.buffered.length > 0 && this.file) {
        const lines = this.buffered;
        this.buffered = [];
        try {
          if (this.lines + lines.length > 2 * this.records.size + 10_000) {
            await this.file.close();
            this.rewrite();
            this.file = await AppendLog.open(this.path);
          } else {
            await this.file.append(lines.join(''));
            this.lines += lines.length;
          }
        } catch (err) {
          // The records stay in memory, and the journal still holds their events: try again later.
          this.buffered = [...lines, ...this.buffered];
          const { log, suppressed } = this.trouble.take('write');
          if (log)
            this.options.log.error(
              { err, suppressed },
              `cannot write the idempotency log ${this.path}; the records are kept in memory and written later`,
            );
          break;
        }
      }
    })().finally(() => (this.writing = undefined));
    return this.writing;
  }

  claim(key: string, nowMs: number): Promise<Claim> {
    const at = this.records.get(key);
    if (at !== undefined && at + this.windowMs > nowMs)
      return Promise.resolve({ status: 'duplicate', receivedAt: new Date(at).toISOString() });
    if (this.claims.has(key)) return Promise.resolve({ status: 'in-progress' });
    this.claims.add(key);
    return Promise.resolve({ status: 'claimed' });
  }

  complete(key: string, receivedAt: string, nowMs: number): Promise<void> {
    this.claims.delete(key);
    const at = Date.parse(receivedAt);
    this.remember(key, at, nowMs);
    this.buffered.push(frame(`${key} ${at}`));
    return Promise.resolve();
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

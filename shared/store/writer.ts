/**
 * The store writer: the one connection that writes the embedded store (database.ts), shared by the
 * audit queue's and the platform queue's store destinations and by Svc's own counters. A delivery
 * is written by transactions of whole events: the events' rows by `INSERT OR IGNORE` on the
 * table's key (a redelivered event adds nothing), the rollups of exactly the rows inserted (so a
 * redelivery counts nothing twice), and the `servers` rows the events name. A delivery is
 * acknowledged by the queue only after its last commit returned, synced (synchronous=FULL).
 *
 * Threading: the store runs it in a worker thread (thread.ts), one `write` per delivery. On the
 * main thread (the single executable) a delivery is written by `writeInSlices`: transactions of
 * STORE_SLICE_EVENTS events with the event loop running between them, only the last commit synced.
 * The lock wait is short either way (STORE_BUSY_TIMEOUT_MS: no other connection writes the file;
 * the read API's is read-only).
 */
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { setImmediate } from 'node:timers/promises';
import type { QueuedEvent } from '../queue/events.js';
import { openStoreDatabase } from './database.js';
import { HOUR_MS, PERF_HISTOGRAM_BOUNDS_MS } from './ddl.js';
import {
  auditCells,
  type Cell,
  eventTime,
  healthCells,
  histogramBucket,
  isPerf,
  type KnownServer,
  logRow,
  perfRow,
  polledServer,
  ServerNames,
  type ServerSighting,
  sessionCells,
  sessionUsers,
  userEventCells,
} from './rows.js';
import { runUpkeep, type UpkeepReport, type UpkeepSettings } from './upkeep.js';

/**
 * Events per transaction of a delivery (writeInSlices): between two slices the event loop runs the
 * UDP listeners. Small enough that a slice holds the loop for a few milliseconds.
 */
export const STORE_SLICE_EVENTS = 100;

/** A session run continues while the user is listed again within this many polling intervals. */
export const PRESENCE_GAP_INTERVALS = 2.5;

/** SQLite's primary result codes that say the store cannot write now, whatever the events are. */
const UNAVAILABLE_CODES = new Map([
  [5, 'the database is locked by another connection (SQLITE_BUSY)'],
  [6, 'a table is locked (SQLITE_LOCKED)'],
  [7, 'out of memory (SQLITE_NOMEM)'],
  [8, 'the database is read-only (SQLITE_READONLY)'],
  [10, 'a disk I/O error (SQLITE_IOERR)'],
  [11, 'the database file is corrupt (SQLITE_CORRUPT)'],
  [13, 'the disk is full (SQLITE_FULL)'],
  [14, 'the database file cannot be opened (SQLITE_CANTOPEN)'],
  [26, 'the file is not a database (SQLITE_NOTADB)'],
]);

/**
 * The store cannot write now for a reason none of the events caused (locked, read-only, full,
 * corrupt, its file gone and not re-creatable): the events wait in the queue and come again.
 */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';

  constructor(
    message: string,
    override readonly cause: unknown,
  ) {
    super(message);
  }
}

/** Why SQLite failed, when it says the store is unavailable; null for any other error. */
function unavailableReason(err: unknown): string | null {
  if (typeof err !== 'object' || err === null || !('errcode' in err)) return null;
  const code = Number(err.errcode) & 0xff;
  return UNAVAILABLE_CODES.get(code) ?? null;
}

export interface StoreWriterOptions {
  /** `Svc.store.path`. */
  path: string;
  /** `serversToMonitor.servers[]`: a UDP event's host is the configured server of that host. */
  servers: readonly KnownServer[];
  /** `userSessions.pollingInterval`: a user's presence run breaks after PRESENCE_GAP_INTERVALS of them. */
  sessionPollMs: number;
  /** Upkeep's settings (`Svc.store`). */
  upkeep: UpkeepSettings;
}

/** What one `write` did. */
export interface StoreWriteResult {
  /** Rows inserted into the event tables. */
  inserted: number;
  /** Events already in the store (a redelivery). */
  duplicates: number;
  /** Events that cannot become rows (a bad point time), with why: never written, delivered again. */
  rejected: Map<string, string>;
}

/** One of Svc's own counters at a sample time (`svc_counters`). */
export interface CounterSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Statements {
  upsertServer: StatementSync;
  health: StatementSync;
  session: StatementSync;
  lastPresence: StatementSync;
  extendPresence: StatementSync;
  newPresence: StatementSync;
  userEvent: StatementSync;
  logEvent: StatementSync;
  logCount: StatementSync;
  perfEvent: StatementSync;
  perfHourly: StatementSync;
  perfHourlyUpsert: StatementSync;
  audit: StatementSync;
  counter: StatementSync;
}

const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');

function prepareStatements(db: DatabaseSync): Statements {
  return {
    upsertServer: db.prepare(
      `INSERT INTO servers (name, host, description, tags, first_seen_ms, last_seen_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET
         host = CASE WHEN excluded.host <> '' THEN excluded.host ELSE servers.host END,
         description = CASE WHEN excluded.description <> '' THEN excluded.description ELSE servers.description END,
         tags = CASE WHEN excluded.tags <> '{}' AND excluded.last_seen_ms >= servers.last_seen_ms THEN excluded.tags ELSE servers.tags END,
         first_seen_ms = min(servers.first_seen_ms, excluded.first_seen_ms),
         last_seen_ms = max(servers.last_seen_ms, excluded.last_seen_ms)
       RETURNING id`,
    ),
    health: db.prepare(`INSERT OR IGNORE INTO health VALUES (${placeholders(25)})`),
    session: db.prepare(`INSERT OR IGNORE INTO session_samples VALUES (${placeholders(6)})`),
    lastPresence: db.prepare(
      `SELECT id, start_ms, end_ms FROM session_presence
       WHERE user_full = ? AND server_id = ? AND virtual_proxy = ? ORDER BY end_ms DESC LIMIT 1`,
    ),
    extendPresence: db.prepare(
      'UPDATE session_presence SET start_ms = min(start_ms, ?), end_ms = max(end_ms, ?) WHERE id = ?',
    ),
    newPresence: db.prepare(
      'INSERT INTO session_presence (server_id, virtual_proxy, user_full, start_ms, end_ms) VALUES (?, ?, ?, ?, ?)',
    ),
    userEvent: db.prepare(`INSERT OR IGNORE INTO user_events VALUES (${placeholders(14)})`),
    logEvent: db.prepare(`INSERT OR IGNORE INTO log_events VALUES (${placeholders(13)})`),
    logCount: db.prepare(
      `INSERT INTO log_counts_hourly VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT DO UPDATE SET count = count + excluded.count`,
    ),
    perfEvent: db.prepare(`INSERT OR IGNORE INTO perf_events VALUES (${placeholders(17)})`),
    perfHourly: db.prepare(
      `SELECT count, total_ms, max_ms, hist FROM perf_hourly
       WHERE hour_ms = ? AND server_id = ? AND app_id = ? AND object_id = ? AND method = ? AND user_full = ?`,
    ),
    perfHourlyUpsert: db.prepare(`INSERT OR REPLACE INTO perf_hourly VALUES (${placeholders(12)})`),
    audit: db.prepare(`INSERT OR IGNORE INTO audit_events VALUES (${placeholders(9)})`),
    counter: db.prepare('INSERT OR REPLACE INTO svc_counters VALUES (?, ?, ?, ?)'),
  };
}

/** One hourly engine-performance row being summed over a delivery. */
interface PerfHour {
  keyCells: Cell[];
  appName: string;
  objectType: string;
  count: number;
  totalMs: number;
  maxMs: number;
  hist: number[];
}

/** What a delivery's transaction gathers for its rollups, written once per key at its end. */
class DeliveryRollups {
  readonly logCounts = new Map<string, { cells: Cell[]; count: number }>();
  readonly perf = new Map<string, PerfHour>();

  countLog(cells: Cell[]): void {
    const key = JSON.stringify(cells);
    const found = this.logCounts.get(key);
    if (found) found.count++;
    else this.logCounts.set(key, { cells, count: 1 });
  }

  addPerf(hourMs: number, serverId: number, row: ReturnType<typeof perfRow>): void {
    const [appId, appName, objectId, objectType, method, user] = row.key;
    const keyCells: Cell[] = [hourMs, serverId, appId, objectId, method, user];
    const key = JSON.stringify(keyCells);
    let hour = this.perf.get(key);
    if (!hour) {
      hour = { keyCells, appName, objectType, count: 0, totalMs: 0, maxMs: 0, hist: emptyHistogram() };
      this.perf.set(key, hour);
    }
    hour.count++;
    if (row.processTime !== null) {
      hour.totalMs += row.processTime;
      hour.maxMs = Math.max(hour.maxMs, row.processTime);
      const bucket = histogramBucket(row.processTime);
      hour.hist[bucket] = (hour.hist[bucket] ?? 0) + 1;
    }
  }
}

const emptyHistogram = (): number[] => new Array<number>(PERF_HISTOGRAM_BOUNDS_MS.length + 1).fill(0);

/** A stored histogram merged into `into`; a malformed one (never written by Svc) counts nothing. */
function mergeHistogram(into: number[], stored: unknown): void {
  if (typeof stored !== 'string') return;
  const parsed: unknown = JSON.parse(stored);
  if (!Array.isArray(parsed)) return;
  parsed.forEach((count: unknown, i) => {
    if (typeof count === 'number' && i < into.length) into[i] = (into[i] ?? 0) + count;
  });
}

const changed = (result: { changes: number | bigint }): boolean => Number(result.changes) > 0;

/** The store's one writing connection. Open it once (`open`), write deliveries, close it at stop. */
export class StoreWriter {
  readonly file: string;
  private db: DatabaseSync | null = null;
  private statements: Statements | null = null;
  /** The inode the connection has open: a file removed or replaced under Svc is opened anew. */
  private inode = 0;
  private readonly serverNames: ServerNames;

  constructor(private readonly options: StoreWriterOptions) {
    this.file = resolve(options.path);
    this.serverNames = new ServerNames(options.servers);
  }

  /** Opens (creating) the database. Throws StoreOpenError naming the file. */
  open(): void {
    if (this.db) return;
    const db = openStoreDatabase(this.file);
    this.db = db;
    this.statements = prepareStatements(db);
    this.inode = statSync(this.file).ino;
  }

  /** Checkpoints and closes the connection (its -wal and -shm files are removed by SQLite). */
  close(): void {
    const db = this.db;
    this.db = null;
    this.statements = null;
    if (!db?.isOpen) return;
    try {
      db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
  }

  /**
   * The connection, opened again when its file was removed or replaced since (SQLite would keep
   * writing to the removed file, and every row would be lost at the next start).
   */
  private connection(): { db: DatabaseSync; statements: Statements } {
    let inode = -1;
    try {
      inode = statSync(this.file).ino;
    } catch {
      // Removed: opened (re-created) below.
    }
    if (this.db && this.statements && inode === this.inode) return { db: this.db, statements: this.statements };
    const old = this.db;
    this.db = null;
    this.statements = null;
    if (old?.isOpen) old.close();
    try {
      this.open();
    } catch (err) {
      throw new StoreUnavailableError(err instanceof Error ? err.message : String(err), err);
    }
    if (!this.db || !this.statements) throw new StoreUnavailableError(`the store ${this.file} is not open`, null);
    return { db: this.db, statements: this.statements };
  }

  /**
   * Writes the events the store keeps (every kind but `points`) in one transaction. Throws
   * StoreUnavailableError when SQLite cannot write now (nothing of the delivery is written), and
   * any other error of the transaction as it is (nothing written either).
   */
  write(events: readonly QueuedEvent[]): StoreWriteResult {
    return this.transaction((_db, statements) => this.writeRows(statements, events));
  }

  /**
   * A delivery written in slices of `sliceEvents`, one transaction each, giving the event loop back
   * between them (the UDP listeners run there). Only the last slice's commit syncs
   * (synchronous=FULL; the others NORMAL): syncing the WAL makes every earlier commit durable too,
   * so the delivery is on disk when this resolves, at one sync. A slice committed before a crash
   * is no loss and no double count: the queue delivers the whole delivery again, and INSERT OR
   * IGNORE and the rollups of inserted rows only keep each event once.
   */
  async writeInSlices(events: readonly QueuedEvent[], sliceEvents = STORE_SLICE_EVENTS): Promise<StoreWriteResult> {
    const total: StoreWriteResult = { inserted: 0, duplicates: 0, rejected: new Map() };
    for (let start = 0; start < events.length; start += sliceEvents) {
      if (start > 0) await setImmediate();
      const slice = events.slice(start, start + sliceEvents);
      const last = start + sliceEvents >= events.length;
      const result = this.transaction((_db, statements) => this.writeRows(statements, slice), last);
      total.inserted += result.inserted;
      total.duplicates += result.duplicates;
      for (const [id, reason] of result.rejected) total.rejected.set(id, reason);
    }
    return total;
  }

  /** Svc's own counters sampled at `timeMs`, in one transaction (a sample written twice replaces itself). */
  writeCounters(timeMs: number, samples: readonly CounterSample[]): void {
    this.transaction((_db, statements) => {
      for (const s of samples) statements.counter.run(timeMs, s.name, JSON.stringify(s.labels), s.value);
    });
  }

  /** Rollups, retention and the size cap now (upkeep.ts), as at `nowMs`. */
  upkeep(nowMs: number): UpkeepReport {
    const { db } = this.connection();
    try {
      return runUpkeep(db, this.file, this.options.upkeep, nowMs);
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw asUnavailable(err, this.file);
    }
  }

  /** `body` in one transaction; its commit synced (`durable`, synchronous=FULL) or not (NORMAL: synced by a later one). */
  private transaction<T>(body: (db: DatabaseSync, statements: Statements) => T, durable = true): T {
    const { db, statements } = this.connection();
    try {
      db.exec(durable ? 'PRAGMA synchronous = FULL' : 'PRAGMA synchronous = NORMAL');
      db.exec('BEGIN IMMEDIATE');
      const result = body(db, statements);
      db.exec('COMMIT');
      return result;
    } catch (err) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw asUnavailable(err, this.file);
    }
  }

  private writeRows(statements: Statements, events: readonly QueuedEvent[]): StoreWriteResult {
    const result: StoreWriteResult = { inserted: 0, duplicates: 0, rejected: new Map() };
    const rollups = new DeliveryRollups();
    const serverIds = this.upsertServers(statements, events, result.rejected);
    const count = (inserted: boolean) => {
      if (inserted) result.inserted++;
      else result.duplicates++;
      return inserted;
    };
    for (const q of events) {
      if (result.rejected.has(q.id)) continue;
      const serverId = serverIds.get(q.id) ?? 0;
      switch (q.kind) {
        case 'health': {
          const { timeNs } = eventTime(q.timeNs);
          count(changed(statements.health.run(timeNs, serverId, ...healthCells(q.sample))));
          break;
        }
        case 'user-sessions': {
          const { timeNs, ms } = eventTime(q.timeNs);
          if (count(changed(statements.session.run(timeNs, serverId, ...sessionCells(q.sample)))))
            this.presence(statements, serverId, q.sample.virtualProxy, sessionUsers(q.sample), ms);
          break;
        }
        case 'user-event': {
          const { timeNs } = eventTime(q.timeNs);
          count(changed(statements.userEvent.run(timeNs, serverId, ...userEventCells(q))));
          break;
        }
        case 'log-event': {
          const { timeNs, ms } = eventTime(q.timeNs);
          const hourMs = Math.floor(ms / HOUR_MS) * HOUR_MS;
          const e = q.event;
          if (isPerf(e)) {
            const row = perfRow(e);
            if (count(changed(statements.perfEvent.run(timeNs, serverId, ...row.cells))))
              rollups.addPerf(hourMs, serverId, row);
          } else {
            const row = logRow(e);
            if (count(changed(statements.logEvent.run(timeNs, serverId, ...row.cells))))
              for (const category of row.categories)
                rollups.countLog([hourMs, serverId, row.source, row.level, category]);
          }
          break;
        }
        case 'audit':
          count(changed(statements.audit.run(...auditCells(q))));
          break;
        case 'points':
          break;
      }
    }
    for (const { cells, count: n } of rollups.logCounts.values()) statements.logCount.run(...cells, n);
    for (const hour of rollups.perf.values()) this.writePerfHour(statements, hour);
    return result;
  }

  /** Upserts the servers the events name; the id of each event's server by event id. Events whose time is bad are rejected. */
  private upsertServers(
    statements: Statements,
    events: readonly QueuedEvent[],
    rejected: Map<string, string>,
  ): Map<string, number> {
    const sightings = new Map<string, ServerSighting>();
    const serverOf = new Map<string, string>();
    for (const q of events) {
      if (q.kind === 'audit' || q.kind === 'points') continue;
      let ms: number;
      try {
        ms = eventTime(q.timeNs).ms;
      } catch (err) {
        rejected.set(q.id, err instanceof Error ? err.message : String(err));
        continue;
      }
      const sighting =
        q.kind === 'health' || q.kind === 'user-sessions'
          ? polledServer(q, ms)
          : this.serverNames.ofHost(q.event.host, ms);
      serverOf.set(q.id, sighting.name);
      const seen = sightings.get(sighting.name);
      sightings.set(sighting.name, seen ? mergeSightings(seen, sighting) : sighting);
    }
    const ids = new Map<string, number>();
    for (const s of sightings.values()) {
      const row = statements.upsertServer.get(s.name, s.host, s.description, s.tags ?? '{}', s.ms, s.ms);
      ids.set(s.name, Number(row?.id));
    }
    const byEvent = new Map<string, number>();
    for (const [eventId, name] of serverOf) byEvent.set(eventId, ids.get(name) ?? 0);
    return byEvent;
  }

  /** Extends each listed user's presence run, or starts one when the gap since its end is too long. */
  private presence(statements: Statements, serverId: number, virtualProxy: string, users: string[], ms: number): void {
    const gap = PRESENCE_GAP_INTERVALS * this.options.sessionPollMs;
    for (const user of users) {
      const last = statements.lastPresence.get(user, serverId, virtualProxy);
      const start = Number(last?.start_ms);
      const end = Number(last?.end_ms);
      if (last && ms >= start - gap && ms <= end + gap) statements.extendPresence.run(ms, ms, Number(last.id));
      else statements.newPresence.run(serverId, virtualProxy, user, ms, ms);
    }
  }

  private writePerfHour(statements: Statements, hour: PerfHour): void {
    const stored = statements.perfHourly.get(...hour.keyCells);
    const hist = hour.hist;
    let { count, totalMs, maxMs } = hour;
    if (stored) {
      count += Number(stored.count);
      totalMs += Number(stored.total_ms);
      maxMs = Math.max(maxMs, Number(stored.max_ms));
      mergeHistogram(hist, stored.hist);
    }
    const [hourMs, serverId, appId, objectId, method, user] = hour.keyCells;
    statements.perfHourlyUpsert.run(
      hourMs ?? 0,
      serverId ?? 0,
      appId ?? '',
      hour.appName,
      objectId ?? '',
      hour.objectType,
      method ?? '',
      user ?? '',
      count,
      totalMs,
      maxMs,
      JSON.stringify(hist),
    );
  }
}

/** The newer of two sightings' details, over the span of both. */
function mergeSightings(a: ServerSighting, b: ServerSighting): ServerSighting {
  const newer = b.ms >= a.ms ? b : a;
  return {
    name: a.name,
    host: newer.host || a.host || b.host,
    description: newer.description || a.description || b.description,
    tags: newer.tags ?? a.tags ?? b.tags,
    ms: Math.max(a.ms, b.ms),
  };
}

/** SQLite's "cannot write now" errors as StoreUnavailableError naming the file; others unchanged. */
function asUnavailable(err: unknown, file: string): unknown {
  if (err instanceof StoreUnavailableError) return err;
  const reason = unavailableReason(err);
  return reason === null ? err : new StoreUnavailableError(`cannot write the store ${file}: ${reason}`, err);
}

/**
 * The alerts' part of the embedded store (model.ts `AlertStore`, the `alert_*` tables of ddl.ts):
 * the alerts pending and firing (so a restart neither fires them again nor forgets them), their
 * history, what each channel was told, and the silences.
 *
 * It has a read-write connection of its own to the store's file, which the store's writer thread
 * also writes: its transactions are a few small statements, and a lock held by the writer makes them
 * wait (the busy timeout of database.ts), not fail. The engine, `svc alerts …` and the read API's
 * POSTs each open one.
 */
import { randomBytes } from 'node:crypto';
import type { DatabaseSync, SQLInputValue, StatementSync } from 'node:sqlite';
import { ALERT_SEVERITIES } from '../config/sections/alerts.js';
import { openStoreDatabase } from '../store/database.js';
import { jsonObject, num, numOrNull, type Row, str, strOrNull } from '../store/queries/common.js';
import { pruneAlerts } from '../store/upkeep.js';
import type {
  AlertPhase,
  AlertRecord,
  AlertSeverity,
  AlertStore,
  Delivery,
  HistoryEntry,
  HistoryEvent,
  ResolvedAlert,
  Silence,
  Transitions,
} from './model.js';

const HISTORY_EVENTS: readonly HistoryEvent[] = ['fired', 'notified', 'notify_failed', 'resolved', 'silenced'];

/** Tries at a fresh silence id before giving up (a collision of 8 random hex digits is rare; two in a row, rarer still). */
const SILENCE_ID_TRIES = 5;

/** The columns of `alert_state`, in the order of `stateCells`. */
const STATE_COLUMNS =
  'fingerprint, rule_id, rule, severity, labels, summary, link, phase, active_since_ms, fired_at_ms, value, last_seen_ms';
const HISTORY_COLUMNS = 'time_ms, fingerprint, rule, severity, labels, event, value, channel, detail';
const SILENCE_COLUMNS = 'id, rule, matchers, starts_at_ms, ends_at_ms, created_by, comment, expired_at_ms';

/** No channel's delivery of the alert_resolved row's alert says firing. */
const NOT_TOLD_FIRING =
  "NOT EXISTS (SELECT 1 FROM alert_deliveries d WHERE d.fingerprint = alert_resolved.fingerprint AND d.status = 'firing')";

/** Whole numbers bound as integers (node:sqlite binds every JS number as REAL otherwise). */
function cell(value: number | null): SQLInputValue {
  return value !== null && Number.isSafeInteger(value) ? BigInt(value) : value;
}

function stateCells(alert: AlertRecord): SQLInputValue[] {
  return [
    alert.fingerprint,
    alert.ruleId,
    alert.rule,
    alert.severity,
    JSON.stringify(alert.labels),
    alert.summary,
    alert.link,
    alert.phase,
    cell(alert.activeSince),
    cell(alert.firedAt),
    alert.value,
    cell(alert.lastSeenAt),
  ];
}

/**
 * What of an alert's row is worth a write: everything but `lastSeenAt`, which moves at every
 * evaluation; it is written with the rest when anything else changes (the value, the phase, …).
 */
function stateKey(alert: AlertRecord): string {
  return JSON.stringify(stateCells({ ...alert, lastSeenAt: 0 }).map(String));
}

function labelsOf(row: Row, column: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(jsonObject(row, column)))
    if (typeof value === 'string') labels[key] = value;
  return labels;
}

function severityOf(row: Row): AlertSeverity {
  const text = str(row, 'severity');
  return ALERT_SEVERITIES.find((severity) => severity === text) ?? 'warning';
}

function alertOf(row: Row): AlertRecord {
  const phase: AlertPhase = str(row, 'phase') === 'firing' ? 'firing' : 'pending';
  return {
    fingerprint: str(row, 'fingerprint'),
    ruleId: str(row, 'rule_id'),
    rule: str(row, 'rule'),
    severity: severityOf(row),
    labels: labelsOf(row, 'labels'),
    summary: str(row, 'summary'),
    link: str(row, 'link'),
    phase,
    activeSince: num(row, 'active_since_ms'),
    firedAt: numOrNull(row, 'fired_at_ms'),
    value: num(row, 'value'),
    lastSeenAt: num(row, 'last_seen_ms'),
  };
}

function historyOf(row: Row): HistoryEntry {
  const text = str(row, 'event');
  return {
    id: num(row, 'id'),
    at: num(row, 'time_ms'),
    fingerprint: str(row, 'fingerprint'),
    rule: str(row, 'rule'),
    severity: severityOf(row),
    labels: labelsOf(row, 'labels'),
    event: HISTORY_EVENTS.find((event) => event === text) ?? 'fired',
    value: numOrNull(row, 'value'),
    channel: strOrNull(row, 'channel'),
    detail: strOrNull(row, 'detail'),
  };
}

function silenceOf(row: Row): Silence {
  return {
    id: str(row, 'id'),
    rule: strOrNull(row, 'rule'),
    matchers: labelsOf(row, 'matchers'),
    startsAt: num(row, 'starts_at_ms'),
    endsAt: num(row, 'ends_at_ms'),
    createdBy: str(row, 'created_by'),
    comment: str(row, 'comment'),
    expiredAt: numOrNull(row, 'expired_at_ms'),
  };
}

/** The alerts' store over a read-write connection to the embedded store's file. */
export class SqliteAlertStore implements AlertStore {
  private readonly statements: {
    state: StatementSync;
    upsertState: StatementSync;
    deleteState: StatementSync;
    insertHistory: StatementSync;
    deliveries: StatementSync;
    upsertDelivery: StatementSync;
    resolved: StatementSync;
    upsertResolved: StatementSync;
    deleteTold: StatementSync;
    deleteToldOne: StatementSync;
    lastSilenced: StatementSync;
    activeSilences: StatementSync;
    silences: StatementSync;
    insertSilence: StatementSync;
    silence: StatementSync;
    expireSilence: StatementSync;
    history: StatementSync;
    historyOfRule: StatementSync;
  };
  /** What `alert_state` holds, by fingerprint (its stateKey): the engine is its only writer, so this stays true. */
  private written: Map<string, string> | null = null;

  /** `db`: a connection opened by openStoreDatabase (the tables exist); the store does not close it unless asked to. */
  constructor(private readonly db: DatabaseSync) {
    const prepare = (sql: string) => db.prepare(sql);
    this.statements = {
      state: prepare(`SELECT ${STATE_COLUMNS} FROM alert_state ORDER BY active_since_ms, fingerprint`),
      upsertState: prepare(
        `INSERT OR REPLACE INTO alert_state (${STATE_COLUMNS}) VALUES (${STATE_COLUMNS.replace(/\w+/g, '?')})`,
      ),
      deleteState: prepare('DELETE FROM alert_state WHERE fingerprint = ?'),
      insertHistory: prepare(
        `INSERT INTO alert_history (${HISTORY_COLUMNS}) VALUES (${HISTORY_COLUMNS.replace(/\w+/g, '?')})`,
      ),
      deliveries: prepare('SELECT fingerprint, channel, status, sent_at_ms FROM alert_deliveries'),
      upsertDelivery: prepare(
        'INSERT OR REPLACE INTO alert_deliveries (fingerprint, channel, status, sent_at_ms) VALUES (?, ?, ?, ?)',
      ),
      resolved: prepare(
        `SELECT ${STATE_COLUMNS}, resolved_at_ms FROM alert_resolved ORDER BY resolved_at_ms, fingerprint`,
      ),
      upsertResolved: prepare(
        `INSERT OR REPLACE INTO alert_resolved (${STATE_COLUMNS}, resolved_at_ms) VALUES (${STATE_COLUMNS.replace(/\w+/g, '?')}, ?)`,
      ),
      // A resolution no channel is still to be told of; or of an alert that is active again (its state says it now).
      deleteTold: prepare(
        `DELETE FROM alert_resolved WHERE fingerprint IN (SELECT fingerprint FROM alert_state) OR ${NOT_TOLD_FIRING}`,
      ),
      deleteToldOne: prepare(`DELETE FROM alert_resolved WHERE fingerprint = ? AND ${NOT_TOLD_FIRING}`),
      lastSilenced: prepare(
        "SELECT detail FROM alert_history WHERE fingerprint = ? AND event = 'silenced' AND time_ms >= ? ORDER BY id DESC LIMIT 1",
      ),
      activeSilences: prepare(
        `SELECT ${SILENCE_COLUMNS} FROM alert_silences WHERE expired_at_ms IS NULL AND ends_at_ms > ? ORDER BY starts_at_ms DESC, id`,
      ),
      silences: prepare(
        `SELECT ${SILENCE_COLUMNS} FROM alert_silences WHERE coalesce(expired_at_ms, ends_at_ms) > ? ORDER BY starts_at_ms DESC, id`,
      ),
      insertSilence: prepare(
        `INSERT INTO alert_silences (${SILENCE_COLUMNS}) VALUES (${SILENCE_COLUMNS.replace(/\w+/g, '?')})`,
      ),
      silence: prepare(`SELECT ${SILENCE_COLUMNS} FROM alert_silences WHERE id = ?`),
      expireSilence: prepare(
        'UPDATE alert_silences SET expired_at_ms = ? WHERE id = ? AND expired_at_ms IS NULL AND ends_at_ms > ?',
      ),
      history: prepare(
        `SELECT id, ${HISTORY_COLUMNS} FROM alert_history WHERE time_ms BETWEEN ? AND ? AND id < ? ORDER BY id DESC LIMIT ?`,
      ),
      historyOfRule: prepare(
        `SELECT id, ${HISTORY_COLUMNS} FROM alert_history WHERE time_ms BETWEEN ? AND ? AND id < ? AND rule = ? ORDER BY id DESC LIMIT ?`,
      ),
    };
  }

  loadActive(): AlertRecord[] {
    const active = this.statements.state.all().map(alertOf);
    this.written = new Map(active.map((alert) => [alert.fingerprint, stateKey(alert)]));
    return active;
  }

  applyTransitions(t: Transitions): void {
    const written = this.written ?? new Map(this.loadActive().map((alert) => [alert.fingerprint, stateKey(alert)]));
    const next = new Map(t.active.map((alert) => [alert.fingerprint, stateKey(alert)]));
    const gone = [...written.keys()].filter((fingerprint) => !next.has(fingerprint));
    const changed = t.active.filter((alert) => written.get(alert.fingerprint) !== next.get(alert.fingerprint));
    if (gone.length === 0 && changed.length === 0 && t.fired.length === 0 && t.resolved.length === 0) return;
    this.transaction(() => {
      for (const fingerprint of gone) this.statements.deleteState.run(fingerprint);
      for (const alert of changed) this.statements.upsertState.run(...stateCells(alert));
      const event = (alert: AlertRecord, name: HistoryEvent, detail: string | null = null) => ({
        at: t.at,
        fingerprint: alert.fingerprint,
        rule: alert.rule,
        severity: alert.severity,
        labels: alert.labels,
        event: name,
        value: alert.value,
        channel: null,
        detail,
      });
      this.insertHistory([
        ...t.fired.map((alert) => event(alert, 'fired')),
        // Why it resolved when not because its condition cleared (no data, rule removed); null when it did.
        ...t.resolved.map((alert) => event(alert, 'resolved', t.resolvedDetail?.[alert.fingerprint] ?? null)),
      ]);
    });
    this.written = next;
  }

  record(entries: readonly Omit<HistoryEntry, 'id'>[]): void {
    if (entries.length > 0) this.transaction(() => this.insertHistory(entries));
  }

  deliveries(): Delivery[] {
    return this.statements.deliveries.all().map((row) => ({
      fingerprint: str(row, 'fingerprint'),
      channel: str(row, 'channel'),
      status: str(row, 'status') === 'resolved' ? 'resolved' : 'firing',
      sentAt: num(row, 'sent_at_ms'),
    }));
  }

  setDeliveries(deliveries: readonly Delivery[]): void {
    if (deliveries.length === 0) return;
    this.transaction(() => {
      for (const delivery of deliveries) {
        this.statements.upsertDelivery.run(
          delivery.fingerprint,
          delivery.channel,
          delivery.status,
          cell(delivery.sentAt),
        );
        if (delivery.status === 'resolved') this.statements.deleteToldOne.run(delivery.fingerprint);
      }
    });
  }

  untoldResolutions(): ResolvedAlert[] {
    return this.transaction(() => {
      this.statements.deleteTold.run();
      return this.statements.resolved
        .all()
        .map((row) => ({ record: alertOf(row), resolvedAt: num(row, 'resolved_at_ms') }));
    });
  }

  saveResolutions(resolved: readonly ResolvedAlert[]): void {
    if (resolved.length === 0) return;
    this.transaction(() => {
      for (const { record, resolvedAt } of resolved)
        this.statements.upsertResolved.run(...stateCells(record), cell(resolvedAt));
    });
  }

  silencedSince(alerts: readonly { fingerprint: string; since: number }[]): Map<string, string> {
    const silenced = new Map<string, string>();
    for (const { fingerprint, since } of alerts) {
      const row = this.statements.lastSilenced.get(fingerprint, cell(since));
      const id = row === undefined ? null : strOrNull(row, 'detail');
      if (id !== null) silenced.set(fingerprint, id);
    }
    return silenced;
  }

  activeSilences(now: number): Silence[] {
    return this.statements.activeSilences.all(cell(now)).map(silenceOf);
  }

  silences(now: number, sinceMs: number): Silence[] {
    return this.statements.silences.all(cell(now - sinceMs)).map(silenceOf);
  }

  addSilence(silence: Omit<Silence, 'id' | 'expiredAt'>): Silence {
    for (let attempt = 1; ; attempt++) {
      const id = randomBytes(4).toString('hex');
      if (this.statements.silence.get(id) !== undefined) {
        if (attempt < SILENCE_ID_TRIES) continue;
        throw new Error(`no free silence id after ${SILENCE_ID_TRIES} tries`);
      }
      this.statements.insertSilence.run(
        id,
        silence.rule,
        JSON.stringify(silence.matchers),
        cell(silence.startsAt),
        cell(silence.endsAt),
        silence.createdBy,
        silence.comment,
        null,
      );
      return { ...silence, id, expiredAt: null };
    }
  }

  expireSilence(id: string, now: number): boolean {
    return Number(this.statements.expireSilence.run(cell(now), id, cell(now)).changes) > 0;
  }

  history(query: { from: number; to: number; rule?: string; beforeId?: number; limit: number }): HistoryEntry[] {
    const bounds = [cell(query.from), cell(query.to), cell(query.beforeId ?? Number.MAX_SAFE_INTEGER)];
    const found =
      query.rule === undefined
        ? this.statements.history.all(...bounds, cell(query.limit))
        : this.statements.historyOfRule.all(...bounds, query.rule, cell(query.limit));
    return found.map(historyOf);
  }

  prune(olderThan: number): number {
    return this.transaction(() => pruneAlerts(this.db, olderThan));
  }

  /** Closes the connection. */
  close(): void {
    this.db.close();
  }

  private insertHistory(entries: readonly Omit<HistoryEntry, 'id'>[]): void {
    for (const entry of entries)
      this.statements.insertHistory.run(
        cell(entry.at),
        entry.fingerprint,
        entry.rule,
        entry.severity,
        JSON.stringify(entry.labels),
        entry.event,
        entry.value,
        entry.channel,
        entry.detail,
      );
  }

  /** `body` in one IMMEDIATE transaction (it takes the write lock at once, so it waits for it rather than failing midway), rolled back when it throws. */
  private transaction<T>(body: () => T): T {
    this.db.exec('BEGIN IMMEDIATE');
    try {
      const result = body();
      this.db.exec('COMMIT');
      return result;
    } catch (err) {
      this.db.exec('ROLLBACK');
      throw err;
    }
  }
}

/** The alerts' store of the store file at `path`, created with its tables when new (openStoreDatabase). */
export function openAlertStore(path: string): SqliteAlertStore {
  return new SqliteAlertStore(openStoreDatabase(path));
}

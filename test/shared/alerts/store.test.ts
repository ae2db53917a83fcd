/**
 * The alerts' store (shared/alerts/store.ts) on real SQLite files under a temp dir, every time
 * relative to the run's now: state across a close and open (a restart), one transaction per
 * evaluation (a failure inside leaves the old state), no write when nothing changed, silences
 * (matching, expiry), keyset paging of the history, and pruning.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Silence, silenceMatches } from '../../../shared/alerts/model.js';
import { openAlertStore, SqliteAlertStore } from '../../../shared/alerts/store.js';
import { alertRecord } from './fixtures.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 60 * MINUTE_MS;
let folder: string;
let file: string;
let store: SqliteAlertStore;

function reopen(): SqliteAlertStore {
  store.close();
  store = openAlertStore(file);
  return store;
}

/** Rows of a table, read by a connection of the test's own. */
function count(table: string): number {
  const db = new DatabaseSync(file, { readOnly: true });
  try {
    return Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()?.n);
  } finally {
    db.close();
  }
}

/** The number of changes written to the file since it was opened, as the connection `db` counts them. */
function totalChanges(db: DatabaseSync): number {
  return Number(db.prepare('SELECT total_changes() AS n').get()?.n);
}

beforeEach(() => {
  folder = mkdtempSync(join(tmpdir(), 'svc-alert-store-'));
  file = join(folder, 'nested', 'svc.db');
  store = openAlertStore(file);
});

afterEach(() => {
  store.close();
  rmSync(folder, { recursive: true, force: true });
});

describe('SqliteAlertStore: state', () => {
  it('keeps the active alerts across a close and open, and the fired and resolved history', () => {
    const now = Date.now();
    const node1 = alertRecord('node1', now - 5 * MINUTE_MS);
    const node2 = alertRecord('node2', now - MINUTE_MS, 'pending');
    store.applyTransitions({ at: now, active: [node1, node2], fired: [node1], resolved: [] });
    expect(reopen().loadActive()).toEqual([node1, node2]);

    store.applyTransitions({ at: now + 10_000, active: [node2], fired: [], resolved: [node1] });
    expect(reopen().loadActive()).toEqual([node2]);
    const history = store.history({ from: now - DAY_MS, to: now + DAY_MS, limit: 10 });
    expect(history.map((entry) => [entry.event, entry.labels.server, entry.at])).toEqual([
      ['resolved', 'node1', now + 10_000],
      ['fired', 'node1', now],
    ]);
    expect(history[0]).toMatchObject({
      rule: 'serverDown',
      severity: 'critical',
      value: 0,
      channel: null,
      detail: null,
    });
    // A resolution for another reason than the condition clearing says why.
    store.applyTransitions({
      at: now + 20_000,
      active: [],
      fired: [],
      resolved: [node2],
      resolvedDetail: { [node2.fingerprint]: 'rule removed' },
    });
    expect(store.history({ from: now + 20_000, to: now + 20_000, limit: 10 })).toEqual([
      expect.objectContaining({ event: 'resolved', fingerprint: node2.fingerprint, detail: 'rule removed' }),
    ]);
  });

  it('writes nothing when only lastSeenAt moved, and writes a changed value', () => {
    const now = Date.now();
    const alert = alertRecord('node1', now - 5 * MINUTE_MS);
    store.applyTransitions({ at: now, active: [alert], fired: [alert], resolved: [] });
    // A connection's total_changes counts only its own writes: read the store's through a second store
    // on the same file, which is the one the test drives from here on.
    store.close();
    const db = new DatabaseSync(file);
    store = new SqliteAlertStore(db);
    store.loadActive();
    const before = totalChanges(db);
    for (let i = 1; i <= 3; i++)
      store.applyTransitions({
        at: now + i * 10_000,
        active: [{ ...alert, lastSeenAt: now + i * 10_000 }],
        fired: [],
        resolved: [],
      });
    store.applyTransitions({ at: now + 40_000, active: [], fired: [], resolved: [] });
    expect(totalChanges(db)).toBe(before + 1); // the delete of the last call only
    store.applyTransitions({ at: now + 50_000, active: [], fired: [], resolved: [] });
    store.applyTransitions({ at: now + 60_000, active: [{ ...alert, value: 3 }], fired: [], resolved: [] });
    expect(totalChanges(db)).toBe(before + 2);
    expect(store.loadActive()[0]?.value).toBe(3);
  });

  it('leaves the old state and history when a write inside the transaction fails', () => {
    const now = Date.now();
    const node1 = alertRecord('node1', now - 5 * MINUTE_MS);
    store.applyTransitions({ at: now, active: [node1], fired: [node1], resolved: [] });
    // NaN is bound as NULL, which alert_state.value (NOT NULL) refuses: the second row fails after
    // the first was written and node1 deleted.
    const node2 = alertRecord('node2', now);
    const broken = { ...alertRecord('node3', now), value: Number.NaN };
    expect(() =>
      store.applyTransitions({ at: now + 10_000, active: [node2, broken], fired: [node2], resolved: [node1] }),
    ).toThrow(/NOT NULL/);
    expect(store.loadActive()).toEqual([node1]);
    expect(count('alert_history')).toBe(1);
    // The next evaluation writes again, from what is in the file.
    store.applyTransitions({ at: now + 20_000, active: [node2], fired: [node2], resolved: [node1] });
    expect(reopen().loadActive()).toEqual([node2]);
    expect(count('alert_history')).toBe(3);
  });

  it('records notified rows and what each channel was told', () => {
    const now = Date.now();
    const alert = alertRecord('node1', now - 5 * MINUTE_MS);
    store.record([
      { ...alert, at: now, event: 'notified', value: 0, channel: 'ops', detail: null },
      { ...alert, at: now, event: 'notify_failed', value: 0, channel: 'mail', detail: 'connection refused' },
    ]);
    store.setDeliveries([{ fingerprint: alert.fingerprint, channel: 'ops', status: 'firing', sentAt: now }]);
    store.setDeliveries([{ fingerprint: alert.fingerprint, channel: 'ops', status: 'resolved', sentAt: now + 1 }]);
    expect(reopen().deliveries()).toEqual([
      { fingerprint: alert.fingerprint, channel: 'ops', status: 'resolved', sentAt: now + 1 },
    ]);
    const history = store.history({ from: now, to: now, limit: 10 });
    expect(history.map((entry) => [entry.event, entry.channel, entry.detail])).toEqual([
      ['notify_failed', 'mail', 'connection refused'],
      ['notified', 'ops', null],
    ]);
  });
});

describe('SqliteAlertStore: silences', () => {
  it('adds silences with 8-hex-digit ids that match by rule and labels, until they end or are expired', () => {
    const now = Date.now();
    const byRule = store.addSilence({
      rule: 'serverDown',
      matchers: { server: 'node2' },
      startsAt: now,
      endsAt: now + 60 * MINUTE_MS,
      createdBy: 'ops',
      comment: 'maintenance',
    });
    const byLabel = store.addSilence({
      rule: null,
      matchers: { server: 'node3' },
      startsAt: now,
      endsAt: now + 2 * MINUTE_MS,
      createdBy: 'ops',
      comment: '',
    });
    expect(byRule.id).toMatch(/^[0-9a-f]{8}$/);
    expect(byLabel.id).not.toBe(byRule.id);
    const active = reopen().activeSilences(now);
    expect(active.map((silence) => silence.id).sort()).toEqual([byRule.id, byLabel.id].sort());
    const found = (id: string): Silence => {
      const silence = active.find((candidate) => candidate.id === id);
      if (!silence) throw new Error(`silence ${id} not stored`);
      return silence;
    };
    expect(found(byRule.id)).toEqual(byRule);
    const labels = (server: string, alertname = 'serverDown') => ({ alertname, severity: 'critical', server });
    expect(silenceMatches(found(byRule.id), labels('node2'), now)).toBe(true);
    expect(silenceMatches(found(byRule.id), labels('node1'), now)).toBe(false);
    expect(silenceMatches(found(byRule.id), labels('node2', 'engineMemoryHigh'), now)).toBe(false);
    expect(silenceMatches(found(byLabel.id), labels('node3', 'engineMemoryHigh'), now)).toBe(true);

    // byLabel ends by itself; byRule is expired early.
    const later = now + 5 * MINUTE_MS;
    expect(store.activeSilences(later).map((silence) => silence.id)).toEqual([byRule.id]);
    expect(store.expireSilence(byRule.id, later)).toBe(true);
    expect(store.expireSilence(byRule.id, later)).toBe(false);
    expect(store.expireSilence(byLabel.id, later)).toBe(false);
    expect(store.expireSilence('00000000', later)).toBe(false);
    expect(store.activeSilences(later)).toEqual([]);
    const expired = reopen()
      .silences(later, DAY_MS)
      .find((silence) => silence.id === byRule.id);
    expect(expired?.expiredAt).toBe(later);
    if (expired) expect(silenceMatches(expired, labels('node2'), later)).toBe(false);
    // Ended more than a day ago: no longer listed.
    expect(store.silences(later + DAY_MS + MINUTE_MS, DAY_MS)).toEqual([]);
    expect(store.silences(later + DAY_MS - MINUTE_MS, DAY_MS).map((silence) => silence.id)).toEqual([byRule.id]);
  });
});

describe('SqliteAlertStore: history and pruning', () => {
  it('pages the history newest first by id, within the time range and for one rule', () => {
    const now = Date.now();
    const alert = alertRecord('node1', now - DAY_MS);
    const other = { ...alert, rule: 'engineMemoryHigh' };
    store.record(
      Array.from({ length: 25 }, (_, i) => ({
        ...(i % 5 === 0 ? other : alert),
        at: now - (25 - i) * MINUTE_MS,
        event: 'notified' as const,
        value: i,
        channel: 'ops',
        detail: null,
      })),
    );
    const range = { from: now - 20 * MINUTE_MS, to: now - 2 * MINUTE_MS };
    const seen: number[] = [];
    let beforeId: number | undefined;
    for (let page = 0; page < 10; page++) {
      const entries = store.history({ ...range, limit: 7, ...(beforeId === undefined ? {} : { beforeId }) });
      seen.push(...entries.map((entry) => entry.value ?? -1));
      if (entries.length < 7) break;
      beforeId = entries[entries.length - 1]?.id;
    }
    // Values 5…23 are within the range (minute 20 … minute 2 before now), newest first.
    expect(seen).toEqual(Array.from({ length: 19 }, (_, i) => 23 - i));
    const ofRule = store.history({ ...range, rule: 'engineMemoryHigh', limit: 100 });
    expect(ofRule.map((entry) => entry.value)).toEqual([20, 15, 10, 5]);
  });

  it('prunes history, ended silences and deliveries of inactive alerts older than the cutoff', () => {
    const now = Date.now();
    const old = now - 40 * DAY_MS;
    const cutoff = now - 30 * DAY_MS;
    const active = alertRecord('node1', old);
    const gone = alertRecord('node2', old);
    store.applyTransitions({ at: old, active: [active, gone], fired: [active, gone], resolved: [] });
    store.applyTransitions({ at: now, active: [active], fired: [], resolved: [gone] });
    store.setDeliveries([
      { fingerprint: active.fingerprint, channel: 'ops', status: 'firing', sentAt: old },
      { fingerprint: gone.fingerprint, channel: 'ops', status: 'resolved', sentAt: old },
      { fingerprint: gone.fingerprint, channel: 'mail', status: 'resolved', sentAt: now },
    ]);
    const silence = (startsAt: number, endsAt: number) =>
      store.addSilence({ rule: null, matchers: { server: 'x' }, startsAt, endsAt, createdBy: 'ops', comment: '' });
    silence(old, old + DAY_MS);
    const expiredEarly = silence(old, now + DAY_MS);
    store.expireSilence(expiredEarly.id, old + MINUTE_MS);
    const kept = silence(old, now + DAY_MS);

    expect(store.prune(cutoff)).toBe(2 + 2 + 1);
    expect(store.history({ from: 0, to: now + 1, limit: 10 }).map((entry) => entry.event)).toEqual(['resolved']);
    expect(store.silences(now, 100 * DAY_MS).map((entry) => entry.id)).toEqual([kept.id]);
    expect(
      store
        .deliveries()
        .map((delivery) => `${delivery.fingerprint === active.fingerprint ? 'active' : 'gone'}/${delivery.channel}`)
        .sort(),
    ).toEqual(['active/ops', 'gone/mail']);
    expect(store.prune(cutoff)).toBe(0);
  });
});

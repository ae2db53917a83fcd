/**
 * The alert rule engine's model (docs/alerts.md): what the parts of the engine hand each other.
 *
 *   facts (edge-agent/alerts/facts.ts)          what Svc knows now, as labelled numbers per field
 *     → evaluator (rules/evaluator.ts)           each rule's series, values, and the alerts' new states
 *     → AlertStore (store.ts, the embedded store) state, history, deliveries and silences, kept across restarts
 *     → dispatcher (dispatch.ts)                 groups by route, waits, repeats, retries; channels/
 *
 * The engine (edge-agent/alerts/engine.ts) runs one evaluation every `Svc.alerts.evaluationInterval`.
 */
import type { ALERT_AGGREGATES, ALERT_OPERATORS } from '../config/sections/alerts.js';
import type { AlertSeverity } from './notification.js';

export type { AlertSeverity };

// ── facts ─────────────────────────────────────────────────────────────────────────────────────────

/** A labelled number of one field, now (a gauge) or counted since Svc started (a counter). */
export interface FactSample {
  labels: Readonly<Record<string, string>>;
  value: number;
}

/** What Svc knows at one instant: per field of the catalog (rules/fields.ts), its samples. */
export interface Facts {
  /** When the facts were read, ms since the epoch. */
  readonly at: number;
  /** The samples of a field; empty when it has none now (a server not polled yet, no listener). */
  samples(field: string): readonly FactSample[];
}

// ── rules ─────────────────────────────────────────────────────────────────────────────────────────

export type Aggregate = (typeof ALERT_AGGREGATES)[number];
export type Operator = (typeof ALERT_OPERATORS)[number];

/** A condition with its durations in ms (config: AlertCondition). */
export interface Condition {
  field: string;
  /** Label → accepted values (the config's `a|b` split). */
  where: Readonly<Record<string, readonly string[]>>;
  /** The labels kept (others summed); empty = all. */
  by: readonly string[];
  aggregate: Aggregate;
  /** Unused by `last`. */
  windowMs: number;
  op: Operator;
  threshold: number;
  /** A rise against the time before; null = none. */
  baseline: { factor: number; windowMs: number } | null;
}

/** One rule, built in or the operator's own, ready to evaluate. */
export interface RuleDefinition {
  /** `alertname`. Two built-in rules may share a name with different severities (clientCertificateExpiring). */
  name: string;
  /** Unique among the rules: the name, or `name:severity` when names repeat. */
  id: string;
  builtIn: boolean;
  severity: AlertSeverity;
  /** All must hold; joined on the labels the first keeps. */
  conditions: readonly Condition[];
  forMs: number;
  /** Extra labels (config `labels`). */
  labels: Readonly<Record<string, string>>;
  /** The summary template; placeholders {{value}}, {{threshold}}, {{alertname}}, {{severity}}, {{<label>}}. */
  summary: string;
  /** One line for the Alerts page: the conditions in words, e.g. `server.up == 0 for 2m`. */
  text: string;
}

// ── alert states ──────────────────────────────────────────────────────────────────────────────────

/** pending: the condition holds, `for` has not passed yet. firing: it has. */
export type AlertPhase = 'pending' | 'firing';

/** One alert that is pending or firing: a row of `alert_state`. */
export interface AlertRecord {
  fingerprint: string;
  ruleId: string;
  rule: string;
  severity: AlertSeverity;
  /** alertname, severity, the rule's labels and the series' labels (`server` when about a server). */
  labels: Readonly<Record<string, string>>;
  summary: string;
  /** The page showing it, a path such as `/servers?server=node2` (the externalUrl is put before it when sent). */
  link: string;
  phase: AlertPhase;
  /** The first evaluation at which the condition held, ms. */
  activeSince: number;
  /** When it began firing, ms; null while pending. */
  firedAt: number | null;
  /** The last value measured. */
  value: number;
  /** The last evaluation that saw it, ms. */
  lastSeenAt: number;
}

/** An alert's last record and when it resolved. */
export interface ResolvedAlert {
  record: AlertRecord;
  resolvedAt: number;
}

/** What one evaluation changed, for the store (state and history) and the dispatcher. */
export interface Transitions {
  at: number;
  /** The state of every alert pending or firing after the evaluation (the store replaces its table with it). */
  active: readonly AlertRecord[];
  /** Alerts that began firing at this evaluation. */
  fired: readonly AlertRecord[];
  /** Alerts that were firing and no longer are: their last record, resolved at `at`. */
  resolved: readonly AlertRecord[];
  /**
   * Fingerprint → why a resolved alert resolved when not because its condition cleared: `no data`
   * (its series stayed absent), `rule removed` (its rule is no longer configured); the history's detail.
   */
  resolvedDetail?: Readonly<Record<string, string>>;
}

/** How one rule's last evaluation went (the Alerts page's rule list). */
export interface RuleEvaluation {
  ruleId: string;
  at: number;
  durationMs: number;
  /** Series the first condition produced. */
  series: number;
  pending: number;
  firing: number;
  /** Why it could not be evaluated (an unknown label in the template…), or null. */
  error: string | null;
}

// ── silences and history ──────────────────────────────────────────────────────────────────────────

/** A silence: alerts that match are still evaluated and shown, but not sent. */
export interface Silence {
  /** 8 hex digits. */
  id: string;
  /** The rule (alertname) it silences; null = any rule. */
  rule: string | null;
  /** Labels an alert must have, with these values. */
  matchers: Readonly<Record<string, string>>;
  startsAt: number;
  endsAt: number;
  createdBy: string;
  comment: string;
  /** When it was ended early (`svc alerts expire`, the page), or null. */
  expiredAt: number | null;
}

export type HistoryEvent = 'fired' | 'notified' | 'notify_failed' | 'resolved' | 'silenced';

/** One row of `alert_history`. */
export interface HistoryEntry {
  id: number;
  at: number;
  fingerprint: string;
  rule: string;
  severity: AlertSeverity;
  labels: Readonly<Record<string, string>>;
  event: HistoryEvent;
  value: number | null;
  /** The channel of notified and notify_failed. */
  channel: string | null;
  /** The resolution, the silence's id, the masked failure … */
  detail: string | null;
}

/** What a channel was last told of an alert: a row of `alert_deliveries`. */
export interface Delivery {
  fingerprint: string;
  channel: string;
  status: 'firing' | 'resolved';
  sentAt: number;
}

/**
 * The alerts' part of the embedded store (shared/alerts/store.ts). Every method is synchronous
 * (node:sqlite) and throws only on a store failure, which the engine logs and tracks; the next
 * evaluation tries again with the state it holds in memory.
 */
export interface AlertStore {
  /** The alerts pending or firing when the last process stopped (a restart neither fires them again nor forgets them). */
  loadActive(): AlertRecord[];
  /** Replaces the active alerts with `t.active` and appends fired and resolved to the history, in one transaction. */
  applyTransitions(t: Transitions): void;
  /** Appends history rows (notified, notify_failed, silenced). */
  record(entries: readonly Omit<HistoryEntry, 'id'>[]): void;
  deliveries(): Delivery[];
  /**
   * The alerts that resolved while some channel's delivery still says firing (it was not told yet that
   * they resolved), with when they resolved; the others' saved resolutions are deleted. Read at start.
   */
  untoldResolutions(): ResolvedAlert[];
  /** Saves resolutions some channel is still to be told of (the dispatcher, as it queues them). */
  saveResolutions(resolved: readonly ResolvedAlert[]): void;
  /** Upserts what a channel was told (a saved resolution goes once no channel's delivery of it says firing); a resolved delivery of an alert no longer active may be deleted later by prune. */
  setDeliveries(deliveries: readonly Delivery[]): void;
  /**
   * For each of `alerts`, the silence its last `silenced` history row at or after `since` names (the
   * restored firing alerts, so that a restart does not record their silence again).
   */
  silencedSince(alerts: readonly { fingerprint: string; since: number }[]): Map<string, string>;
  /** Silences whose end is after `now` and that were not expired. */
  activeSilences(now: number): Silence[];
  /** Every silence that ended less than `sinceMs` ago or is still active, newest first. */
  silences(now: number, sinceMs: number): Silence[];
  addSilence(silence: Omit<Silence, 'id' | 'expiredAt'>): Silence;
  /** Ends a silence now; false when no active silence has this id. */
  expireSilence(id: string, now: number): boolean;
  /** History newest first, keyset-paged by id. */
  history(query: { from: number; to: number; rule?: string; beforeId?: number; limit: number }): HistoryEntry[];
  /** Deletes history, silences and deliveries older than `olderThan` (the store's upkeep, retentionDays). */
  prune(olderThan: number): number;
}

/** The labels shown in a column of their own wherever an alert is listed, not among its other labels. */
export const LABELS_SHOWN_APART: readonly string[] = ['alertname', 'severity'];

/** An alert's labels besides `apart`, as `key=value` texts, in the labels' order. */
export function labelPairs(labels: Readonly<Record<string, string>>, apart = LABELS_SHOWN_APART): string[] {
  return Object.entries(labels)
    .filter(([key]) => !apart.includes(key))
    .map(([key, value]) => `${key}=${value}`);
}

/** Whether a silence covers an alert's labels. */
export function silenceMatches(silence: Silence, labels: Readonly<Record<string, string>>, now: number): boolean {
  if (silence.expiredAt !== null || now < silence.startsAt || now >= silence.endsAt) return false;
  if (silence.rule !== null && labels.alertname !== silence.rule) return false;
  return Object.entries(silence.matchers).every(([key, value]) => labels[key] === value);
}

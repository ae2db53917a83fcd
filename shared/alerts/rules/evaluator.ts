/**
 * The evaluator: at each evaluation, every rule over the facts, and the alerts' new states
 * (docs/alerts.md "Rules"). Pure and synchronous: the time is the facts' `at`, so a test passes
 * the times it wants and never waits for a `for`.
 *
 * An alert is one series of a rule's first condition for which every condition holds; its labels
 * are alertname, severity, the rule's labels and the series' labels. It is pending from the first
 * evaluation at which it held, firing once `for` has passed since, and resolved at the first
 * evaluation at which its series is there and the condition no longer holds.
 *
 * After a restart the alerts of the store are given back (`restored`): they keep their phase and
 * times, so a firing one is not fired again. What Svc counted before the restart is gone, so while a
 * restored alert's series is absent, or its windows do not yet hold samples taken since the start,
 * it is kept as it is rather than resolved; a firing alert whose series stays absent for longer than
 * its window (at least NO_DATA_MS) resolves as "no data".
 */

import type { AlertRecord, Facts, RuleDefinition, RuleEvaluation, Transitions } from '../model.js';
import { alertFingerprint } from '../notification.js';
import { renderSummary } from './definitions.js';
import { pageLink } from './fields.js';
import { ConditionSeries, keyOf, type SeriesResult } from './series.js';

/** The least time a firing alert's series may be absent before it resolves for lack of data. */
export const NO_DATA_MS = 5 * 60_000;

/** Why an alert resolved other than its condition clearing (Transitions.resolvedDetail). */
export const NO_DATA = 'no data';
export const RULE_REMOVED = 'rule removed';

export interface EvaluatorOptions {
  /** When this process started, ms: samples taken before do not exist, and restored alerts wait for their windows to fill. */
  startedAt: number;
}

interface Entry {
  record: AlertRecord;
  /** Restored and not seen holding since: kept while there is not enough data to tell. */
  restored: boolean;
}

interface CompiledRule {
  rule: RuleDefinition;
  conditions: ConditionSeries[];
  /** Why the rule cannot be evaluated at all (an unknown field), or null. */
  error: string | null;
  /** The longest window of its conditions. */
  windowMs: number;
  /** The alert labels and fingerprint of each series seen at the last evaluation: hashed once, not at every evaluation. */
  identities: Map<string, { labels: Record<string, string>; fingerprint: string }>;
}

/** The rules' state between evaluations: each condition's series and each pending or firing alert. */
export class Evaluator {
  private readonly rules: CompiledRule[];
  private readonly alerts = new Map<string, Entry>();
  private readonly startedAt: number;

  constructor(rules: readonly RuleDefinition[], restored: readonly AlertRecord[], options: EvaluatorOptions) {
    this.startedAt = options.startedAt;
    this.rules = rules.map((rule) => {
      try {
        const conditions = rule.conditions.map((condition) => new ConditionSeries(condition));
        const windowMs = Math.max(0, ...rule.conditions.map((condition) => condition.windowMs));
        return { rule, conditions, error: null, windowMs, identities: new Map() };
      } catch (err) {
        return { rule, conditions: [], error: messageOf(err), windowMs: 0, identities: new Map() };
      }
    });
    for (const record of restored) this.alerts.set(record.fingerprint, { record, restored: true });
  }

  /** How many series the rules' conditions remember now (bounded by their windows). */
  get seriesCount(): number {
    return this.rules.reduce((sum, { conditions }) => sum + conditions.reduce((n, c) => n + c.size, 0), 0);
  }

  /** One evaluation of every rule at `facts.at`. */
  evaluate(facts: Facts): { transitions: Transitions; evaluations: RuleEvaluation[] } {
    const at = facts.at;
    const fired: AlertRecord[] = [];
    const resolved: AlertRecord[] = [];
    const resolvedDetail: Record<string, string> = {};
    const resolve = (entry: Entry, detail: string | null): void => {
      this.alerts.delete(entry.record.fingerprint);
      if (entry.record.phase !== 'firing') return;
      resolved.push(entry.record);
      if (detail !== null) resolvedDetail[entry.record.fingerprint] = detail;
    };
    const known = new Set(this.rules.map(({ rule }) => rule.id));
    for (const entry of [...this.alerts.values()]) if (!known.has(entry.record.ruleId)) resolve(entry, RULE_REMOVED);

    const evaluations = this.rules.map((compiled): RuleEvaluation => {
      const started = performance.now();
      let series = 0;
      let error = compiled.error;
      if (error === null) {
        try {
          series = this.evaluateRule(compiled, facts, fired, resolve);
        } catch (err) {
          error = messageOf(err);
        }
      }
      let pending = 0;
      let firing = 0;
      for (const { record } of this.alerts.values()) {
        if (record.ruleId !== compiled.rule.id) continue;
        if (record.phase === 'firing') firing++;
        else pending++;
      }
      return {
        ruleId: compiled.rule.id,
        at,
        durationMs: performance.now() - started,
        series,
        pending,
        firing,
        error,
      };
    });
    const transitions: Transitions = {
      at,
      active: [...this.alerts.values()].map((entry) => entry.record),
      fired,
      resolved,
      ...(Object.keys(resolvedDetail).length > 0 ? { resolvedDetail } : {}),
    };
    return { transitions, evaluations };
  }

  /** One rule: its alerts updated, fired and resolved; answers how many series its first condition has. */
  private evaluateRule(
    compiled: CompiledRule,
    facts: Facts,
    fired: AlertRecord[],
    resolve: (entry: Entry, detail: string | null) => void,
  ): number {
    const { rule, conditions, windowMs } = compiled;
    const at = facts.at;
    const [first, ...others] = conditions;
    if (first === undefined) return 0;
    const results = conditions.map((condition) => condition.evaluate(facts));
    const [firstResults = [], ...otherResults] = results;
    const joins = others.map((condition, i) =>
      joinIndex(first.labelNames, condition.labelNames, otherResults[i] ?? []),
    );

    const present = new Set<string>();
    const identities = new Map<string, { labels: Record<string, string>; fingerprint: string }>();
    for (const series of firstResults) {
      const key = keyOf(series.labels, first.labelNames);
      let identity = compiled.identities.get(key);
      if (identity === undefined) {
        const labels = alertLabels(rule, series.labels);
        identity = { labels, fingerprint: alertFingerprint(labels) };
      }
      identities.set(key, identity);
      const { labels, fingerprint } = identity;
      present.add(fingerprint);
      const holds = series.holds && joins.every((join) => join.holds(series.labels));
      const entry = this.alerts.get(fingerprint);
      if (!holds) {
        // Restored: counters started again at 0, so a window not yet covered since the start tells nothing.
        if (entry && !(entry.restored && at - this.startedAt < windowMs)) resolve(entry, null);
        continue;
      }
      const summary = renderSummary(rule.summary, {
        value: series.value,
        threshold: first.condition.threshold,
        alertname: rule.name,
        severity: rule.severity,
        labels,
      });
      const record: AlertRecord = entry
        ? { ...entry.record, summary, value: series.value, lastSeenAt: at }
        : {
            fingerprint,
            ruleId: rule.id,
            rule: rule.name,
            severity: rule.severity,
            labels,
            summary,
            link: pageLink(first.condition.field, labels),
            phase: 'pending',
            activeSince: at,
            firedAt: null,
            value: series.value,
            lastSeenAt: at,
          };
      if (record.phase === 'pending' && at - record.activeSince >= rule.forMs) {
        record.phase = 'firing';
        record.firedAt = at;
        fired.push(record);
      }
      this.alerts.set(fingerprint, { record, restored: false });
    }

    compiled.identities = identities;

    // The rule's alerts whose series is absent now.
    const noDataMs = Math.max(windowMs, NO_DATA_MS);
    for (const entry of [...this.alerts.values()]) {
      const { record } = entry;
      if (record.ruleId !== rule.id || present.has(record.fingerprint)) continue;
      if (record.phase === 'pending') this.alerts.delete(record.fingerprint);
      else if (at - Math.max(record.lastSeenAt, this.startedAt) > noDataMs) resolve(entry, NO_DATA);
    }
    return firstResults.length;
  }
}

/** alertname, severity, the rule's labels, then the series' labels (an empty label is no label, as in Prometheus). */
function alertLabels(rule: RuleDefinition, series: Readonly<Record<string, string>>): Record<string, string> {
  const labels: Record<string, string> = { alertname: rule.name, severity: rule.severity, ...rule.labels };
  for (const [name, value] of Object.entries(series)) if (value !== '') labels[name] = value;
  return labels;
}

/**
 * Whether another condition holds for a series of the first: joined on the labels both keep (any
 * of its series with those labels holding will do); with none in common, any of its series.
 */
function joinIndex(
  firstLabels: readonly string[],
  otherLabels: readonly string[],
  results: readonly SeriesResult[],
): { holds(labels: Readonly<Record<string, string>>): boolean } {
  const shared = otherLabels.filter((name) => firstLabels.includes(name));
  const holding = new Set(results.filter((result) => result.holds).map((result) => keyOf(result.labels, shared)));
  return { holds: (labels) => holding.has(keyOf(labels, shared)) };
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

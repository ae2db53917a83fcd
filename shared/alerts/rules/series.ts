/**
 * One condition's series over time: the facts' samples of its field, filtered by `where`, added up
 * by `by`, remembered only as far back as its window (and baseline) needs, and aggregated. A counter
 * read with increase or perMinute is the sum of its samples' increases, so a sample that goes down
 * (a restart of what counts it) adds its new value, as Prometheus's `increase()` does, and a series
 * that appears after the first evaluation counts from 0 (its first event is an increase). Read with
 * last, min, max or avg, a counter is its value (the count since Svc started), as a gauge is.
 */
import type { Condition, Facts, Operator } from '../model.js';
import { fieldSpec } from './fields.js';

/** A sample of a series at one evaluation: its value, or while counting, its increases added up since the first evaluation. */
interface Point {
  at: number;
  value: number;
}

interface Series {
  labels: Record<string, string>;
  points: Point[];
  /** While counting: the increases added up since the series was first seen. */
  total: number;
  lastSeenAt: number;
}

/** A series of the condition at one evaluation: its labels and the aggregate, and whether the condition holds. */
export interface SeriesResult {
  labels: Readonly<Record<string, string>>;
  value: number;
  holds: boolean;
}

/** How long a counter's sample of a vanished series is remembered, so that its return is not counted as new. */
const RAW_MEMORY_MS = 5 * 60_000;

const COMPARE: Record<Operator, (value: number, threshold: number) => boolean> = {
  '>': (v, t) => v > t,
  '>=': (v, t) => v >= t,
  '<': (v, t) => v < t,
  '<=': (v, t) => v <= t,
  '==': (v, t) => v === t,
  '!=': (v, t) => v !== t,
};

/** Whether `value op threshold`. */
export function compare(value: number, op: Operator, threshold: number): boolean {
  return COMPARE[op](value, threshold);
}

/** The key of a label set restricted to `names`. */
export function keyOf(labels: Readonly<Record<string, string>>, names: readonly string[]): string {
  return JSON.stringify(names.map((name) => labels[name] ?? ''));
}

/** One condition of one rule, with the series it has seen. */
export class ConditionSeries {
  /** A counter read by increase or perMinute: its increases are added up. */
  private readonly counting: boolean;
  /** The labels its series keep: `by`, or every label of the field. */
  readonly labelNames: readonly string[];
  /** How far back points are kept: the window and the baseline's window. */
  readonly keepMs: number;
  /** Every label of the field: what tells one of its raw series from another. */
  private readonly fieldLabels: readonly string[];
  private readonly series = new Map<string, Series>();
  /** While counting: each raw sample's last value, to add the increase only. */
  private readonly raw = new Map<string, { value: number; lastSeenAt: number }>();
  private lastEvaluationAt: number | null = null;
  /** This condition's first evaluation: before it nothing was counted (a start), so no baseline reaches further back. */
  private firstEvaluationAt: number | null = null;

  constructor(readonly condition: Condition) {
    const spec = fieldSpec(condition.field);
    if (spec === undefined) throw new Error(`unknown field ${JSON.stringify(condition.field)}`);
    if ((condition.aggregate === 'perMinute' || condition.baseline !== null) && condition.windowMs <= 0)
      throw new Error(`field ${condition.field}: ${condition.aggregate} needs a window longer than 0`);
    this.counting =
      spec.kind === 'counter' && (condition.aggregate === 'increase' || condition.aggregate === 'perMinute');
    this.fieldLabels = spec.labels;
    this.labelNames = condition.by.length > 0 ? condition.by : spec.labels;
    this.keepMs = condition.windowMs + (condition.baseline?.windowMs ?? 0);
  }

  /** How many series it remembers (bounded: a series not seen for longer than its window is forgotten). */
  get size(): number {
    return this.series.size;
  }

  /** Takes this evaluation's samples, and answers the series present now with their aggregate. */
  evaluate(facts: Facts): SeriesResult[] {
    const at = facts.at;
    const { where } = this.condition;
    const wanted = Object.entries(where);
    const sums = new Map<string, { labels: Record<string, string>; value: number }>();
    const first = this.lastEvaluationAt === null;
    for (const sample of facts.samples(this.condition.field)) {
      if (!wanted.every(([label, values]) => values.includes(sample.labels[label] ?? ''))) continue;
      let value = sample.value;
      if (this.counting) {
        const rawKey = keyOf(sample.labels, this.fieldLabels);
        const before = this.raw.get(rawKey);
        this.raw.set(rawKey, { value, lastSeenAt: at });
        if (before === undefined) value = first ? 0 : value;
        else value = value >= before.value ? value - before.value : value;
      }
      const key = keyOf(sample.labels, this.labelNames);
      const sum = sums.get(key);
      if (sum) sum.value += value;
      else
        sums.set(key, {
          labels: Object.fromEntries(this.labelNames.map((name) => [name, sample.labels[name] ?? ''])),
          value,
        });
    }
    const results: SeriesResult[] = [];
    for (const [key, { labels, value }] of sums) {
      let series = this.series.get(key);
      if (series === undefined) {
        // A new counter series starts from 0 at the evaluation before, so its first increase counts.
        const points = this.counting ? [{ at: this.lastEvaluationAt ?? at, value: 0 }] : [];
        series = { labels, points, total: 0, lastSeenAt: at };
        this.series.set(key, series);
      }
      series.lastSeenAt = at;
      if (this.counting) series.total += value;
      series.points.push({ at, value: this.counting ? series.total : value });
      this.trim(series, at);
      const aggregate = this.aggregate(series.points, at);
      results.push({ labels, value: aggregate, holds: this.holds(series.points, at, aggregate) });
    }
    this.forget(at);
    this.lastEvaluationAt = at;
    this.firstEvaluationAt ??= at;
    return results;
  }

  /** Drops the points older than the window needs: one at or before its start stays, as the reference of an increase. */
  private trim(series: Series, at: number): void {
    const from = at - this.keepMs;
    let drop = 0;
    while (drop + 1 < series.points.length && (series.points[drop + 1]?.at ?? at) <= from) drop++;
    if (drop > 0) series.points.splice(0, drop);
  }

  /** Forgets the series not seen for longer than the window, and the raw counters not seen for a while. */
  private forget(at: number): void {
    for (const [key, series] of this.series) if (at - series.lastSeenAt > this.keepMs) this.series.delete(key);
    const rawLimit = Math.max(this.keepMs, RAW_MEMORY_MS);
    for (const [key, raw] of this.raw) if (at - raw.lastSeenAt > rawLimit) this.raw.delete(key);
  }

  private aggregate(points: readonly Point[], at: number): number {
    const { aggregate, windowMs } = this.condition;
    const last = points[points.length - 1]?.value ?? 0;
    switch (aggregate) {
      case 'last':
        return last;
      case 'min':
      case 'max':
      case 'avg': {
        const values = points.filter((point) => point.at >= at - windowMs).map((point) => point.value);
        if (aggregate === 'min') return Math.min(...values);
        if (aggregate === 'max') return Math.max(...values);
        return values.reduce((sum, value) => sum + value, 0) / values.length;
      }
      case 'increase':
        return last - reference(points, at - windowMs);
      case 'perMinute':
        return (last - reference(points, at - windowMs)) / (windowMs / 60_000);
    }
  }

  private holds(points: readonly Point[], at: number, value: number): boolean {
    const { op, threshold, baseline, windowMs } = this.condition;
    if (!compare(value, op, threshold)) return false;
    if (baseline === null) return true;
    // The rate of the baseline window just before the window, over the part of it this process
    // counted. Less than one window of it (in the first two windows after a start) tells nothing
    // about a rise: every steady source would look like one, so the condition waits.
    const end = at - windowMs;
    const start = Math.max(end - baseline.windowMs, this.firstEvaluationAt ?? at);
    if (end - start < windowMs) return false;
    const before = (reference(points, end) - reference(points, start)) / ((end - start) / 60_000);
    return value > baseline.factor * before;
  }
}

/** The value of a series at `time`: its last point at or before it, else its first point. */
function reference(points: readonly Point[], time: number): number {
  let found = points[0]?.value ?? 0;
  for (const point of points) {
    if (point.at > time) break;
    found = point.value;
  }
  return found;
}

/**
 * Event counts (platform-formats.md §6.5) and the counter writer (§6.7), plus the listener
 * queue-metrics writer (§6.8). Both write through the event queue as `points` events, so the edge
 * needs no tsdb connection of its own and a tsdb outage loses nothing: a snapshot whose enqueue
 * fails is added back (counters) or not reset (queue metrics), and the next tick carries it.
 */
import { hostname } from 'node:os';
import type { Log } from '../../../shared/logging/log.js';
import { type JsonFieldValue, type JsonPoint, pointsEvent } from '../../../shared/queue/events.js';
import type { PointClock } from '../../../shared/queue/point-clock.js';
import type { EventQueue } from '../../../shared/queue/port.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import type { QueueMetrics, UdpListener } from './listener.js';
import { type RejectedEventCounter, type RejectedEventEntry, rejectedEventTags } from './rules/perf-filter.js';

export type EventType = 'user' | 'log';

export interface EventCountKey {
  event_type: EventType;
  source: string;
  host: string;
  subsystem: string;
}

export interface EventCountEntry extends EventCountKey {
  counter: number;
}

/** §6.5: events per `(event_type, source, host, subsystem)`; an empty value counts as `unknown`. */
export class EventCounter {
  /**
   * Entries by event type, source, host, subsystem: nested maps, because a joined key string
   * would be built (and flattened to hash it) for every datagram, only to find an existing entry.
   */
  private readonly byType = new Map<EventType, Map<string, Map<string, Map<string, EventCountEntry>>>>();
  /** The same entries in the order they were first counted (the snapshot's order). */
  private entries: EventCountEntry[] = [];

  count(eventType: EventType, source: string, host: string, subsystem: string, n = 1): void {
    const s = source || 'unknown';
    const h = host || 'unknown';
    const sub = subsystem || 'unknown';
    let bySource = this.byType.get(eventType);
    if (bySource === undefined)
      this.byType.set(eventType, (bySource = new Map<string, Map<string, Map<string, EventCountEntry>>>()));
    let byHost = bySource.get(s);
    if (byHost === undefined) bySource.set(s, (byHost = new Map<string, Map<string, EventCountEntry>>()));
    let bySubsystem = byHost.get(h);
    if (bySubsystem === undefined) byHost.set(h, (bySubsystem = new Map<string, EventCountEntry>()));
    const live = bySubsystem.get(sub);
    if (live) live.counter += n;
    else {
      // Only a new key makes an object.
      const entry = { event_type: eventType, source: s, host: h, subsystem: sub, counter: n };
      bySubsystem.set(sub, entry);
      this.entries.push(entry);
    }
  }

  /** §6.5 unrecognised and malformed datagrams: `unknown` everywhere, with the listener's event type. */
  countUnknown(eventType: EventType): void {
    this.count(eventType, 'unknown', 'unknown', 'unknown');
  }

  snapshotAndReset(): EventCountEntry[] {
    const out = this.entries;
    this.entries = [];
    this.byType.clear();
    return out;
  }

  restore(snapshot: readonly EventCountEntry[]): void {
    for (const e of snapshot) this.count(e.event_type, e.source, e.host, e.subsystem, e.counter);
  }
}

type NameValue = { name: string; value: string };

const int = (value: number): JsonFieldValue => ({ type: 'int', value });
const float = (value: number): JsonFieldValue => ({ type: 'float', value });

function withTags(base: Record<string, string>, tags: readonly NameValue[]): Record<string, string> {
  const out: Record<string, string> = { ...base };
  for (const t of tags) out[t.name] = t.value;
  return out;
}

/** §6.5 points, one per key. */
export function eventCountPoints(
  entries: readonly EventCountEntry[],
  measurement: string,
  tags: readonly NameValue[],
  timeNs: () => string,
): JsonPoint[] {
  return entries.map((e) => ({
    measurement,
    tags: withTags({ event_type: e.event_type, source: e.source, host: e.host, subsystem: e.subsystem }, tags),
    fields: { counter: int(e.counter) },
    timeNs: timeNs(),
  }));
}

/** §6.6 points; `trackRejectedEvents.tags[]` go on perf_filter points only. */
export function rejectedEventPoints(
  entries: readonly RejectedEventEntry[],
  measurement: string,
  perfTags: readonly NameValue[],
  timeNs: () => string,
): JsonPoint[] {
  return entries.map((e) => {
    const base = Object.fromEntries(Object.entries(rejectedEventTags(e)).filter(([, v]) => v !== ''));
    const fields: Record<string, JsonFieldValue> = { counter: int(e.counter) };
    if (e.reason === 'perf_filter') fields['process_time'] = float(e.processTime);
    return {
      measurement,
      tags: e.reason === 'perf_filter' ? withTags(base, perfTags) : base,
      fields,
      timeNs: timeNs(),
    };
  });
}

const FLOAT_METRICS = new Set([
  'queue_utilization_pct',
  'processing_time_avg_ms',
  'processing_time_p95_ms',
  'processing_time_max_ms',
  'rate_limit_current',
]);

/** §6.8: the listener's metrics as one point; fields int except the utilisation, times and rate. */
export function queueMetricsPoint(
  metrics: QueueMetrics,
  measurement: string,
  host: string,
  tags: readonly NameValue[],
  timeNs: string,
): JsonPoint {
  const fields: Record<string, JsonFieldValue> = {};
  for (const [name, value] of Object.entries(metrics)) {
    if (name === 'queue_type' || typeof value !== 'number') continue;
    fields[name] = FLOAT_METRICS.has(name) ? float(value) : int(Math.round(value));
  }
  return { measurement, tags: withTags({ queue_type: metrics.queue_type, host }, tags), fields, timeNs };
}

/** Runs `tick` every `intervalMs` (never at start, §0.7), one at a time; `stop` runs a last tick. */
abstract class IntervalWriter implements Component {
  abstract readonly name: string;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  protected constructor(private readonly intervalMs: number) {}

  start(): Promise<void> {
    this.timer = setInterval(() => void this.runTick(), this.intervalMs);
    this.timer.unref();
    return Promise.resolve();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await this.runTick();
  }

  /** Runs one tick now (tests, and the last one at stop). */
  runTick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.tick().finally(() => (this.running = undefined));
    return this.running;
  }

  protected abstract tick(): Promise<void>;
}

export interface CounterWriterOptions {
  queue: EventQueue;
  clock: PointClock;
  intervalMs: number;
  events: { counter: EventCounter; measurement: string; tags: readonly NameValue[] } | null;
  rejected: { counter: RejectedEventCounter; measurement: string; perfTags: readonly NameValue[] } | null;
  log: Log;
}

/** §6.7: every interval, snapshot and reset the counters and enqueue their points; on failure add them back. */
export class CounterWriter extends IntervalWriter {
  readonly name = 'event counter writer';

  constructor(private readonly options: CounterWriterOptions) {
    super(options.intervalMs);
  }

  protected async tick(): Promise<void> {
    const { events, rejected, clock } = this.options;
    const tickMs = Date.now();
    const time = () => clock.next(tickMs).toString();
    const counts = events?.counter.snapshotAndReset() ?? [];
    const rejections = rejected?.counter.snapshotAndReset() ?? [];
    const points = [
      ...(events ? eventCountPoints(counts, events.measurement, events.tags, time) : []),
      ...(rejected ? rejectedEventPoints(rejections, rejected.measurement, rejected.perfTags, time) : []),
    ];
    if (points.length === 0) return;
    try {
      await this.options.queue.send([pointsEvent('EVENT_COUNTS', points)]);
      this.options.log.debug({ points: points.length }, 'event counts queued for the tsdb');
    } catch (err) {
      events?.counter.restore(counts);
      rejected?.counter.restore(rejections);
      this.options.log.warn({ err }, 'event counts could not be queued; they are kept for the next write');
    }
  }
}

export interface QueueMetricsWriterOptions {
  listener: UdpListener;
  queue: EventQueue;
  clock: PointClock;
  intervalMs: number;
  measurement: string;
  tags: readonly NameValue[];
  log: Log;
  /** Svc's own host name (§6.8 `host` tag); default os.hostname(). */
  host?: string;
}

/** §6.8: the listener's metrics every interval; its counters reset only after a successful enqueue. */
export class QueueMetricsWriter extends IntervalWriter {
  readonly name: string;
  private readonly host: string;

  constructor(private readonly options: QueueMetricsWriterOptions) {
    super(options.intervalMs);
    this.name = `queue metrics writer (${options.measurement})`;
    this.host = options.host ?? hostname();
  }

  protected async tick(): Promise<void> {
    const { listener, clock } = this.options;
    await listener.refreshKernelDrops();
    const metrics = listener.metrics();
    const point = queueMetricsPoint(
      metrics,
      this.options.measurement,
      this.host,
      this.options.tags,
      clock.next(Date.now()).toString(),
    );
    try {
      await this.options.queue.send([pointsEvent('QUEUE_METRICS', [point])]);
      listener.commitMetrics(metrics);
    } catch (err) {
      this.options.log.warn(
        { err, measurement: this.options.measurement },
        'listener queue metrics could not be queued; the counters carry over to the next write',
      );
    }
  }
}

/**
 * What the local endpoints read about Svc itself: the parts the composition builds register here
 * (boot.ts: the listeners, the queues, the pollers' schedules), and an endpoint (the metrics
 * endpoint, docs/metrics.md; the container health endpoint, docs/operations.md) reads their own
 * counters and states when it is asked. Nothing is copied: a part keeps counting as it
 * always does, and an Observed only knows where to look.
 */
import type { AlertRecord, AlertStore } from '../../shared/alerts/model.js';
import type { GroupStats, StorageFault } from '../../shared/queue/local/index.js';
import type { SqsQueueCounters } from '../../shared/queue/sqs.js';
import type { ChannelView, RuleView } from '../../shared/store/api-types.js';
import type { ListenerTotals, QueueType } from '../sources/udp/listener.js';

/** The pollers whose results reach a PollSink (§4, §5.1), as the `kind` label. */
export type PollKind = 'health' | 'sessions';

/** A UDP listener (listener.ts): its type is the `listener` label. */
export interface ObservedListener {
  /** Says which listener it is, with its configured address (`UDP listener log_events (0.0.0.0:9996)`). */
  readonly name: string;
  readonly queueType: QueueType;
  /** Whether its socket is bound now. */
  readonly bound: boolean;
  totals(): ListenerTotals;
}

export interface ObservedQueue {
  /** The `queue` label: `platform` (the edge's pipeline) or `audit` (local mode's audit path). */
  name: string;
  queue: {
    readonly capacity: number;
    stats(): Record<string, GroupStats>;
    /** Set while its files cannot be written (a full disk): LocalEventQueue.storageFault. */
    readonly storageFault: StorageFault | null;
  };
  /** Its destinations; each one's name is its consumer group's. */
  destinations: readonly ObservedDestination[];
}

/** A consumer group of a queue: a destination written here, or the forwarder of one in the cloud. */
export interface ObservedDestination {
  readonly name: string;
  readonly failedWrites: number;
  readonly writtenEvents: number;
  /** Only on a forwarder (`svc edge` with Svc.cloud): what its SQS adapter sent. */
  readonly sqs?: SqsQueueCounters;
}

/**
 * A poller's schedule: one IntervalTask per target, each counting the ticks it skipped because its
 * previous poll was still running (the pollers' PollGroup has exactly this shape).
 */
export interface ObservedPollGroup {
  kind: PollKind;
  group: { counts(): readonly { label: string; skipped: number }[] };
}

/** The log-event listener's counts per source and level (LogLevelCounts), known pairs at 0 from the start. */
export interface ObservedLogEvents {
  counts(): Iterable<{ source: string; level: string; events: number }>;
  /** The same events by source, level, server and category (the alert rules' `logEvents` field). */
  details(): Iterable<{ source: string; level: string; server: string; category: string; events: number }>;
}

/** The alert engine (edge-agent/alerts/engine.ts) as the Alerts page, its API and the metrics endpoint read it. */
export interface ObservedAlerts {
  store: AlertStore;
  evaluationIntervalMs: number;
  /** Every rule with its last evaluation. */
  rules(): RuleView[];
  /** Every channel with its counters since start. */
  channels(): ChannelView[];
  /** The alerts pending or firing after the last evaluation. */
  active(): AlertRecord[];
}

export class Observed {
  readonly listeners: ObservedListener[] = [];
  readonly queues: ObservedQueue[] = [];
  readonly pollGroups: ObservedPollGroup[] = [];
  /** The pollers' client certificate (checkPlatformAccess): its file and when it stops being valid; null while no poller uses one. */
  clientCertificate: { file: string; validTo: Date } | null = null;
  /** Null while no log-event listener runs. */
  logEvents: ObservedLogEvents | null = null;
  /** Null while alerts are off (Svc.alerts.enable false, or the store off). */
  alerts: ObservedAlerts | null = null;

  listener(listener: ObservedListener): void {
    this.listeners.push(listener);
  }

  queue(observed: ObservedQueue): void {
    this.queues.push(observed);
  }

  /** A poller's schedule: its targets are a server (health) or a server and virtual proxy (sessions). */
  pollGroup(kind: PollKind, group: ObservedPollGroup['group']): void {
    this.pollGroups.push({ kind, group });
  }
}

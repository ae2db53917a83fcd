/**
 * What Svc's own metrics read (docs/metrics.md): the parts the composition builds register here
 * (boot.ts the listeners and queues, the pollers' composition its poll tasks), and the metrics
 * endpoint reads their own counters at each scrape. Nothing is copied: a part keeps counting as it
 * always does, and an Observed only knows where to look.
 */
import type { GroupStats } from '../../../shared/queue/local.js';
import type { ListenerTotals, QueueType } from '../../sources/udp/listener.js';

/** The pollers (§4, §5.1, §5.2), as the `kind` label. */
export type PollKind = 'health' | 'sessions' | 'app_names';

/** A UDP listener (listener.ts): its type is the `listener` label. */
export interface ObservedListener {
  readonly queueType: QueueType;
  totals(): ListenerTotals;
}

export interface ObservedQueue {
  /** The `queue` label: `platform` (the edge's pipeline) or `audit` (local mode's audit path). */
  name: string;
  queue: { readonly capacity: number; stats(): Record<string, GroupStats> };
  /** Its destinations; each one's name is its consumer group's. */
  destinations: readonly { readonly name: string; readonly failedWrites: number }[];
}

export interface ObservedPollTask {
  kind: PollKind;
  serverName: string;
  /** Ticks skipped because the previous run was still going (IntervalTask counts them). */
  task: { readonly skipped: number };
}

export class Observed {
  readonly listeners: ObservedListener[] = [];
  readonly queues: ObservedQueue[] = [];
  readonly pollTasks: ObservedPollTask[] = [];

  listener(listener: ObservedListener): void {
    this.listeners.push(listener);
  }

  queue(observed: ObservedQueue): void {
    this.queues.push(observed);
  }

  /** A poller's task for one server (for sessions: one per virtual proxy; their skips add up). */
  pollTask(kind: PollKind, serverName: string, task: ObservedPollTask['task']): void {
    this.pollTasks.push({ kind, serverName, task });
  }
}

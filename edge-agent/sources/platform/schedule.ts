/**
 * The schedule of one poller (platform-formats.md §0.7): one IntervalTask per target (a server, a
 * server × virtual proxy), all in parallel, each at start and then every interval. A target whose
 * previous poll is still running skips that tick with a WARN, and the skip is counted per target;
 * the other targets are not held up. Stopping cancels the polls in progress (a stop never waits for
 * a platform that does not answer).
 */
import type { Log } from '../../../shared/logging/log.js';
import { IntervalTask } from '../../../shared/runtime/interval.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';

export interface PollTarget {
  /** How logs name the target: `node1`, `node1 /hdr`. */
  label: string;
  /** One poll; handles its own failures (a rejection is logged as a bug). `signal` aborts when the group stops. */
  poll: (signal: AbortSignal) => Promise<void>;
}

export interface PollGroupOptions {
  /** The component's name, e.g. `health poller`. */
  name: string;
  /** What one poll is, for the skip WARN: `health poll`. */
  what: string;
  intervalMs: number;
  targets: readonly PollTarget[];
  log: Log;
}

export class PollGroup implements Component {
  readonly name: string;
  private readonly tasks: { label: string; task: IntervalTask }[];
  /** Aborted by stop(): polls in progress end at once instead of running to their timeout. */
  private readonly stopping = new AbortController();

  constructor(private readonly options: PollGroupOptions) {
    this.name = options.name;
    const { what, intervalMs, log } = options;
    this.tasks = options.targets.map((target) => ({
      label: target.label,
      task: new IntervalTask({
        name: `${what} of ${target.label}`,
        intervalMs,
        task: () => target.poll(this.stopping.signal),
        onSkip: (skipped) =>
          log.warn(
            { poller: options.name, target: target.label, skipped, intervalMs },
            `${what} of ${target.label} skipped: the previous one is still running after ${intervalMs} ms (${skipped} skipped so far)`,
          ),
        onError: (err) =>
          log.error(
            { poller: options.name, target: target.label, err },
            `${what} of ${target.label} failed unexpectedly`,
          ),
      }),
    }));
  }

  /** Per target, in the order given: ticks skipped (the previous poll was still running) and polls finished. */
  counts(): { label: string; skipped: number; completed: number }[] {
    return this.tasks.map(({ label, task }) => ({ label, skipped: task.skipped, completed: task.completed }));
  }

  async start(): Promise<void> {
    await Promise.all(this.tasks.map(({ task }) => task.start()));
  }

  /** Stops the schedules, cancels the polls in progress and waits for them to end. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.all(this.tasks.map(({ task }) => task.stop()));
  }
}

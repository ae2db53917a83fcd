/**
 * A task run at start and then every `intervalMs` (platform-formats.md §0.7): a run still going when
 * the next one is due is skipped, counted and reported, never stacked. Every millisecond interval of
 * Svc (pollers, writers) runs on this; text schedules (heartbeat, uptime) have their own scheduler.
 */
import type { Component } from './lifecycle.js';

export interface IntervalTaskOptions {
  name: string;
  intervalMs: number;
  task: () => Promise<void>;
  /** Run once at start (default true), else first after one interval. */
  runAtStart?: boolean;
  /** Called for each skipped tick, with the count of skips so far. */
  onSkip?: (skipped: number) => void;
  /** Called when a run rejects (a task should handle its own errors; this is the last resort). */
  onError?: (err: unknown) => void;
}

export class IntervalTask implements Component {
  readonly name: string;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private skippedRuns = 0;
  private completedRuns = 0;

  constructor(private readonly options: IntervalTaskOptions) {
    if (!Number.isSafeInteger(options.intervalMs) || options.intervalMs < 1)
      throw new RangeError(
        `${options.name}: the interval must be a positive number of milliseconds, got ${String(options.intervalMs)}`,
      );
    this.name = options.name;
  }

  /** Ticks skipped because the previous run was still going. */
  get skipped(): number {
    return this.skippedRuns;
  }

  /** Runs finished (successfully or not). */
  get completed(): number {
    return this.completedRuns;
  }

  start(): Promise<void> {
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    if (this.options.runAtStart !== false) this.tick();
    return Promise.resolve();
  }

  /** Runs the task now unless it is still running (then the tick is skipped). */
  tick(): void {
    if (this.running) {
      this.skippedRuns += 1;
      this.options.onSkip?.(this.skippedRuns);
      return;
    }
    this.running = this.options
      .task()
      .catch((err: unknown) => this.options.onError?.(err))
      .finally(() => {
        this.completedRuns += 1;
        this.running = undefined;
      });
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}

/**
 * The scheduler of every text schedule (platform-formats.md §10.1: `heartbeat.frequency`,
 * `uptimeMonitor.frequency`): `@breejs/later` texts such as `every 15 minutes`, evaluated in UTC,
 * firing on clock boundaries (:00, :15, :30, :45), not relative to the start. Millisecond intervals
 * run on IntervalTask (interval.ts); both run at start when asked, never overlap (a tick that finds
 * the previous run still going is skipped and counted) and stop their timer on `stop`.
 */

import type { Schedule } from '@breejs/later';
import later from '@breejs/later';
import type { Component } from './lifecycle.js';

// Svc evaluates every schedule in UTC (§10.1); `later` keeps this as a library-wide setting.
later.date.UTC();

/** The longest a Node timer can wait; longer waits are re-armed. */
const MAX_TIMER_MS = 2_147_483_647;

/** A text schedule that parsed: its occurrences on clock boundaries. */
export class TextSchedule {
  private readonly schedule: Schedule;

  /** Throws RangeError naming where the text stops parsing (the config validator refuses such texts first). */
  constructor(readonly text: string) {
    const parsed = later.parse.text(text);
    if (parsed.error !== -1)
      throw new RangeError(`cannot parse the text schedule ${JSON.stringify(text)} from position ${parsed.error}`);
    this.schedule = later.schedule(parsed);
  }

  /**
   * The first occurrence strictly after `afterMs` (ms since the epoch), or null when the schedule
   * has none. `later` answers the moment it is given when that moment lies inside a valid period (for
   * `every 1 hour` any moment is), and the starts of the following periods after it. Asked from the
   * whole second at or before `afterMs`, that first answer is never after `afterMs`, so the first
   * answer after `afterMs` is the start of a period: a clock boundary.
   */
  nextAfter(afterMs: number): number | null {
    const from = Math.floor(afterMs / 1000) * 1000;
    const next = this.schedule.next(3, new Date(from));
    const list = Array.isArray(next) ? next : [next];
    for (const d of list) {
      const t = d instanceof Date ? d.getTime() : Number.NaN;
      if (Number.isFinite(t) && t > afterMs) return t;
    }
    return null;
  }

  /** The gap between the next two occurrences after `atMs` (the producer's interval of §8.2), or null. */
  gapAfter(atMs: number): number | null {
    const first = this.nextAfter(atMs);
    const second = first === null ? null : this.nextAfter(first);
    return first === null || second === null ? null : second - first;
  }
}

export interface ScheduledTaskOptions {
  name: string;
  /** A text schedule (`every 30 seconds`). */
  schedule: string;
  /** The run; `occurrenceMs` is the boundary it runs for, or null for the run at start. */
  task: (occurrenceMs: number | null) => Promise<void>;
  /** Run once at start (default true), else first at the next occurrence. */
  runAtStart?: boolean;
  /** Called for each skipped occurrence, with the count of skips so far. */
  onSkip?: (skipped: number) => void;
  /** Called when a run rejects (a task should handle its own errors; this is the last resort). */
  onError?: (err: unknown) => void;
}

/** A task run at start and then at every occurrence of a text schedule. */
export class ScheduledTask implements Component {
  readonly name: string;
  readonly schedule: TextSchedule;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private skippedRuns = 0;
  private completedRuns = 0;

  constructor(private readonly options: ScheduledTaskOptions) {
    this.name = options.name;
    this.schedule = new TextSchedule(options.schedule);
  }

  /** Occurrences skipped because the previous run was still going. */
  get skipped(): number {
    return this.skippedRuns;
  }

  /** Runs finished (successfully or not). */
  get completed(): number {
    return this.completedRuns;
  }

  start(): Promise<void> {
    this.stopped = false;
    this.arm(Date.now());
    if (this.options.runAtStart !== false) this.run(null);
    return Promise.resolve();
  }

  /** Stops the timer and waits for a run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Sets the timer for the first occurrence after `afterMs`. */
  private arm(afterMs: number): void {
    if (this.stopped) return;
    const at = this.schedule.nextAfter(afterMs);
    if (at === null) return;
    this.wait(at);
  }

  private wait(at: number): void {
    const delay = at - Date.now();
    this.timer = setTimeout(
      () => {
        if (this.stopped) return;
        // A timer may fire a little early, and a long wait is cut into pieces: wait the rest.
        if (Date.now() < at) {
          this.wait(at);
          return;
        }
        this.arm(Math.max(at, Date.now()));
        this.run(at);
      },
      Math.min(Math.max(delay, 0), MAX_TIMER_MS),
    );
  }

  private run(occurrenceMs: number | null): void {
    if (this.running) {
      this.skippedRuns += 1;
      this.options.onSkip?.(this.skippedRuns);
      return;
    }
    this.running = this.options
      .task(occurrenceMs)
      .catch((err: unknown) => this.options.onError?.(err))
      .finally(() => {
        this.completedRuns += 1;
        this.running = undefined;
      });
  }
}

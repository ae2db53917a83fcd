/**
 * The daily error summary (platform-formats.md §10.9): at 00:00 UTC the tracker logs the day's
 * counts and resets them (`ErrorTracker.rollOver`). A timer to the next UTC midnight, armed again
 * after each firing and cleared on stop.
 *
 * The tracker rolls over only when the UTC date has changed, so a timer that fires a little early
 * does nothing but wait out the rest, and one that fires late (the machine slept) rolls over once;
 * each next timer aims at the first midnight after the moment it is set.
 */
import type { Component } from '../runtime/lifecycle.js';
import type { ErrorTracker } from './tracker.js';

const DAY_MS = 86_400_000;

/** The first UTC midnight strictly after `ms`. */
export function nextUtcMidnight(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

/** How the summary waits: the runtime's timer, or a test's own. Returns the function that cancels it. */
export type SetTimer = (fire: () => void, delayMs: number) => () => void;

const realTimer: SetTimer = (fire, delayMs) => {
  const timer = setTimeout(fire, delayMs).unref();
  return () => clearTimeout(timer);
};

export interface DailySummaryOptions {
  tracker: Pick<ErrorTracker, 'rollOver'>;
  /** Wall clock in ms; default Date.now (the tracker must use the same clock). */
  now?: () => number;
  setTimer?: SetTimer;
}

export class DailyErrorSummary implements Component {
  readonly name = 'daily error summary (00:00 UTC)';
  private cancel: (() => void) | undefined;
  private running = false;
  private readonly now: () => number;
  private readonly setTimer: SetTimer;

  constructor(private readonly options: DailySummaryOptions) {
    this.now = options.now ?? Date.now;
    this.setTimer = options.setTimer ?? realTimer;
  }

  start(): Promise<void> {
    this.running = true;
    this.arm(nextUtcMidnight(this.now()));
    return Promise.resolve();
  }

  stop(): Promise<void> {
    this.running = false;
    this.cancel?.();
    this.cancel = undefined;
    return Promise.resolve();
  }

  private arm(atMs: number): void {
    if (!this.running) return;
    this.cancel = this.setTimer(() => this.fire(), Math.max(0, atMs - this.now()));
  }

  /** Rolls over when the date has changed (a timer that fired early does nothing), then aims at the next midnight. */
  private fire(): void {
    this.cancel = undefined;
    this.options.tracker.rollOver();
    this.arm(nextUtcMidnight(this.now()));
  }
}

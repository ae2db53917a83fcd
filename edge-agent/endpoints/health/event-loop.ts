/**
 * How late the event loop runs, for the container health endpoint (platform-formats.md §10.3: more
 * than 1 s is unhealthy). A timer due every `intervalMs` notes how late it fired; the lag is the
 * largest delay noted in the last `windowMs`, or the delay of a tick that is overdue right now, if
 * that is larger. The overdue part matters because after a block the loop may serve the waiting
 * health request before the timer's turn comes.
 *
 * A timer of our own rather than perf_hooks' monitorEventLoopDelay: its histogram has no time
 * window (only since the last reset) and reads nothing of a block still going on.
 */
import type { Component } from '../../../shared/runtime/lifecycle.js';

export interface EventLoopLagOptions {
  /** Default 100 ms. */
  intervalMs?: number;
  /** Default 5 s. */
  windowMs?: number;
}

export class EventLoopLag implements Component {
  readonly name = 'event-loop lag sampler';
  private readonly intervalMs: number;
  private readonly windowMs: number;
  private timer: NodeJS.Timeout | undefined;
  private last = 0;
  /** The delays above zero noted within the window, oldest first. */
  private delays: { at: number; ms: number }[] = [];

  constructor(options: EventLoopLagOptions = {}) {
    this.intervalMs = options.intervalMs ?? 100;
    this.windowMs = options.windowMs ?? 5000;
  }

  start(): Promise<void> {
    this.last = performance.now();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    // It measures the process; it must not keep one alive.
    this.timer.unref();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    this.delays = [];
    return Promise.resolve();
  }

  /** The lag in ms (0 when not started). */
  lagMs(): number {
    if (!this.timer) return 0;
    const now = performance.now();
    this.prune(now);
    let lag = Math.max(0, now - this.last - this.intervalMs);
    for (const delay of this.delays) lag = Math.max(lag, delay.ms);
    return lag;
  }

  private tick(): void {
    const now = performance.now();
    const ms = now - this.last - this.intervalMs;
    this.last = now;
    // Small delays are noise of the timer itself; only those worth reporting are kept.
    if (ms >= 10) this.delays.push({ at: now, ms });
    this.prune(now);
  }

  private prune(now: number): void {
    while (this.delays[0] && this.delays[0].at < now - this.windowMs) this.delays.shift();
  }
}

/**
 * The PollSink of the platform pipeline: each successful poll becomes one queued event (`health`,
 * `user-sessions`) for the destinations that take polled data (§0.6: `platformOutputs(config).health`
 * / `.sessions`), written through a batcher as the UDP listeners' events are (a refused write is
 * retried, tracked and logged; edge-agent/sources/common/batcher.ts). Failed polls write nothing (§4).
 *
 * Point times (§0.3): the event carries the time of its first point; the tsdb mapper builds the
 * others with `nthPointTime(first, i)`. The counter values are reserved here, once per poll, with
 * the process's clock, so that the points of every poll and every other source stay distinct.
 */
import { randomUUID } from 'node:crypto';
import { anyOutput, type PlatformOutputs } from '../../../shared/config/outputs.js';
import { EDGE_EVENTS_PER_MESSAGE } from '../../../shared/destinations/registry.js';
// The tsdb mapper builds these many points per poll from the one time reserved here.
import { HEALTH_POINTS_PER_SAMPLE, SESSION_SUMMARY_POINTS } from '../../../shared/destinations/tsdb/mappers.js';
import type { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { Log } from '../../../shared/logging/log.js';
import { LogThrottle } from '../../../shared/logging/throttle.js';
import type { HealthSample, SessionSample } from '../../../shared/platform/polled.js';
import type { QueuedEvent } from '../../../shared/queue/events.js';
import type { PointClock } from '../../../shared/queue/point-clock.js';
import type { EncodedEventQueue } from '../../../shared/queue/port.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { EventBatcher } from '../common/batcher.js';
import type { PollSink } from './sink.js';

/** Polled events a batcher holds while the queue refuses them (Svc choice): a poll is small and comes every few seconds at most. */
export const POLL_BATCHER_EVENTS = 1000;

export interface QueuePollSinkOptions {
  queue: EncodedEventQueue;
  outputs: Pick<PlatformOutputs, 'health' | 'sessions'>;
  clock: PointClock;
  errors: ErrorTracker;
  log: Log;
  /** Wait before a refused batch is tried again (default 1 s). */
  retryDelayMs?: number;
}

/** Enqueues successful polls for the destinations that take them; the batchers are its components. */
export class QueuePollSink implements PollSink {
  /** The batchers, to start before the pollers and stop after them. */
  readonly components: Component[];
  private readonly healthBatcher: EventBatcher | null;
  private readonly sessionsBatcher: EventBatcher | null;
  private readonly throttle = new LogThrottle();
  private droppedCount = 0;

  constructor(private readonly options: QueuePollSinkOptions) {
    const { queue, outputs, log, errors } = options;
    // A refused write is tracked with the poll's error type and the module of its data (§10.9).
    const batcher = (name: string, type: 'HEALTH_API' | 'PROXY_API', module: string) =>
      new EventBatcher({
        name,
        queue,
        maxBuffered: POLL_BATCHER_EVENTS,
        maxPerMessage: EDGE_EVENTS_PER_MESSAGE,
        log,
        whenFull: 'new polls are dropped, counted, while the buffer is full',
        onWriteError: (err) => errors.track(type, err, { module }),
        ...(options.retryDelayMs !== undefined ? { retryDelayMs: options.retryDelayMs } : {}),
      });
    this.healthBatcher = anyOutput(outputs.health) ? batcher('health', 'HEALTH_API', 'HEALTH_METRICS') : null;
    this.sessionsBatcher = anyOutput(outputs.sessions) ? batcher('user-sessions', 'PROXY_API', 'PROXY_SESSIONS') : null;
    this.components = [this.healthBatcher, this.sessionsBatcher].filter((s): s is EventBatcher => s !== null);
  }

  /** Polls dropped because their batcher was full (the queue refused writes for long). */
  get dropped(): number {
    return this.droppedCount;
  }

  health(sample: HealthSample, receivedAtMs: number): void {
    if (this.healthBatcher === null) return;
    const timeNs = this.options.clock.reserve(receivedAtMs, HEALTH_POINTS_PER_SAMPLE).toString();
    this.enqueue(
      this.healthBatcher,
      { kind: 'health', id: randomUUID(), receivedAt: new Date(receivedAtMs).toISOString(), timeNs, sample },
      sample.serverName,
    );
  }

  healthFailed(): void {
    // Nothing is written for a failed poll (§4); the tsdb keeps the last values with their times.
  }

  sessions(sample: SessionSample, receivedAtMs: number): void {
    if (this.sessionsBatcher === null) return;
    const timeNs = this.options.clock.reserve(receivedAtMs, SESSION_SUMMARY_POINTS + sample.sessions.length).toString();
    this.enqueue(
      this.sessionsBatcher,
      { kind: 'user-sessions', id: randomUUID(), receivedAt: new Date(receivedAtMs).toISOString(), timeNs, sample },
      sample.serverName,
    );
  }

  sessionsFailed(): void {
    // As healthFailed.
  }

  /**
   * Hands the event to its batcher without waiting: a poller does not stall behind a refusing queue.
   * When the batcher is full (the queue has refused writes for long) the poll is dropped, counted and
   * logged at most once a minute.
   */
  private enqueue(batcher: EventBatcher, event: QueuedEvent, serverName: string): void {
    if (batcher.held >= POLL_BATCHER_EVENTS) {
      this.droppedCount += 1;
      const { log, suppressed } = this.throttle.take(batcher.name);
      if (log)
        this.options.log.warn(
          { batcher: batcher.name, server: serverName, dropped: this.droppedCount, suppressed },
          `${batcher.name} is full (${POLL_BATCHER_EVENTS} polls wait for the event queue): a ${event.kind} poll of ${serverName} is dropped (${this.droppedCount} so far)`,
        );
      return;
    }
    // send() rejects only once the batcher is stopped (Svc is stopping): the poll is lost with the rest, as logged by the batcher.
    batcher.send([event]).catch(() => undefined);
  }
}

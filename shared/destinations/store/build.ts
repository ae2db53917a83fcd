/**
 * The embedded store's part of a local process (`svc local`, `svc edge`, `svc demo`; never a writer
 * Lambda, so cloudWriterDestination does not know it): ONE StoreWriter (one connection, in a worker
 * thread: shared/store/thread.ts), a lifecycle component that opens it before the queues start and
 * closes it after they stop, runs the upkeep once at start and then hourly, and makes the store
 * destination of each queue (the audit queue's and the platform queue's), which share the writer.
 */
import { resolve } from 'node:path';
import type { SvcConfig } from '../../config/schema.js';
import type { QueuedEvent } from '../../queue/events.js';
import type { Component } from '../../runtime/lifecycle.js';
import { openStoreWriting, type StoreWriting } from '../../store/thread.js';
import type { UpkeepReport } from '../../store/upkeep.js';
import {
  type CounterSample,
  StoreUnavailableError,
  type StoreWriteResult,
  type StoreWriterOptions,
} from '../../store/writer.js';
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { StoreDestination, StoreWriteState } from './destination.js';

/** How often the upkeep runs after the one at start. */
export const STORE_UPKEEP_INTERVAL_MS = 3_600_000;

/**
 * Queue messages per delivery (each of up to EDGE_EVENTS_PER_MESSAGE events on the platform queue,
 * 10–30 on the audit queue), at most STORE_BATCH_EVENTS events: one transaction and one sync each
 * (in slices on the main thread of the single executable: shared/store/thread.ts).
 */
export const STORE_BATCH = 50;
export const STORE_BATCH_EVENTS = 1000;
/** Waiting this long for a fuller delivery makes fewer, larger transactions under a trickle of events. */
export const STORE_BATCH_WINDOW_MS = 250;

/**
 * The store's writer as a lifecycle component, and the maker of its destinations. It is the
 * StoreWriting its destinations and Svc's counters write through (thread.ts: a worker thread, or
 * the main thread in the single executable).
 */
export class StoreComponent implements Component, StoreWriting {
  readonly name = 'embedded store';
  readonly file: string;
  private readonly options: StoreWriterOptions;
  private readonly state: StoreWriteState;
  private store: StoreWriting | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: DestinationContext,
    /** The clock of the upkeep (tests give their own). */
    private readonly now: () => number = Date.now,
    /** Run the writer in a worker thread; default: unless Svc is the single executable (thread.ts). */
    private readonly thread?: boolean,
  ) {
    const { config } = ctx;
    this.options = {
      path: config.store.path,
      servers: config.serversToMonitor.servers,
      sessionPollMs: config.userSessions.pollingInterval,
      upkeep: config.store,
    };
    this.file = resolve(config.store.path);
    this.state = new StoreWriteState(ctx.logger, ctx.errors, this.file);
  }

  /** Opens the database (StoreOpenError naming the file when it cannot). Called at composition, so a start fails before anything runs. */
  async open(): Promise<void> {
    this.store ??= await openStoreWriting(this.options, this.thread);
  }

  /** A store destination for one queue, writing through this component. */
  destination(): ConfiguredDestination {
    return {
      destination: new StoreDestination(this, this.state, this.ctx.logger),
      batchSize: STORE_BATCH,
      batchWindowMs: STORE_BATCH_WINDOW_MS,
      maxBatchEvents: STORE_BATCH_EVENTS,
    };
  }

  async start(): Promise<void> {
    await this.open();
    await this.upkeep();
    this.timer = setInterval(() => void this.upkeep(), STORE_UPKEEP_INTERVAL_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    const store = this.store;
    this.store = null;
    await store?.close();
  }

  write(events: readonly QueuedEvent[]): Promise<StoreWriteResult> {
    return this.opened().write(events);
  }

  writeCounters(timeMs: number, samples: readonly CounterSample[]): Promise<void> {
    return this.opened().writeCounters(timeMs, samples);
  }

  close(): Promise<void> {
    return this.stop();
  }

  /** One upkeep run now, logged at INFO with what it removed; a failure is logged, never thrown. */
  async upkeep(nowMs: number = this.now()): Promise<UpkeepReport> {
    const log = this.ctx.logger;
    try {
      const report = await this.opened().upkeep(nowMs);
      const mb = (report.bytes / (1024 * 1024)).toFixed(1);
      log.info(
        { file: this.file, ...report },
        `store upkeep: ${report.rolledUp} raw sample(s) rolled up into 5-minute rows, ${report.expired} row(s) older than ${this.ctx.config.store.retentionDays} days deleted, ${report.capped} row(s) deleted for the size cap; ${mb} MB on disk`,
      );
      return report;
    } catch (err) {
      this.ctx.errors.track('STORE_WRITE', err, { module: 'STORE' });
      log.error({ err, file: this.file }, 'store upkeep failed; it runs again within the hour');
      return { rolledUp: 0, expired: 0, capped: 0, keptFromMs: null, bytes: 0 };
    }
  }

  private opened(): StoreWriting {
    if (!this.store) throw new StoreUnavailableError(`the store ${this.file} is not open`, null);
    return this.store;
  }
}

/** The store component of the config, or null when `Svc.store.enable` is off. */
export function storeComponent(ctx: DestinationContext): StoreComponent | null {
  return storeOn(ctx.config) ? new StoreComponent(ctx) : null;
}

/** Whether the config keeps history in the embedded store. */
export function storeOn(config: SvcConfig): boolean {
  return config.store.enable;
}

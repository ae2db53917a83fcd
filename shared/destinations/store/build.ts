/**
 * The embedded store's part of a local process (`svc local`, `svc edge`, `svc demo`; never a writer
 * Lambda, so cloudWriterDestination does not know it): ONE StoreWriter (one connection), a lifecycle
 * component that opens it before the queues start and closes it after they stop, runs the upkeep
 * once at start and then hourly, and makes the store destination of each queue (the audit queue's
 * and the platform queue's), which share the writer.
 */
import type { SvcConfig } from '../../config/schema.js';
import type { Component } from '../../runtime/lifecycle.js';
import { StoreWriter } from '../../store/writer.js';
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { StoreDestination, StoreWriteState } from './destination.js';

/** How often the upkeep runs after the one at start. */
export const STORE_UPKEEP_INTERVAL_MS = 3_600_000;

/**
 * Queue messages per delivery (each of up to EDGE_EVENTS_PER_MESSAGE events on the platform queue,
 * 10–30 on the audit queue), at most STORE_BATCH_EVENTS events: one transaction and one sync each.
 * The transaction runs on the main thread (shared/store/writer.ts), so its size is bounded.
 */
export const STORE_BATCH = 50;
export const STORE_BATCH_EVENTS = 1000;
/** Waiting this long for a fuller delivery makes fewer, larger transactions under a trickle of events. */
export const STORE_BATCH_WINDOW_MS = 250;

/** The store's writer as a lifecycle component, and the maker of its destinations. */
export class StoreComponent implements Component {
  readonly name = 'embedded store';
  readonly writer: StoreWriter;
  private readonly state: StoreWriteState;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: DestinationContext,
    /** The clock of the upkeep (tests give their own). */
    private readonly now: () => number = Date.now,
  ) {
    const { config } = ctx;
    this.writer = new StoreWriter({
      path: config.store.path,
      servers: config.serversToMonitor.servers,
      sessionPollMs: config.userSessions.pollingInterval,
      upkeep: config.store,
    });
    this.state = new StoreWriteState(ctx.logger, ctx.errors, this.writer.file);
  }

  /** Opens the database (StoreOpenError naming the file when it cannot). Called at composition, so a start fails before anything runs. */
  open(): void {
    this.writer.open();
  }

  /** A store destination for one queue, sharing this component's writer. */
  destination(): ConfiguredDestination {
    return {
      destination: new StoreDestination(this.writer, this.state, this.ctx.logger),
      batchSize: STORE_BATCH,
      batchWindowMs: STORE_BATCH_WINDOW_MS,
      maxBatchEvents: STORE_BATCH_EVENTS,
    };
  }

  start(): Promise<void> {
    this.open();
    this.upkeep();
    this.timer = setInterval(() => this.upkeep(), STORE_UPKEEP_INTERVAL_MS);
    this.timer.unref();
    return Promise.resolve();
  }

  stop(): Promise<void> {
    clearInterval(this.timer);
    this.writer.close();
    return Promise.resolve();
  }

  /** One upkeep run now, logged at INFO with what it removed; a failure is logged, never thrown. */
  upkeep(): void {
    const log = this.ctx.logger;
    try {
      const report = this.writer.upkeep(this.now());
      const mb = (report.bytes / (1024 * 1024)).toFixed(1);
      log.info(
        { file: this.writer.file, ...report },
        `store upkeep: ${report.rolledUp} raw sample(s) rolled up into 5-minute rows, ${report.expired} row(s) older than ${this.ctx.config.store.retentionDays} days deleted, ${report.capped} row(s) deleted for the size cap; ${mb} MB on disk`,
      );
    } catch (err) {
      this.ctx.errors.track('STORE_WRITE', err, { module: 'STORE' });
      log.error({ err, file: this.writer.file }, 'store upkeep failed; it runs again within the hour');
    }
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

/**
 * The embedded store as a destination (`store`): each delivery of the audit queue or the platform
 * queue is written by the process's one store writer (shared/store/thread.ts), on disk before the
 * queue acknowledges it. When the store
 * cannot write now (locked, read-only, full, corrupt, its folder gone) the events wait in the queue
 * (DestinationWaitError: the group pauses with backoff and counts no attempt) and come again when
 * it writes again; any other failure fails the delivery's events, which come again like any failed
 * write.
 */
import type { ErrorTracker } from '../../errors/tracker.js';
import type { Log } from '../../logging/log.js';
import type { QueuedEvent } from '../../queue/events.js';
import type { StoreWriting } from '../../store/thread.js';
import { StoreUnavailableError } from '../../store/writer.js';
import { BaseDestination, DestinationWaitError } from '../port.js';

/**
 * Whether the store writes, shared by the destinations of one writer: a failure is logged at ERROR
 * when the store starts failing (or fails for another reason), and once at INFO when it writes
 * again, not once per delivery; every failed delivery is tracked (`STORE_WRITE`).
 */
export class StoreWriteState {
  private failing: string | null = null;

  constructor(
    private readonly log: Log,
    private readonly errors: Pick<ErrorTracker, 'track'>,
    private readonly file: string,
  ) {}

  /** A delivery failed with `err`, its `events` to come again. */
  failed(err: unknown, events: number): void {
    this.errors.track('STORE_WRITE', err, { module: 'STORE' });
    const reason = err instanceof Error ? err.message : String(err);
    if (this.failing === reason) return;
    this.failing = reason;
    this.log.error(
      { err, file: this.file, events },
      `the store cannot write (${reason}); its events wait in the local queue and are written when it works again (logged once until then)`,
    );
  }

  /** A delivery was written: ends a failure, saying so once. */
  wrote(): void {
    if (this.failing === null) return;
    this.failing = null;
    this.log.info({ file: this.file }, 'the store writes again; the events that waited are written now');
  }
}

export class StoreDestination extends BaseDestination {
  readonly name = 'store';

  constructor(
    private readonly writer: StoreWriting,
    private readonly state: StoreWriteState,
    log: Log,
  ) {
    super(log);
  }

  /** Every kind but the edge's own tsdb points: the sources enqueue only what some destination takes (outputs.ts). */
  takes(q: QueuedEvent): boolean {
    return q.kind !== 'points';
  }

  protected async writeEvents(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    try {
      const result = await this.writer.write(events);
      this.state.wrote();
      for (const [eventId, reason] of result.rejected)
        this.log.error({ eventId, reason }, `the store cannot keep event ${eventId}: ${reason}`);
      return new Set(result.rejected.keys());
    } catch (err) {
      this.state.failed(err, events.length);
      const ids = new Set(events.map((e) => e.id));
      if (err instanceof StoreUnavailableError) throw new DestinationWaitError(err.message, ids);
      return ids;
    }
  }
}

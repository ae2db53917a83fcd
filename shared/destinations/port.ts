/**
 * The Destination port: what the writer handler (handler.ts) writes a batch's events to. Every
 * destination extends `BaseDestination`, so a reader finds them all from here, and so what they
 * share lives once:
 * - a destination takes the events it serves (`takes`) and leaves the others alone: they are neither
 *   written nor failed by it (the local queues give every event to every destination); on a queue of
 *   its own (a writer Lambda's) the writer handler fails them instead (`onlyTakenKinds`, handler.ts);
 * - it prepares itself once before its first write (a database, a bucket), and again before each
 *   batch until that succeeds; meanwhile its events come back;
 * - it answers with the redelivery set: the ids of the events it did not write and that a later
 *   delivery may write. An error it throws fails every event it took, instead of the whole batch;
 * - when it cannot write now for a reason none of the events caused (its server unreachable, or
 *   refusing Svc's credentials) it throws DestinationWaitError: the events wait for it instead of
 *   counting a failed delivery (the writer handler turns that into a pause of the local queue's group).
 */
import type { Log } from '../logging/log.js';
import type { QueuedEvent } from '../queue/events.js';

export interface Destination {
  /** Also the name of its consumer group (and dead-letter folder) in the local queue. */
  readonly name: string;
  /** Resolves to the ids of events NOT written that a later delivery may write (e.g. the destination was down). */
  write(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>>;
  /**
   * Whether it writes `event` (its kind, and the config's switches for that kind). The writer handler
   * asks it on a queue that carries only this destination's events (a writer Lambda's), where an
   * event it does not take is an error.
   */
  takes(event: QueuedEvent): boolean;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Thrown by a destination's write when it cannot write now for a reason none of the events caused —
 * its server is unreachable, or refuses Svc's credentials — so that they wait for it (the local
 * queue pauses the destination's group and counts no attempt) instead of moving towards the
 * dead-letter folder. The destination has logged and tracked the cause itself: the message is for
 * the queue's one line about the pause.
 */
export class DestinationWaitError extends Error {
  override readonly name = 'DestinationWaitError';

  constructor(
    message: string,
    /** The events not written (the others of the batch were). */
    readonly eventIds: ReadonlySet<string>,
  ) {
    super(message);
  }
}

export abstract class BaseDestination implements Destination {
  abstract readonly name: string;
  private prepared = false;
  /** The preparation under way: deliveries running at once (ConsumerGroup.maxInFlight) share it. */
  private preparing: Promise<void> | undefined;
  private failed = 0;
  private taken = 0;

  protected constructor(protected readonly log: Log) {}

  abstract takes(event: QueuedEvent): boolean;

  /** Writes events it takes; resolves to the ids to deliver again. */
  protected abstract writeEvents(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>>;

  /** Creates what the destination needs before its first write (`events`: the batch waiting for it). None by default. */
  protected prepare(_events: readonly QueuedEvent[]): Promise<void> {
    return Promise.resolve();
  }

  /**
   * Events this destination did not write on a delivery, since it was made: each comes again, or
   * ends in the dead-letter folder (the metrics endpoint's `svc_destination_events_failed_total`).
   */
  get failedWrites(): number {
    return this.failed;
  }

  /** Events this destination took and wrote, since it was made (the status page's writes/s). */
  get writtenEvents(): number {
    return this.taken - this.failed;
  }

  async write(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    try {
      const again = await this.writeOwn(events);
      this.failed += again.size;
      return again;
    } catch (err) {
      if (err instanceof DestinationWaitError) this.failed += err.eventIds.size;
      throw err;
    }
  }

  private async writeOwn(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const mine = events.filter((e) => this.takes(e));
    if (mine.length === 0) return NONE;
    this.taken += mine.length;
    const all = () => new Set(mine.map((e) => e.id));
    if (!this.prepared) {
      try {
        this.preparing ??= this.prepare(mine).finally(() => (this.preparing = undefined));
        await this.preparing;
        this.prepared = true;
      } catch (err) {
        if (err instanceof DestinationWaitError) throw new DestinationWaitError(err.message, all());
        this.log.warn(
          { err, destination: this.name, events: mine.length },
          `${this.name} cannot be prepared yet; its ${mine.length} event(s) are delivered again`,
        );
        return all();
      }
    }
    try {
      return await this.writeEvents(mine);
    } catch (err) {
      if (err instanceof DestinationWaitError) throw err;
      this.log.error(
        { err, destination: this.name, events: mine.length },
        `${this.name} failed to write a batch; its ${mine.length} event(s) are delivered again`,
      );
      return all();
    }
  }
}

/** A destination that sends each event on its own (MQTT, monsaas, JSON files): all of a batch at once. */
export abstract class PerEventDestination extends BaseDestination {
  /** Writes one event; true when it is written (or has nothing to write), false to deliver it again. */
  protected abstract writeEvent(event: QueuedEvent): Promise<boolean>;

  protected async writeEvents(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const written = await Promise.all(events.map((e) => this.writeEvent(e)));
    return new Set(events.filter((_, i) => !written[i]).map((e) => e.id));
  }
}

/** Which platform outputs a destination was configured with; null (or absent) = that kind is not taken. */
export interface PlatformKindOutputs {
  userEvents: unknown;
  logEvents: unknown;
  health?: unknown;
  sessions?: unknown;
}

/** Whether a destination with these outputs takes `q` (MQTT and monsaas take the same platform kinds). */
export function takesPlatformKind(q: QueuedEvent, o: PlatformKindOutputs): boolean {
  return (
    (q.kind === 'user-event' && o.userEvents !== null) ||
    (q.kind === 'log-event' && o.logEvents !== null) ||
    (q.kind === 'health' && (o.health ?? null) !== null) ||
    (q.kind === 'user-sessions' && (o.sessions ?? null) !== null)
  );
}

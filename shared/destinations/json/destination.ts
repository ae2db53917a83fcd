/** The JSON object-data writer as a queue destination: each audit event written at once, failures retried. */
import type { Log } from '../../logging/log.js';
import type { QueuedEvent } from '../../queue/events.js';
import { PerEventDestination } from '../port.js';
import type { JsonObjectDataWriter } from './writer.js';

export class JsonObjectDataDestination extends PerEventDestination {
  readonly name = 'json';

  constructor(
    private readonly writer: JsonObjectDataWriter,
    log: Log,
  ) {
    super(log);
  }

  takes(q: QueuedEvent): boolean {
    return q.kind === 'audit';
  }

  /**
   * The batch's files, then one sync of their folder (the writer's `syncNames`): a batch counts as
   * written only once the files' names are durable too. When the folder cannot be synced, every
   * event of the batch is delivered again; the files already there are kept (a redelivery writes no
   * second file) and the folder sync is tried again.
   */
  protected override async writeEvents(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const failed = await super.writeEvents(events);
    try {
      this.writer.syncNames();
    } catch (err) {
      this.log.error(
        { err, events: events.length },
        `cannot sync the object-data folder; the ${events.length} event(s) of the batch are delivered again`,
      );
      return new Set(events.map((e) => e.id));
    }
    return failed;
  }

  protected writeEvent(q: QueuedEvent): Promise<boolean> {
    if (q.kind !== 'audit') return Promise.resolve(true);
    try {
      const file = this.writer.write(q);
      if (file) this.log.debug({ eventId: q.id, file }, 'wrote audit object data');
      return Promise.resolve(true);
    } catch (err) {
      this.log.error({ eventId: q.id, err }, 'cannot write audit object data; the event will be retried');
      return Promise.resolve(false);
    }
  }
}

/** The JSON object-data writer as a queue destination: each event written at once, failures retried. */
import { eventsOfKind, type QueuedEvent } from '../../queue/events.js';
import type { JsonObjectDataWriter } from './writer.js';
import type { Log } from '../../logging/log.js';

export class JsonObjectDataDestination {
  readonly name = 'json';

  constructor(
    private readonly writer: JsonObjectDataWriter,
    private readonly log: Log,
  ) {}

  write(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const failed = new Set<string>();
    for (const queued of eventsOfKind(events, 'audit')) {
      try {
        const file = this.writer.write(queued);
        if (file) this.log.debug({ eventId: queued.id, file }, 'wrote audit object data');
      } catch (err) {
        failed.add(queued.id);
        this.log.error({ eventId: queued.id, err }, 'cannot write audit object data; the event will be retried');
      }
    }
    return Promise.resolve(failed);
  }
}

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

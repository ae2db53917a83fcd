/**
 * The platform's UDP events to MQTT (platform-formats.md §7.3 user events, §7.4 log events): every
 * message of an event is published at once (the events of a batch too); an event with a failed
 * publish is returned so the queue delivers it again.
 *
 * A redelivered event is not published again to the topics it already reached (Svc choice): the
 * destination remembers the (event id, topic) pairs published recently, so a subscriber of the
 * topic that worked does not see the message twice. Publish failures are tracked and logged by the
 * `MqttWriter` (`MQTT_PUBLISH`, modules `USER_EVENTS_MQTT` / `LOG_EVENTS_MQTT`).
 */
import { logEventMessages, userEventMessages, type LogEventMqttSettings, type MqttMessage, type UserEventMqttSettings } from './mappers.js';
import type { TagItem } from '../../platform/tags.js';
import type { QueuedEvent } from '../../queue/events.js';
import { RecentIds } from '../../util/recent-ids.js';
import type { MqttWriter } from './client.js';
import type { Log } from '../../logging/log.js';
import { PerEventDestination } from '../port.js';

export const USER_EVENTS_MQTT_MODULE = 'USER_EVENTS_MQTT';
export const LOG_EVENTS_MQTT_MODULE = 'LOG_EVENTS_MQTT';

export interface MqttDestinationOptions {
  writer: Pick<MqttWriter, 'publish'>;
  /** `userEvents.sendToMQTT` and `userEvents.tags[]` when user events go to MQTT (§0.6), else null. */
  userEvents: { settings: UserEventMqttSettings; tags: readonly TagItem[] } | null;
  /** `logEvents.sendToMQTT` and `logEvents.tags[]` when log events go to MQTT (§0.6), else null. */
  logEvents: { settings: LogEventMqttSettings; tags: readonly TagItem[] } | null;
  /** How many published (event, topic) pairs to remember for redeliveries; default 10,000. */
  rememberPublished?: number;
  log: Log;
}

export class MqttDestination extends PerEventDestination {
  readonly name = 'mqtt';
  private readonly published: RecentIds;

  constructor(private readonly options: MqttDestinationOptions) {
    super(options.log);
    this.published = new RecentIds(options.rememberPublished ?? 10_000);
  }

  protected takes(q: QueuedEvent): boolean {
    return (q.kind === 'user-event' && this.options.userEvents !== null) || (q.kind === 'log-event' && this.options.logEvents !== null);
  }

  /** Publishes the messages of one event not published before; true when every one is published. */
  protected async writeEvent(q: QueuedEvent): Promise<boolean> {
    const { userEvents, logEvents } = this.options;
    let messages: MqttMessage[];
    let module: string;
    if (q.kind === 'user-event' && userEvents !== null) {
      messages = userEventMessages(q.event, userEvents.settings, userEvents.tags);
      module = USER_EVENTS_MQTT_MODULE;
    } else if (q.kind === 'log-event' && logEvents !== null) {
      messages = logEventMessages(q.event, logEvents.settings, logEvents.tags);
      module = LOG_EVENTS_MQTT_MODULE;
    } else {
      return true;
    }
    const results = await Promise.all(
      messages.map(async ({ topic, payload }) => {
        const key = `${q.id}\u0000${topic}`;
        if (this.published.has(key)) return true;
        const ok = await this.options.writer.publish(topic, payload, module);
        if (ok) this.published.add(key);
        return ok;
      }),
    );
    return results.every((ok) => ok);
  }
}

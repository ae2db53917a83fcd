/**
 * Polled data and the platform's UDP events to MQTT (platform-formats.md §7.1 health, §7.2 sessions,
 * §7.3 user events, §7.4 log events): every message of an event is published at once (the events of
 * a batch too); an event with a failed publish is returned so the queue delivers it again.
 *
 * A redelivered event is not published again to the topics it already reached (Svc choice): the
 * destination remembers the (event id, topic) pairs published recently, so a subscriber of the
 * topic that worked does not see the message twice. Publish failures are tracked and logged by the
 * `MqttWriter` (`MQTT_PUBLISH`, modules `HEALTH_METRICS_MQTT` / `PROXY_SESSIONS_MQTT` with the server's
 * name, `USER_EVENTS_MQTT` / `LOG_EVENTS_MQTT`).
 *
 * While the writer is not connected (the broker is down, or refuses the connection), a delivery with
 * events it takes is not tried: `write` throws DestinationWaitError, so the local queue
 * pauses the group with backoff, counts no attempt and keeps the events (none goes to the dead-letter
 * folder for an outage); they are published, oldest first, once the writer is connected again.
 */

import type { Log } from '../../logging/log.js';
import type { TagItem } from '../../platform/tags.js';
import type { QueuedEvent } from '../../queue/events.js';
import { RecentIds } from '../../util/recent-ids.js';
import { DestinationWaitError, PerEventDestination, takesPlatformKind } from '../port.js';
import type { MqttWriter } from './client.js';
import {
  healthMessages,
  type LogEventMqttSettings,
  logEventMessages,
  type MqttMessage,
  sessionMessages,
  type UserEventMqttSettings,
  userEventMessages,
} from './mappers.js';

export const USER_EVENTS_MQTT_MODULE = 'USER_EVENTS_MQTT';
export const LOG_EVENTS_MQTT_MODULE = 'LOG_EVENTS_MQTT';
export const HEALTH_MQTT_MODULE = 'HEALTH_METRICS_MQTT';
export const SESSIONS_MQTT_MODULE = 'PROXY_SESSIONS_MQTT';

export interface MqttDestinationOptions {
  writer: Pick<MqttWriter, 'publish' | 'unavailableReason'>;
  /** `userEvents.sendToMQTT` and `userEvents.tags[]` when user events go to MQTT (§0.6), else null. */
  userEvents: { settings: UserEventMqttSettings; tags: readonly TagItem[] } | null;
  /** `logEvents.sendToMQTT` and `logEvents.tags[]` when log events go to MQTT (§0.6), else null. */
  logEvents: { settings: LogEventMqttSettings; tags: readonly TagItem[] } | null;
  /** `mqttConfig.baseTopic` when health samples go to MQTT (§0.6), else null or absent. */
  health?: { baseTopic: string } | null;
  /** `mqttConfig.baseTopic` when session samples go to MQTT (§0.6), else null or absent. */
  sessions?: { baseTopic: string } | null;
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

  takes(q: QueuedEvent): boolean {
    return takesPlatformKind(q, this.options);
  }

  /** As BaseDestination's, but the whole delivery waits in the queue while the writer is not connected. */
  override async write(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const unavailable = this.options.writer.unavailableReason;
    if (unavailable !== undefined && events.some((e) => this.takes(e)))
      throw new DestinationWaitError(unavailable, new Set(events.map((e) => e.id)));
    return super.write(events);
  }

  /** Publishes the messages of one event not published before; true when every one is published. */
  protected async writeEvent(q: QueuedEvent): Promise<boolean> {
    const { userEvents, logEvents, health, sessions } = this.options;
    let messages: MqttMessage[];
    let module: string;
    let serverName: string | undefined;
    if (q.kind === 'health' && health !== undefined && health !== null) {
      messages = healthMessages(q.sample, health.baseTopic);
      module = HEALTH_MQTT_MODULE;
      serverName = q.sample.serverName;
    } else if (q.kind === 'user-sessions' && sessions !== undefined && sessions !== null) {
      messages = sessionMessages(q.sample, sessions.baseTopic);
      module = SESSIONS_MQTT_MODULE;
      serverName = q.sample.serverName;
    } else if (q.kind === 'user-event' && userEvents !== null) {
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
        const ok = await this.options.writer.publish(topic, payload, module, serverName);
        if (ok) this.published.add(key);
        return ok;
      }),
    );
    return results.every((ok) => ok);
  }
}

/**
 * MQTT: the notification as JSON (the same Alertmanager payload as the generic webhook) published to
 * a topic through Svc's MQTT writer (shared/destinations/mqtt/client.ts, the broker of
 * `Svc.mqttConfig`). The writer tracks its own failed publishes (`MQTT_PUBLISH`); a false from it
 * becomes a retryable ChannelError here.
 */
import type { MqttWriter } from '../../destinations/mqtt/client.js';
import type { AlertNotification } from '../notification.js';
import type { Channel } from './port.js';
import { ChannelError } from './port.js';
import { alertmanagerPayload } from './webhook.js';

/** The module the writer tracks this channel's failed publishes with. */
export const ALERT_MQTT_MODULE = 'ALERT_CHANNEL';

/** An MQTT channel publishing to `topic`. */
export class MqttChannel implements Channel {
  readonly type = 'mqtt';
  readonly target: string;

  constructor(
    readonly name: string,
    private readonly topic: string,
    private readonly writer: Pick<MqttWriter, 'publish' | 'url'>,
  ) {
    this.target = `${writer.url}/${topic}`;
  }

  async send(notification: AlertNotification): Promise<void> {
    const published = await this.writer.publish(
      this.topic,
      JSON.stringify(alertmanagerPayload(notification)),
      ALERT_MQTT_MODULE,
      notification.commonLabels.server,
    );
    if (!published)
      throw new ChannelError(`mqtt channel "${this.name}" (${this.target}): the publish failed`, { retryable: true });
  }
}

/** Makes the channel of a configured channel (an item of `Svc.alerts.channels[]`). */
import type { MqttWriter } from '../../destinations/mqtt/client.js';
import type { ChannelSettings } from '../settings.js';
import { EmailChannel } from './email.js';
import { MqttChannel } from './mqtt.js';
import type { Channel } from './port.js';
import { slackChannel } from './slack.js';
import { teamsChannel } from './teams.js';
import { webhookChannel } from './webhook.js';

/** What channels need from the running service: the MQTT writer, when MQTT is on. */
export interface ChannelDependencies {
  mqtt?: Pick<MqttWriter, 'publish' | 'url'>;
}

/** The channel of the config item `settings`; throws naming the channel when an MQTT channel has no MQTT writer (Svc.mqttConfig is off). */
export function buildChannel(settings: ChannelSettings, dependencies: ChannelDependencies = {}): Channel {
  switch (settings.type) {
    case 'webhook':
      return webhookChannel(settings.name, settings.url);
    case 'slack':
      return slackChannel(settings.name, settings.url);
    case 'teams':
      return teamsChannel(settings.name, settings.url);
    case 'email':
      return new EmailChannel(settings.name, settings.email);
    case 'mqtt':
      if (dependencies.mqtt === undefined)
        throw new Error(`mqtt channel "${settings.name}" needs the MQTT broker: set Svc.mqttConfig.enable true`);
      return new MqttChannel(settings.name, settings.topic, dependencies.mqtt);
  }
}

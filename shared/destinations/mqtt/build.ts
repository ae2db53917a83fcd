/** The MQTT destination of the platform kinds `platformOutputs` routes to MQTT (§0.6), with its client. */
import type { PlatformOutputs } from '../../config/outputs.js';
import type { Component } from '../../runtime/lifecycle.js';
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { MqttWriter } from './client.js';
import { MqttDestination } from './destination.js';

/** Messages per delivery, no waiting (build.ts EDGE_EVENTS_PER_MESSAGE says why 100). */
export const MQTT_BATCH = { batchSize: 100, batchWindowMs: 0 } as const;

/** The destination and its client (a Component: start it before the queue, stop it after), or null when nothing goes to MQTT. */
export function mqttDestination(
  { config, logger: log, errors }: DestinationContext,
  outputs: PlatformOutputs,
): { configured: ConfiguredDestination; component: Component } | null {
  if (!(outputs.userEvents.mqtt || outputs.logEvents.mqtt || outputs.health.mqtt || outputs.sessions.mqtt)) return null;
  const writer = new MqttWriter({ settings: config.mqttConfig, log, errors });
  const baseTopic = { baseTopic: config.mqttConfig.baseTopic };
  const destination = new MqttDestination({
    writer,
    userEvents: outputs.userEvents.mqtt
      ? { settings: config.userEvents.sendToMQTT, tags: config.userEvents.tags }
      : null,
    logEvents: outputs.logEvents.mqtt ? { settings: config.logEvents.sendToMQTT, tags: config.logEvents.tags } : null,
    health: outputs.health.mqtt ? baseTopic : null,
    sessions: outputs.sessions.mqtt ? baseTopic : null,
    log,
  });
  return { configured: { destination, ...MQTT_BATCH }, component: writer };
}

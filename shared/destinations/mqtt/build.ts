/** The MQTT destination of the platform kinds `platformOutputs` routes to MQTT (§0.6), with its client. */
import type { PlatformOutputs } from '../../config/outputs.js';
import type { Component } from '../../runtime/lifecycle.js';
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { MqttWriter } from './client.js';
import { MqttDestination } from './destination.js';

/** Messages per delivery, no waiting (build.ts EDGE_EVENTS_PER_MESSAGE says why 100). */
export const MQTT_BATCH = { batchSize: 100, batchWindowMs: 0 } as const;

/** Whether a platform kind goes to MQTT (then the MQTT destination needs the process's client). */
export function platformMqttWanted(outputs: PlatformOutputs): boolean {
  return outputs.userEvents.mqtt || outputs.logEvents.mqtt || outputs.health.mqtt || outputs.sessions.mqtt;
}

/**
 * The process's one MQTT client (docs/mqtt.md "One connection"), or null when nothing publishes:
 * the MQTT destination and the alerts' mqtt channels share it. A client of each would connect with
 * the same client id, and a broker closes the older connection of an id when another connects with
 * it (MQTT 3.1.1 §3.1.4): the two would push each other off every second. A Component: start it
 * before what publishes through it, stop it after.
 */
export function processMqttWriter(
  { config, logger: log, errors }: DestinationContext,
  uses: { destination: boolean; alertChannel: boolean },
): MqttWriter | null {
  if (!config.mqttConfig.enable || !(uses.destination || uses.alertChannel)) return null;
  return new MqttWriter({ settings: config.mqttConfig, log, errors });
}

/**
 * The MQTT destination of the kinds `outputs` routes to MQTT, publishing through `writer` (the
 * process's client, or a client of its own when none is given: then `component` is that client, to
 * start before the queue and stop after it), or null when nothing goes to MQTT.
 */
export function mqttDestination(
  ctx: DestinationContext,
  outputs: PlatformOutputs,
  shared: MqttWriter | null = null,
): { configured: ConfiguredDestination; component: Component | null } | null {
  if (!platformMqttWanted(outputs)) return null;
  const { config, logger: log, errors } = ctx;
  // A kind goes to MQTT only while Svc.mqttConfig.enable is on (outputs.ts).
  const writer = shared ?? new MqttWriter({ settings: config.mqttConfig, log, errors });
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
  return { configured: { destination, ...MQTT_BATCH }, component: shared === null ? writer : null };
}

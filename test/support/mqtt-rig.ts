/**
 * What the MQTT destination suites share: a real mosquitto, Svc's MqttWriter connected to it with
 * an error tracker that records, and a subscriber to every topic that records what arrives.
 */
import { connectAsync } from 'mqtt';
import type { SvcConfig } from '../../shared/config/schema.js';
import { MqttWriter } from '../../shared/destinations/mqtt/client.js';
import { ErrorTracker, type TrackedError } from '../../shared/errors/tracker.js';
import { silentLog } from './log.js';
import { type MosquittoHandle, startMosquitto } from './mosquitto.js';
import { LOOPBACK } from './ports.js';

export interface Received {
  topic: string;
  payload: string;
  retain: boolean;
}

/** `mqttConfig` for a broker on loopback `port`: today's defaults (plain MQTT, anonymous), with `overrides`. */
export function mqttTestSettings(
  port: number,
  overrides: Partial<Omit<SvcConfig['mqttConfig'], 'tls'>> & { tls?: Partial<SvcConfig['mqttConfig']['tls']> } = {},
): SvcConfig['mqttConfig'] {
  const { tls, ...rest } = overrides;
  return {
    enable: true,
    brokerHost: LOOPBACK,
    brokerPort: port,
    baseTopic: 'svc/',
    clientId: '',
    username: '',
    password: '',
    ...rest,
    tls: { enable: false, caFile: '', certFile: '', keyFile: '', rejectUnauthorized: true, ...tls },
  };
}

export interface MqttRig {
  broker: MosquittoHandle;
  writer: MqttWriter;
  /** Every message the subscriber (`#`) received, in order. */
  received: Received[];
  /** Every error the writer tracked. */
  tracked: TrackedError[];
  stop(): Promise<void>;
}

export async function startMqttRig(): Promise<MqttRig> {
  const broker = await startMosquitto();
  const received: Received[] = [];
  const tracked: TrackedError[] = [];
  const errors = new ErrorTracker({ enabled: true, log: silentLog, sink: (e) => tracked.push(e) });
  const writer = new MqttWriter({
    settings: mqttTestSettings(broker.port),
    log: silentLog,
    errors,
  });
  await writer.start();
  const subscriber = await connectAsync(broker.url, {
    protocolVersion: 5,
    clientId: `sub_${Math.random().toString(16).slice(2)}`,
    reconnectPeriod: 0,
  });
  subscriber.on('message', (topic, payload, packet) =>
    received.push({ topic, payload: payload.toString('utf8'), retain: packet.retain }),
  );
  await subscriber.subscribeAsync('#', { qos: 1, rap: true });
  return {
    broker,
    writer,
    received,
    tracked,
    async stop() {
      await subscriber.endAsync();
      await writer.stop();
      await broker.stop();
    },
  };
}

/**
 * The `svc_errors` row (§6.10) of an MQTT broker that refused the TCP connection (nothing listens on
 * `port` at 127.0.0.1): one point per outage, module MQTT_CONNECTION. `time` as the query returns it.
 */
export function mqttOutageRow(port: number, time: unknown): Record<string, unknown> {
  return {
    time,
    error_type: 'MQTT_PUBLISH',
    server_name: '_no_server_context',
    destination_host: '127.0.0.1',
    module: 'MQTT_CONNECTION',
    error_count: 1,
    error_category: 'connection_refused',
    error_code: 'ECONNREFUSED',
    remote_address: '127.0.0.1',
    remote_port: port,
    syscall: 'connect',
  };
}

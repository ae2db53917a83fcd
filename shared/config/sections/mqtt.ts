/** `mqttConfig`: the MQTT broker that user and log events are published to. */
import { Feature, Port, Str } from '../builders.js';

export const mqttConfig = Feature('MQTT broker; master switch of every MQTT publish', false, 'Send data to MQTT', {
  brokerHost: Str('localhost', 'Broker IP or FQDN', { minLength: 1 }),
  brokerPort: Port(1883, 'Broker port'),
  baseTopic: Str('svc/', 'Default topic; should end with /', { minLength: 1 }),
});

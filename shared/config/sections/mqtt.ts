/** `mqttConfig`: the MQTT broker that user and log events are published to. */
import { Bool, Feature, Port, Secret, Str } from '../builders.js';

export const mqttConfig = Feature('MQTT broker; master switch of every MQTT publish', false, 'Send data to MQTT', {
  brokerHost: Str('localhost', 'Broker IP or FQDN', { minLength: 1 }),
  brokerPort: Port(1883, 'Broker port (mqtts brokers usually listen on 8883)'),
  baseTopic: Str('svc/', 'Default topic; should end with /', { minLength: 1 }),
  clientId: Str(
    '',
    'MQTT client id; empty = svc-<host name>, the same at every start. Two clients with one id on a broker push each other off: give each Svc its own',
  ),
  username: Str('', 'User name sent when connecting; empty = none (anonymous)'),
  password: Secret('Password sent with username; empty = none'),
  tls: Feature('TLS to the broker (mqtts)', false, 'Connect with TLS (mqtts://); false = plain mqtt://', {
    caFile: Str(
      '',
      "PEM file of the CA(s) that signed the broker's certificate; empty = Node's built-in public CAs; a relative path starts from the working directory",
    ),
    certFile: Str(
      '',
      'Client certificate PEM file, for a broker that asks for one (needs keyFile); empty = none; a relative path starts from the working directory',
    ),
    keyFile: Str(
      '',
      'Private key PEM file of certFile, not encrypted; a relative path starts from the working directory',
    ),
    rejectUnauthorized: Bool(true, 'false accepts a broker certificate no trusted CA signed (for tests only)'),
  }),
});

/**
 * The settings of one notification channel, `Svc.alerts.channels[]` once the alert rules come (this
 * schema is not in the config yet: the section that uses it comes with the rule engine). Built with
 * the config's own builders, so secrets are marked as every other secret is (`x-secret`: redacted
 * in logs, crash dumps and the config view); the URL of the HTTP kinds is one, as it carries the key.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Bool, HTTP_URL, Port, Secret, Str } from '../config/builders.js';

const name = Str('', "The channel's name: routes and the Alerts page refer to it", { minLength: 1 });
/** A channel that POSTs to a URL, which is a secret: it carries the key. */
const httpChannel = <Kind extends 'webhook' | 'slack' | 'teams'>(type: Kind, service: string) =>
  Type.Object({
    name,
    type: Type.Literal(type),
    url: Secret(`${service} URL (http:// or https://); a secret: it carries the key`, { ...HTTP_URL, minLength: 1 }),
  });

/** A generic webhook receiving Alertmanager's payload (version 4). */
export const WebhookChannelSchema = httpChannel('webhook', "The receiver's");
/** A Slack incoming webhook. */
export const SlackChannelSchema = httpChannel('slack', 'The Slack incoming webhook');
/** A Microsoft Teams Workflows webhook. */
export const TeamsChannelSchema = httpChannel('teams', 'The Teams Workflows webhook');

/** E-mail through an SMTP server. */
export const EmailChannelSchema = Type.Object({
  name,
  type: Type.Literal('email'),
  smtp: Type.Object({
    host: Str('', 'SMTP server host name or IP address', { minLength: 1 }),
    port: Port(587, 'SMTP port: 587 for submission with STARTTLS, 465 for implicit TLS (secure), 25 for relay'),
    secure: Bool(false, 'Implicit TLS from the first byte (port 465); false = plain connection upgraded by STARTTLS'),
    requireStartTls: Bool(
      true,
      'With secure false: refuse to send unless the server offers STARTTLS (false sends in clear text where it does not)',
    ),
    username: Str('', 'User name for SMTP AUTH; empty = no authentication'),
    password: Secret('Password for SMTP AUTH'),
    caFile: Str(
      '',
      "PEM file of the CA(s) that signed the SMTP server's certificate; empty = Node's built-in public CAs",
    ),
  }),
  from: Str('', 'Sender address, e.g. "Svc alerts <svc@example.com>"', { minLength: 1 }),
  to: Type.Array(Str('', 'A recipient address', { minLength: 1 }), {
    minItems: 1,
    description: 'Recipient addresses',
  }),
});

/** A topic on the MQTT broker of `Svc.mqttConfig`. */
export const MqttChannelSchema = Type.Object({
  name,
  type: Type.Literal('mqtt'),
  topic: Str('svc/alerts', 'Topic the JSON notification is published to, on the broker of Svc.mqttConfig', {
    minLength: 1,
  }),
});

/** One channel: `type` says which settings it has. */
export const ChannelSettingsSchema = Type.Union([
  WebhookChannelSchema,
  SlackChannelSchema,
  TeamsChannelSchema,
  EmailChannelSchema,
  MqttChannelSchema,
]);

/** One channel's settings. */
export type ChannelSettings = Static<typeof ChannelSettingsSchema>;
/** The settings of an e-mail channel. */
export type EmailChannelSettings = Static<typeof EmailChannelSchema>;

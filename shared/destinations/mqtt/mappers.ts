/**
 * MQTT messages of the platform's UDP events (platform-formats.md §7.3 user events, §7.4 log events):
 * pure builders of `{topic, payload}`; `PlatformMqttDestination` publishes them with the `MqttWriter`.
 *
 * The builders look at the topic settings only. Whether MQTT is used at all (`mqttConfig.enable` +
 * `…sendToMQTT.enable`, §0.6) is decided by `platformOutputs` (shared/destinations/registry.ts),
 * which does not create the destination otherwise.
 *
 * Choices where the spec is silent (Svc choice):
 * - Two enabled topics with the same text get the message once (the same subscriber would otherwise
 *   see it twice).
 * - Subsystem topics (§7.4): empty parts of the subsystem (`A..B`, a leading or trailing `.`) are
 *   dropped, MQTT empty levels being easy to miss in a subscription; an empty subsystem gives the level
 *   `unknown`, the word the event counts use for an empty subsystem (§2.3 step 2).
 */
import type { SvcConfig } from '../../config/schema.js';
import { topicLevel } from './client.js';
import { firstValueTags } from '../../platform/tags.js';
import type { PlatformLogEvent, UserActivity } from '../../platform/events.js';
import type { TagItem } from '../../platform/tags.js';

/** One MQTT publish: topic and UTF-8 payload. */
export interface MqttMessage {
  topic: string;
  payload: string;
}

export type UserEventMqttSettings = SvcConfig['userEvents']['sendToMQTT'];
export type LogEventMqttSettings = SvcConfig['logEvents']['sendToMQTT'];
type UserTopicKey = keyof UserEventMqttSettings['postTo'];

/** §7.3: the command-specific topic of each command; `everythingTopic` takes every command. */
export const USER_EVENT_COMMAND_TOPICS: Readonly<Record<string, Exclude<UserTopicKey, 'everythingTopic'>>> = {
  'Start session': 'sessionStartTopic',
  'Stop session': 'sessionStopTopic',
  'Open connection': 'connectionOpenTopic',
  'Close connection': 'connectionCloseTopic',
};

/** §7.3: the optional payload keys, in payload order, each written when present. */
const USER_OPTIONAL_KEYS = ['appId', 'appName', 'uaBrowserName', 'uaBrowserMajorVersion', 'uaOsName', 'uaOsVersion'] as const;

/**
 * A configured tag list as the `tags` object of a payload. A name given twice keeps its first value,
 * as a tsdb tag does (the startup rules refuse duplicates anyway).
 */
export function tagObject(tags: readonly TagItem[]): Record<string, string> {
  return firstValueTags(tags);
}

function unique(topics: string[]): string[] {
  return [...new Set(topics)];
}

/**
 * §7.3: the messages of one user event, one per enabled topic that applies to its command
 * (`everythingTopic` first). Payload keys: `messageType, host, command, userDir, userId, origin,
 * context, message, tags`, then `appId`, `appName` and the user-agent keys when present.
 */
export function userEventMessages(event: UserActivity, settings: UserEventMqttSettings, tags: readonly TagItem[]): MqttMessage[] {
  const postTo = settings.postTo;
  const topics: string[] = [];
  if (postTo.everythingTopic.enable) topics.push(postTo.everythingTopic.topic);
  const specific = Object.hasOwn(USER_EVENT_COMMAND_TOPICS, event.command) ? USER_EVENT_COMMAND_TOPICS[event.command] : undefined;
  if (specific !== undefined && postTo[specific].enable) topics.push(postTo[specific].topic);
  if (topics.length === 0) return [];

  const payload: Record<string, unknown> = {
    messageType: event.messageType,
    host: event.host,
    command: event.command,
    userDir: event.user_directory,
    userId: event.user_id,
    origin: event.origin,
    context: event.context,
    message: event.message,
    tags: tagObject(tags),
  };
  for (const key of USER_OPTIONAL_KEYS) {
    const value = event[key];
    if (value !== undefined && value !== '') payload[key] = value;
  }
  const text = JSON.stringify(payload);
  return unique(topics).map((topic) => ({ topic, payload: text }));
}

/**
 * §7.4: `<baseTopic>/<subsystem parts lower-cased>`, each part with `+`/`#` replaced by `_`
 * (`Audit.Proxy.Proxy.Core.RequestListener` → `svc/logevent/audit/proxy/proxy/core/requestlistener`).
 */
export function subsystemTopic(baseTopic: string, subsystem: string): string {
  const parts = subsystem
    .split('.')
    .filter((p) => p !== '')
    .map((p) => topicLevel(p.toLowerCase()));
  const levels = parts.length === 0 ? 'unknown' : parts.join('/');
  return `${baseTopic.endsWith('/') ? baseTopic : `${baseTopic}/`}${levels}`;
}

/**
 * §7.4: the messages of one log event: to the base topic when `postTo.baseTopic`, to its subsystem
 * topic when `postTo.subsystemTopics`. Payload = the parsed object (§2.2, with `category` when
 * categorised, both values of a repeated category name kept) plus `tags` (`logEvents.tags[]`).
 */
export function logEventMessages(event: PlatformLogEvent, settings: LogEventMqttSettings, tags: readonly TagItem[]): MqttMessage[] {
  const topics: string[] = [];
  if (settings.postTo.baseTopic) topics.push(settings.baseTopic);
  if (settings.postTo.subsystemTopics) topics.push(subsystemTopic(settings.baseTopic, event.subsystem));
  if (topics.length === 0) return [];
  const text = JSON.stringify({ ...event, tags: tagObject(tags) });
  return unique(topics).map((topic) => ({ topic, payload: text }));
}

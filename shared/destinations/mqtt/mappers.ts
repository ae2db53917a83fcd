/**
 * MQTT messages of polled data (platform-formats.md §7.1 health, §7.2 sessions) and of the platform's
 * UDP events (§7.3 user events, §7.4 log events): pure builders of `{topic, payload}`;
 * `MqttDestination` publishes them with the `MqttWriter`.
 *
 * The builders look at the topic settings only. Whether MQTT is used at all (`mqttConfig.enable` +
 * `…sendToMQTT.enable`, §0.6) is decided by `platformOutputs` (shared/destinations/registry.ts),
 * which does not create the destination otherwise.
 *
 * Choices where the spec is silent (Svc choice):
 * - Two enabled topics with the same text get the message once (the same subscriber would otherwise
 *   see it twice).
 * - Health values (§7.1): an empty app list is published as an empty payload (the list is empty now;
 *   skipping it would leave a subscriber with the last non-empty list). Numbers are written as
 *   JavaScript prints them (`4213.6`, `7`); the cache hit ratio is computed in integers
 *   (`floor(hits × 100 / lookups)`), so 29 hits of 100 lookups give `29`, not the `28` that
 *   `hits / lookups × 100` in floating point would.
 * - A topic level built from data (the server's host, the virtual proxy) has `+`/`#` replaced by `_`;
 *   `mqttConfig.baseTopic` is used as configured.
 * - Subsystem topics (§7.4): empty parts of the subsystem (`A..B`, a leading or trailing `.`) are
 *   dropped, MQTT empty levels being easy to miss in a subscription; an empty subsystem gives the level
 *   `unknown`, the word the event counts use for an empty subsystem (§2.3 step 2).
 */
import type { SvcConfig } from '../../config/schema.js';
import type { PlatformLogEvent, UserActivity } from '../../platform/events.js';
import type { HealthBody, HealthSample, SessionSample } from '../../platform/polled.js';
import type { TagItem } from '../../platform/tags.js';
import { firstValueTags } from '../../platform/tags.js';
import { topicLevel } from './client.js';

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
const USER_OPTIONAL_KEYS = [
  'appId',
  'appName',
  'uaBrowserName',
  'uaBrowserMajorVersion',
  'uaOsName',
  'uaOsVersion',
] as const;

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
export function userEventMessages(
  event: UserActivity,
  settings: UserEventMqttSettings,
  tags: readonly TagItem[],
): MqttMessage[] {
  const postTo = settings.postTo;
  const topics: string[] = [];
  if (postTo.everythingTopic.enable) topics.push(postTo.everythingTopic.topic);
  const specific = Object.hasOwn(USER_EVENT_COMMAND_TOPICS, event.command)
    ? USER_EVENT_COMMAND_TOPICS[event.command]
    : undefined;
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
export function logEventMessages(
  event: PlatformLogEvent,
  settings: LogEventMqttSettings,
  tags: readonly TagItem[],
): MqttMessage[] {
  const topics: string[] = [];
  if (settings.postTo.baseTopic) topics.push(settings.baseTopic);
  if (settings.postTo.subsystemTopics) topics.push(subsystemTopic(settings.baseTopic, event.subsystem));
  if (topics.length === 0) return [];
  const text = JSON.stringify({ ...event, tags: tagObject(tags) });
  return unique(topics).map((topic) => ({ topic, payload: text }));
}

/** §4 cache hit ratio: `floor(hits / lookups × 100)` in integer arithmetic; null when there were no lookups. */
export function cacheHitRatio(cache: Pick<HealthBody['cache'], 'hits' | 'lookups'>): number | null {
  return cache.lookups > 0 ? Math.floor((cache.hits * 100) / cache.lookups) : null;
}

const text = (value: number | boolean): string => String(value);
const list = (ids: readonly string[]): string => ids.join(',');

export interface HealthMqttValue {
  /** After `<baseTopic><host>`. */
  suffix: string;
  /** What the payload holds (docs). */
  doc: string;
  /** The payload; null = not published. */
  payload: (b: HealthBody) => string | null;
}

/** §7.1: each health value's topic suffix and payload, in publish order. */
export const HEALTH_MQTT_VALUES: readonly HealthMqttValue[] = [
  { suffix: '/version', doc: 'engine version', payload: (b) => b.version },
  { suffix: '/started', doc: 'engine start time as reported', payload: (b) => b.started },
  { suffix: '/mem/committed', doc: 'MB', payload: (b) => text(b.mem.committed) },
  { suffix: '/mem/allocated', doc: 'MB', payload: (b) => text(b.mem.allocated) },
  { suffix: '/mem/free', doc: 'MB', payload: (b) => text(b.mem.free) },
  { suffix: '/cpu/total', doc: 'CPU %', payload: (b) => text(b.cpu.total) },
  { suffix: '/session/active', doc: 'active engine sessions', payload: (b) => text(b.session.active) },
  { suffix: '/session/total', doc: 'engine sessions', payload: (b) => text(b.session.total) },
  { suffix: '/users/active', doc: 'active users', payload: (b) => text(b.users.active) },
  { suffix: '/users/total', doc: 'users', payload: (b) => text(b.users.total) },
  {
    suffix: '/apps/active_docs',
    doc: 'ids of the active apps joined by `,` (empty payload for none)',
    payload: (b) => list(b.apps.active_docs),
  },
  {
    suffix: '/apps/loaded_docs',
    doc: 'ids of the loaded apps joined by `,` (empty payload for none)',
    payload: (b) => list(b.apps.loaded_docs),
  },
  {
    suffix: '/apps/in_memory_docs',
    doc: 'ids of the in-memory apps joined by `,` (empty payload for none)',
    payload: (b) => list(b.apps.in_memory_docs),
  },
  { suffix: '/apps/calls', doc: 'engine calls', payload: (b) => text(b.apps.calls) },
  { suffix: '/apps/selections', doc: 'engine selections', payload: (b) => text(b.apps.selections) },
  { suffix: '/cache/hits', doc: 'cache hits', payload: (b) => text(b.cache.hits) },
  { suffix: '/cache/lookups', doc: 'cache lookups', payload: (b) => text(b.cache.lookups) },
  { suffix: '/cache/added', doc: 'entries added', payload: (b) => text(b.cache.added) },
  { suffix: '/cache/replaced', doc: 'entries replaced', payload: (b) => text(b.cache.replaced) },
  { suffix: '/cache/bytes_added', doc: 'bytes added', payload: (b) => text(b.cache.bytes_added) },
  {
    suffix: '/cache/hit_ratio',
    doc: '`floor(hits × 100 / lookups)`; only when lookups > 0',
    payload: (b) => {
      const ratio = cacheHitRatio(b.cache);
      return ratio === null ? null : text(ratio);
    },
  },
  { suffix: '/saturated', doc: '`true` / `false`', payload: (b) => text(b.saturated) },
];

/** The server's topic level: its `host` tag (never absent in a sample; the server name otherwise). */
function hostLevel(sample: Pick<HealthSample, 'tags' | 'serverName'>): string {
  return topicLevel(sample.tags['host'] ?? sample.serverName);
}

/**
 * §7.1: one message per health value to `<baseTopic><host><suffix>` (`svc/node1.lab.local/mem/committed`
 * → `4213.6`); app lists joined by `,`, booleans `true`/`false`, `/cache/hit_ratio` only when lookups > 0.
 */
export function healthMessages(sample: HealthSample, baseTopic: string): MqttMessage[] {
  const prefix = `${baseTopic}${hostLevel(sample)}`;
  const out: MqttMessage[] = [];
  for (const { suffix, payload } of HEALTH_MQTT_VALUES) {
    const value = payload(sample.body);
    if (value !== null) out.push({ topic: `${prefix}${suffix}`, payload: value });
  }
  return out;
}

/**
 * §7.2: the sessions after exclusion as JSON with 2-space indent, to
 * `<baseTopic><host>/usersession<vp as configured>` (`/` → `…/usersession/`, `/hdr` → `…/usersession/hdr`).
 */
export function sessionMessages(sample: SessionSample, baseTopic: string): MqttMessage[] {
  return [
    {
      topic: `${baseTopic}${hostLevel(sample)}/usersession${topicLevel(sample.virtualProxy)}`,
      payload: JSON.stringify(sample.sessions, null, 2),
    },
  ];
}

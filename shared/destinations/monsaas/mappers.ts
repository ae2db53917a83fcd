/**
 * Monitoring-SaaS metrics of polled data (platform-formats.md §8.1, §8.2), events of the platform's
 * UDP events (§8.3) and the scrambling of user names (§8.4): pure builders of the JSON posted once per
 * queued event; `MonSaasDestination` posts them with the `MonSaasWriter`.
 *
 * Choices where the spec is silent (Svc choice):
 * - Attribute precedence: built-in attributes, then categories (log events; the first value of a
 *   repeated name, as the tsdb tag), then `…tags[]`, then `monsaas.event.attribute.static[]`, then
 *   `svcVersion`; a later one never replaces an earlier one of the same name. The startup rules
 *   (shared/config/rules.ts) refuse configured names equal to a built-in attribute name.
 * - Scrambling hashes non-empty values only: an empty directory or user id stays `""` (a hash of the
 *   empty text would look like a user).
 * - Metric attributes (§8.2): server tags (health) or session tags (sessions; empty values left out,
 *   as the tsdb leaves out an empty tag), then the app-list
 *   attributes `qs_activeDocs` / `qs_loadedDocs` / `qs_inMemoryDocs`, then
 *   `monsaas.metric.attribute.static[]`, then `svcVersion`; a later one never replaces an earlier one.
 * - App-list attributes hold the app names when the sample has them (names, then session-app ids,
 *   as the edge sorted them), else the ids; joined by `,` and cut after the last whole name that
 *   fits in 4,096 characters (code points), so no name is cut in half (a single longer name is cut
 *   at 4,096).
 * - They ride on the health metrics: a health sample with no metric group switched on sends nothing
 *   (an attribute without a metric is not stored), and the registry does not route health samples to
 *   monsaas for app-list flags alone.
 * - Log levels: `logLevel.error` covers `ERROR` and `FATAL`, `logLevel.warn` covers `WARN` (§8.3);
 *   every other level (`INFO`, `DEBUG`, anything unexpected) is never sent: there is no flag for it,
 *   and the shipped appenders send nothing below `WARN` except engine performance, which monsaas
 *   does not take. Levels are compared case-insensitively.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { SvcConfig } from '../../config/schema.js';
import type { PlatformLogEvent } from '../../platform/events.js';
import type { DocNames, HealthBody, HealthSample } from '../../platform/polled.js';
import type { TagItem } from '../../platform/tags.js';
import { firstValueTags } from '../../platform/tags.js';
import type { HealthQueuedEvent, LogQueuedEvent, SessionsQueuedEvent, UserQueuedEvent } from '../../queue/events.js';
import { parseTimeNs } from '../../queue/events.js';
import { SVC_VERSION } from '../../version.js';
import { LOG_ATTRIBUTE_KEYS } from './attributes.js';
import type { AttributeValue, MetricBlock, MetricPayload, MonSaasEvent } from './client.js';

export const USER_EVENT_TYPE = 'qs_userEvent';
export const LOG_EVENT_TYPE = 'qs_logEvent';

export { MONSAAS_LOG_EVENT_ATTRIBUTES, MONSAAS_USER_EVENT_ATTRIBUTES } from './attributes.js';

/** The log sources monsaas takes (§8.3: not engine performance), keyed to their `sendToMonSaas.source` entry. */
export const MONSAAS_LOG_SOURCES = {
  'qseow-engine': 'engine',
  'qseow-proxy': 'proxy',
  'qseow-repository': 'repository',
  'qseow-scheduler': 'scheduler',
} as const;

export type MonSaasLogSourceSettings = SvcConfig['logEvents']['sendToMonSaas']['source'];

/** §8.4: `hex(HMAC-SHA256(key, UTF-8 value))`, first 32 hex characters. */
export function scrambleValue(key: Buffer | string, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('hex').slice(0, 32);
}

/**
 * §8.4: the scrambling key: `scrambleSecret` when set, else a random 32-byte key for this process,
 * with a WARN that pseudonyms then change at every restart.
 */
export function resolveScrambleKey(secret: string, log: { warn(obj: object, msg: string): void }): Buffer | string {
  if (secret !== '') return secret;
  log.warn(
    { setting: 'Svc.userEvents.sendToMonSaas.scrambleSecret' },
    'user names sent to the monitoring SaaS are scrambled with a random key generated at this start: pseudonyms change on every restart; set Svc.userEvents.sendToMonSaas.scrambleSecret (at least 16 characters) to keep them stable',
  );
  return randomBytes(32);
}

/** What both kinds of event append after their built-in attributes. */
export interface MonSaasAttributeOptions {
  /** The feature's `…tags[]` (`userEvents.tags` / `logEvents.tags`). */
  tags: readonly TagItem[];
  /** `monsaas.event.attribute.static[]`. */
  staticAttributes: readonly TagItem[];
  /** The Svc version when `monsaas.event.attribute.dynamic.svcVersion.enable`, else null. */
  svcVersion: string | null;
}

export interface UserMonSaasOptions extends MonSaasAttributeOptions {
  /** The key when `userEvents.sendToMonSaas.scramble` is on (see `resolveScrambleKey`), else null. */
  scrambleKey: Buffer | string | null;
}

export interface LogMonSaasOptions extends MonSaasAttributeOptions {
  /** `logEvents.sendToMonSaas.source`: per source its flag and level flags. */
  sources: MonSaasLogSourceSettings;
}

/** The attribute options of the config (§8.3). */
export function monSaasAttributeOptions(config: SvcConfig, tags: readonly TagItem[]): MonSaasAttributeOptions {
  const attribute = config.monsaas.event.attribute;
  return {
    tags,
    staticAttributes: attribute.static,
    svcVersion: attribute.dynamic.svcVersion.enable ? SVC_VERSION : null,
  };
}

/** The §8.3 `timestamp` (ms) of a §0.3 point time in nanoseconds: floored. */
export function timestampMs(timeNs: string): number {
  const ns = parseTimeNs(timeNs);
  const ms = ns / 1_000_000n;
  return Number(ns < 0n && ms * 1_000_000n !== ns ? ms - 1n : ms);
}

/** Adds `name: value` unless the name is taken (the precedence of the file comment). */
function put(event: Map<string, string | number>, name: string, value: string | number): void {
  if (!event.has(name)) event.set(name, value);
}

function finish(event: Map<string, string | number>, options: MonSaasAttributeOptions): MonSaasEvent {
  for (const tag of options.tags) put(event, tag.name, tag.value);
  for (const attribute of options.staticAttributes) put(event, attribute.name, attribute.value);
  if (options.svcVersion !== null) put(event, 'svcVersion', options.svcVersion);
  // fromEntries keeps a name such as `__proto__` an ordinary key.
  return Object.fromEntries(event);
}

/**
 * §8.3 user event `qs_userEvent`: `eventType`, `timestamp` (ms of the §0.3 point time), `qs_host`,
 * `qs_event_action`, `qs_userFull`, `qs_userDirectory`, `qs_userId`, `qs_origin`, the app and
 * user-agent attributes when present, then tags, static attributes and `svcVersion`. With a
 * scramble key the three user attributes are §8.4 pseudonyms of `DIR\id`, `DIR` and `id`.
 */
export function userMonSaasEvent(q: UserQueuedEvent, options: UserMonSaasOptions): MonSaasEvent {
  const e = q.event;
  const key = options.scrambleKey;
  const user = (value: string): string => (key === null || value === '' ? value : scrambleValue(key, value));
  const event = new Map<string, string | number>([
    ['eventType', USER_EVENT_TYPE],
    ['timestamp', timestampMs(q.timeNs)],
    ['qs_host', e.host],
    ['qs_event_action', e.command],
    ['qs_userFull', user(e.user_full)],
    ['qs_userDirectory', user(e.user_directory)],
    ['qs_userId', user(e.user_id)],
    ['qs_origin', e.origin],
  ]);
  const optional: [string, string | undefined][] = [
    ['qs_appId', e.appId],
    ['qs_appName', e.appName],
    ['qs_uaBrowserName', e.uaBrowserName],
    ['qs_uaBrowserMajorVersion', e.uaBrowserMajorVersion],
    ['qs_uaOsName', e.uaOsName],
    ['qs_uaOsVersion', e.uaOsVersion],
  ];
  for (const [name, value] of optional) if (value !== undefined && value !== '') event.set(name, value);
  return finish(event, options);
}

/**
 * Whether a log event goes to monsaas (§8.3): one of the four sources (never engine performance), its
 * `sendToMonSaas.source.<x>.enable` on, and its level allowed: `ERROR`/`FATAL` by `logLevel.error`,
 * `WARN` by `logLevel.warn`, nothing else.
 */
export function logMonSaasWanted(
  event: Pick<PlatformLogEvent, 'source' | 'level'>,
  sources: MonSaasLogSourceSettings,
): boolean {
  if (event.source === 'qseow-qix-perf') return false;
  const settings = sources[MONSAAS_LOG_SOURCES[event.source]];
  if (!settings.enable) return false;
  const level = event.level.toUpperCase();
  if (level === 'ERROR' || level === 'FATAL') return settings.logLevel.error;
  if (level === 'WARN') return settings.logLevel.warn;
  return false;
}

/**
 * §8.3 log event `qs_logEvent`, or null when the event is not sent (`logMonSaasWanted`): `eventType`,
 * `timestamp`, the `qs_…` attributes the source has (empty ones omitted), the categories as
 * `name: value`, then tags, static attributes and `svcVersion`. Never scrambled (§8.4).
 */
export function logMonSaasEvent(q: LogQueuedEvent, options: LogMonSaasOptions): MonSaasEvent | null {
  const e = q.event;
  if (e.source === 'qseow-qix-perf' || !logMonSaasWanted(e, options.sources)) return null;
  const event = new Map<string, string | number>([
    ['eventType', LOG_EVENT_TYPE],
    ['timestamp', timestampMs(q.timeNs)],
  ]);
  const parsed: Readonly<Record<string, unknown>> = e;
  for (const [attribute, key] of LOG_ATTRIBUTE_KEYS) {
    const value = parsed[key];
    if (typeof value === 'string' && value !== '') event.set(attribute, value);
  }
  for (const [name, value] of Object.entries(firstValueTags(e.category ?? []))) put(event, name, value);
  return finish(event, options);
}

// ---------------------------------------------------------------------------------------------
// §8.1/§8.2 Metrics of polled data.

/** `monsaas.metric.dynamic`: the metric group flags. */
export type MetricFlags = SvcConfig['monsaas']['metric']['dynamic'];

/** What every metric payload of polled data carries besides its metrics. */
export interface MetricOptions {
  /** `monsaas.metric.attribute.static[]`. */
  staticAttributes: readonly TagItem[];
  /** The Svc version when `monsaas.metric.attribute.dynamic.svcVersion.enable`, else null. */
  svcVersion: string | null;
  /** `interval.ms`: the producer's interval (`serversToMonitor.pollingInterval` / `userSessions.pollingInterval`). */
  intervalMs: number;
}

export interface HealthMetricOptions extends MetricOptions {
  flags: MetricFlags;
}

/** The metric options of the config for health (`serversToMonitor.pollingInterval`) or sessions (`userSessions.pollingInterval`). */
export function monSaasMetricOptions(config: SvcConfig, producer: 'health' | 'sessions'): MetricOptions {
  const attribute = config.monsaas.metric.attribute;
  return {
    staticAttributes: attribute.static,
    svcVersion: attribute.dynamic.svcVersion.enable ? SVC_VERSION : null,
    intervalMs: producer === 'health' ? config.serversToMonitor.pollingInterval : config.userSessions.pollingInterval,
  };
}

/** §4: MB as reported → bytes. */
export const BYTES_PER_MB = 1_048_576;

export interface MetricGroup {
  /** The flag under `monsaas.metric.dynamic` (docs). */
  flag: string;
  /** What the gauges hold (docs). */
  doc: string;
  enabled: (flags: MetricFlags) => boolean;
  /** Gauge name and value, in payload order. */
  metrics: readonly (readonly [name: string, value: (b: HealthBody) => number])[];
}

/** §8.2: the health metric groups, each with its flag and gauges, in payload order. */
export const HEALTH_METRIC_GROUPS: readonly MetricGroup[] = [
  {
    flag: 'engine.memory',
    doc: 'bytes (MB × 1,048,576)',
    enabled: (f) => f.engine.memory.enable,
    metrics: [
      ['qs_memCommitted', (b) => b.mem.committed * BYTES_PER_MB],
      ['qs_memAllocated', (b) => b.mem.allocated * BYTES_PER_MB],
      ['qs_memFree', (b) => b.mem.free * BYTES_PER_MB],
    ],
  },
  {
    flag: 'engine.cpu',
    doc: 'CPU %',
    enabled: (f) => f.engine.cpu.enable,
    metrics: [['qs_cpuTotal', (b) => b.cpu.total]],
  },
  {
    flag: 'engine.calls',
    doc: 'engine calls',
    enabled: (f) => f.engine.calls.enable,
    metrics: [['qs_engineCalls', (b) => b.apps.calls]],
  },
  {
    flag: 'engine.selections',
    doc: 'engine selections',
    enabled: (f) => f.engine.selections.enable,
    metrics: [['qs_engineSelections', (b) => b.apps.selections]],
  },
  {
    flag: 'engine.sessions',
    doc: 'engine sessions',
    enabled: (f) => f.engine.sessions.enable,
    metrics: [
      ['qs_engineSessionsActive', (b) => b.session.active],
      ['qs_engineSessionsTotal', (b) => b.session.total],
    ],
  },
  {
    flag: 'engine.users',
    doc: 'users',
    enabled: (f) => f.engine.users.enable,
    metrics: [
      ['qs_engineUsersActive', (b) => b.users.active],
      ['qs_engineUsersTotal', (b) => b.users.total],
    ],
  },
  {
    flag: 'engine.saturated',
    doc: '1 when saturated, else 0',
    enabled: (f) => f.engine.saturated.enable,
    metrics: [['qs_engineSaturated', (b) => (b.saturated ? 1 : 0)]],
  },
  {
    flag: 'apps.docCount',
    doc: 'numbers of apps',
    enabled: (f) => f.apps.docCount.enable,
    metrics: [
      ['qs_docsActiveCount', (b) => b.apps.active_docs.length],
      ['qs_docsLoadedCount', (b) => b.apps.loaded_docs.length],
      ['qs_docsInMemoryCount', (b) => b.apps.in_memory_docs.length],
    ],
  },
  {
    flag: 'cache.cache',
    doc: 'as the health API reports them; `qs_cacheBytesAdded` in bytes',
    enabled: (f) => f.cache.cache.enable,
    metrics: [
      ['qs_cacheHits', (b) => b.cache.hits],
      ['qs_cacheLookups', (b) => b.cache.lookups],
      ['qs_cacheAdded', (b) => b.cache.added],
      ['qs_cacheReplaced', (b) => b.cache.replaced],
      ['qs_cacheBytesAdded', (b) => b.cache.bytes_added],
    ],
  },
];

export interface ListAttribute {
  flag: string;
  attribute: string;
  enabled: (flags: MetricFlags) => boolean;
  ids: (b: HealthBody) => readonly string[];
  names: (n: NonNullable<HealthSample['docNames']>) => DocNames;
}

/** §8.2: the app-list attributes, each with its flag. */
export const HEALTH_LIST_ATTRIBUTES: readonly ListAttribute[] = [
  {
    flag: 'apps.activeDocs',
    attribute: 'qs_activeDocs',
    enabled: (f) => f.apps.activeDocs.enable,
    ids: (b) => b.apps.active_docs,
    names: (n) => n.active,
  },
  {
    flag: 'apps.loadedDocs',
    attribute: 'qs_loadedDocs',
    enabled: (f) => f.apps.loadedDocs.enable,
    ids: (b) => b.apps.loaded_docs,
    names: (n) => n.loaded,
  },
  {
    flag: 'apps.inMemoryDocs',
    attribute: 'qs_inMemoryDocs',
    enabled: (f) => f.apps.inMemoryDocs.enable,
    ids: (b) => b.apps.in_memory_docs,
    names: (n) => n.inMemory,
  },
];

/** §8.2: the longest app-list attribute, in characters (code points). */
export const MAX_LIST_ATTRIBUTE_CHARS = 4_096;

/** Names joined by `,`, cut after the last whole name that fits in `max` code points (a single longer name is cut at `max`). */
export function joinWithin(names: readonly string[], max = MAX_LIST_ATTRIBUTE_CHARS): string {
  let out = '';
  let length = 0;
  for (const name of names) {
    const chars = [...name].length;
    const needed = out === '' ? chars : length + 1 + chars;
    if (needed > max) {
      return out === '' ? [...name].slice(0, max).join('') : out;
    }
    out = out === '' ? name : `${out},${name}`;
    length = needed;
  }
  return out;
}

/** Whether any health metric group is switched on (the app lists alone send nothing). */
export function anyHealthMetric(flags: MetricFlags): boolean {
  return HEALTH_METRIC_GROUPS.some((g) => g.enabled(flags));
}

/** Server or session tags as attributes; an empty value is left out, as the tsdb leaves out an empty tag. */
function tagAttributes(tags: Readonly<Record<string, string>>): Map<string, AttributeValue> {
  return new Map<string, AttributeValue>(Object.entries(tags).filter(([, value]) => value !== ''));
}

function metricBlock(
  timeNs: string,
  attributes: Map<string, AttributeValue>,
  options: MetricOptions,
  metrics: MetricBlock['metrics'],
): MetricPayload {
  for (const a of options.staticAttributes) if (!attributes.has(a.name)) attributes.set(a.name, a.value);
  if (options.svcVersion !== null && !attributes.has('svcVersion')) attributes.set('svcVersion', options.svcVersion);
  // fromEntries keeps a name such as `__proto__` an ordinary key.
  return [
    {
      common: {
        timestamp: timestampMs(timeNs),
        'interval.ms': options.intervalMs,
        attributes: Object.fromEntries(attributes),
      },
      metrics,
    },
  ];
}

/**
 * §8.1/§8.2: the metric payload of one health sample: the gauges of every group switched on, the
 * server tags, the app lists switched on, static attributes and `svcVersion`; `timestamp` = the
 * response's arrival (ms), `interval.ms` = `serversToMonitor.pollingInterval`. Null when no group is on.
 */
export function healthMetricPayload(q: HealthQueuedEvent, options: HealthMetricOptions): MetricPayload | null {
  const { body, tags, docNames } = q.sample;
  const metrics: MetricBlock['metrics'] = HEALTH_METRIC_GROUPS.filter((g) => g.enabled(options.flags)).flatMap((g) =>
    g.metrics.map(([name, value]) => ({ name, type: 'gauge', value: value(body) })),
  );
  if (metrics.length === 0) return null;
  const attributes = tagAttributes(tags);
  for (const list of HEALTH_LIST_ATTRIBUTES) {
    if (!list.enabled(options.flags) || attributes.has(list.attribute)) continue;
    const names =
      docNames === undefined ? list.ids(body) : [...list.names(docNames).names, ...list.names(docNames).sessionApps];
    attributes.set(list.attribute, joinWithin(names));
  }
  return metricBlock(q.timeNs, attributes, options, metrics);
}

/** §8.2 sessions: the gauge of one session sample. */
export const PROXY_SESSIONS_METRIC = 'qs_proxySessions';

/**
 * §8.2: the metric payload of one session sample: `qs_proxySessions` = the sessions after exclusion,
 * with the session tags, static attributes and `svcVersion`; `interval.ms` = `userSessions.pollingInterval`.
 */
export function sessionMetricPayload(q: SessionsQueuedEvent, options: MetricOptions): MetricPayload {
  const attributes = tagAttributes(q.sample.tags);
  return metricBlock(q.timeNs, attributes, options, [
    { name: PROXY_SESSIONS_METRIC, type: 'gauge', value: q.sample.sessions.length },
  ]);
}

/** §8.2 uptime: the memory gauges (bytes) of `storeMonSaas.metric.dynamic.svcMemoryUsage`. */
export const UPTIME_MEMORY_METRICS = ['svc_heapUsed', 'svc_heapTotal', 'svc_externalMem', 'svc_processMem'] as const;
/** §8.2 uptime: the gauge of `storeMonSaas.metric.dynamic.svcUptime`. */
export const UPTIME_METRIC = 'svc_uptimeMillisec';

export interface UptimeSample {
  /** `process.memoryUsage()` figures, bytes. */
  heapUsed: number;
  heapTotal: number;
  external: number;
  rss: number;
  /** Process uptime, ms. */
  uptimeMs: number;
}

/**
 * §8.1/§8.2: the uptime monitor's metric payload: the memory gauges and/or the uptime gauge as their
 * flags say, with `uptimeMonitor.storeMonSaas.attribute.static[]` and `svcVersion`; `interval.ms` =
 * the gap between two consecutive occurrences of `uptimeMonitor.frequency`. Null when no flag is on.
 */
export function uptimeMetricPayload(
  sample: UptimeSample,
  timeNs: string,
  options: MetricOptions & { memory: boolean; uptime: boolean },
): MetricPayload | null {
  const metrics: MetricBlock['metrics'] = [];
  if (options.memory) {
    const values = [sample.heapUsed, sample.heapTotal, sample.external, sample.rss];
    UPTIME_MEMORY_METRICS.forEach((name, i) => metrics.push({ name, type: 'gauge', value: values[i] ?? 0 }));
  }
  if (options.uptime) metrics.push({ name: UPTIME_METRIC, type: 'gauge', value: sample.uptimeMs });
  return metrics.length === 0 ? null : metricBlock(timeNs, new Map(), options, metrics);
}

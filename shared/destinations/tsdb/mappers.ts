/**
 * The tsdb mappers: points of audit events (below, from the audit data model), of the platform's UDP
 * events (platform-formats.md §6.3 `user_events`, §6.4 `log_event`), of polled data (§6.1 health,
 * §6.2 sessions) and the JSON form of the points the edge computes itself (queue kind `points`: event
 * counts, rejected counts, listener queue metrics). Measurement, tag and field names and field types
 * come from the data model tables (datamodel.ts), which also yield docs/data-model.md. Pure functions: the writers call them per delivery, so a
 * redelivered event gives the same point, with the same §0.3 time decided at the edge (`timeNs`),
 * and overwrites itself instead of duplicating.
 *
 * Names are written exactly as §6.3/§6.4 list them. A field whose natural name is a tag anywhere in
 * the measurement carries the `_field` suffix already here (`session_id_field` of an engine event,
 * whose own point has no `session_id` tag), so the output does not depend on `toLine`'s per-point
 * rename; that rename still protects against a configured tag named like a field.
 *
 * Tag precedence (a point cannot carry a tag twice): built-in tags, then categories (first value of
 * a name, §2.5 step 5), then configured tags; a later one never replaces an earlier one of the same
 * name. The startup rules (shared/config/rules.ts) refuse configured names that would collide, so
 * this only matters for configs that bypassed them.
 */

import { AUDIT_COLUMNS, type AuditColumn, auditTimeMs, MAX_PAYLOAD_JSON } from '../../audit/datamodel.js';
import type { Category, PlatformLogEvent } from '../../platform/events.js';
import type { DocNames } from '../../platform/polled.js';
import { firstValueTags, type TagItem } from '../../platform/tags.js';
import {
  type AuditQueuedEvent,
  type HealthQueuedEvent,
  type JsonFieldValue,
  type JsonPoint,
  type LogQueuedEvent,
  parseTimeNs,
  type SessionsQueuedEvent,
  type UserQueuedEvent,
} from '../../queue/events.js';
import { nthPointTime, type PointClock } from '../../queue/point-clock.js';
import {
  APPS,
  CACHE,
  CPU,
  type FieldValues,
  fieldsOf,
  HEALTH_MEASUREMENTS,
  LOG_EVENT,
  MEM,
  type MeasurementModel,
  SATURATED,
  SERVER_INFO,
  SESSION,
  tagsOf,
  USER_EVENTS,
  USER_SESSION_DETAILS,
  USER_SESSION_SUMMARY,
  USERS,
} from './datamodel.js';
import { type FieldValue, float, int, json, jsonFieldText, type Point, str } from './line-protocol.js';

export {
  BUILT_IN_POINT_NAMES,
  LOG_EVENT_FIELDS,
  LOG_EVENT_MEASUREMENT,
  LOG_EVENT_TAGS,
  USER_EVENTS_FIELDS,
  USER_EVENTS_MEASUREMENT,
  USER_EVENTS_TAGS,
} from './names.js';

import { BUILT_IN_POINT_NAMES, LOG_EVENT_MEASUREMENT, USER_EVENTS_MEASUREMENT } from './names.js';

type UserEventsTag = keyof typeof USER_EVENTS.tags;
type LogEventTag = keyof typeof LOG_EVENT.tags;

type TagValue = string | null | undefined;

/**
 * Tags in insertion order with the precedence of the file comment, built-in names checked against
 * the measurement's table. Built through a Map so a name such as `__proto__` stays an ordinary key.
 */
class TagBuilder<T extends string> {
  private readonly tags = new Map<string, TagValue>();

  constructor(private readonly reserved: ReadonlySet<string>) {}

  /** A built-in tag (absent when the value is empty: `toLine` omits it). */
  builtIn(name: T, value: TagValue): this {
    if (!this.tags.has(name)) this.tags.set(name, value);
    return this;
  }

  /** A category or configured tag: never replaces a built-in or an earlier one. */
  extra(name: string, value: string): this {
    if (!this.reserved.has(name) && !this.tags.has(name)) this.tags.set(name, value);
    return this;
  }

  record(): Record<string, TagValue> {
    return Object.fromEntries(this.tags);
  }
}

const nonEmpty = (value: string | undefined): string | null => (value === undefined || value === '' ? null : value);

/**
 * §6.3: one `user_events` point. Tags `host`, `event_action` (the command), `userFull`,
 * `userDirectory`, `userId`, `origin` (an empty one is omitted, the point still written), then
 * `appId`, `appName` and the user-agent tags when present, then `tags` (`userEvents.tags[]`). Fields
 * `userFull_field`, `userId_field` always (may be `""`), `appId_field`, `appName_field` when present.
 */
export function userEventPoint(q: UserQueuedEvent, tags: readonly TagItem[]): Point {
  const e = q.event;
  const builder = new TagBuilder<UserEventsTag>(BUILT_IN_POINT_NAMES[USER_EVENTS_MEASUREMENT])
    .builtIn('host', e.host)
    .builtIn('event_action', e.command)
    .builtIn('userFull', e.user_full)
    .builtIn('userDirectory', e.user_directory)
    .builtIn('userId', e.user_id)
    .builtIn('origin', e.origin)
    .builtIn('appId', e.appId)
    .builtIn('appName', e.appName)
    .builtIn('uaBrowserName', e.uaBrowserName)
    .builtIn('uaBrowserMajorVersion', e.uaBrowserMajorVersion)
    .builtIn('uaOsName', e.uaOsName)
    .builtIn('uaOsVersion', e.uaOsVersion);
  for (const tag of tags) builder.extra(tag.name, tag.value);
  const fields = fieldsOf(USER_EVENTS, {
    userFull_field: e.user_full,
    userId_field: e.user_id,
    appId_field: nonEmpty(e.appId),
    appName_field: nonEmpty(e.appName),
  });
  return { measurement: USER_EVENTS_MEASUREMENT, tags: builder.record(), fields, timeNs: parseTimeNs(q.timeNs) };
}

type LogFields = FieldValues<typeof LOG_EVENT.fields>;

/** The per-source part of §6.4's table: extra tags (in table order) and fields. */
function sourceParts(e: PlatformLogEvent): { tags: [LogEventTag, TagValue][]; fields: LogFields } {
  switch (e.source) {
    case 'qseow-engine':
      return {
        tags: [
          ['user_full', e.user_full],
          ['user_directory', e.user_directory],
          ['user_id', e.user_id],
          ['windows_user', e.windows_user],
          ['app_id', e.app_id],
          ['engine_exe_version', e.engine_exe_version],
        ],
        fields: { message: e.message, session_id_field: e.session_id },
      };
    case 'qseow-proxy':
    case 'qseow-repository':
      return {
        tags: [
          ['user_full', e.user_full],
          ['user_directory', e.user_directory],
          ['user_id', e.user_id],
          ['windows_user', e.windows_user],
          ['result_code', e.result_code],
        ],
        fields: {
          message: e.message,
          exception_message: e.exception_message,
          command: e.command,
          result_code_field: e.result_code,
          origin: e.origin,
          context: e.context,
        },
      };
    case 'qseow-scheduler':
      return {
        tags: [
          ['user_full', e.user_full],
          ['user_directory', e.user_directory],
          ['user_id', e.user_id],
          ['windows_user', e.windows_user],
          ['task_id', e.task_id],
          ['task_name', e.task_name],
        ],
        fields: {
          message: e.message,
          exception_message: e.exception_message,
          app_name_field: e.app_name,
          app_id_field: e.app_id,
          execution_id: e.execution_id,
        },
      };
    case 'qseow-qix-perf':
      return {
        tags: [
          ['event_activity_source', e.event_activity_source],
          ['method', e.method],
          ['object_type', e.object_type],
          ['proxy_session_id', e.proxy_session_id],
          ['session_id', e.session_id],
          ['user_full', e.user_full],
          ['user_directory', e.user_directory],
          ['user_id', e.user_id],
          ['app_id', e.app_id],
          ['app_name', e.app_name],
          ['object_id', e.object_id],
        ],
        fields: {
          app_id_field: e.app_id,
          process_time: e.process_time,
          work_time: e.work_time,
          lock_time: e.lock_time,
          validate_time: e.validate_time,
          traverse_time: e.traverse_time,
          handle: e.handle,
          net_ram: e.net_ram,
          peak_ram: e.peak_ram,
        },
      };
  }
}

/**
 * §6.4: one `log_event` point. Tags `host`, `level`, `source`, `log_row`, `subsystem`, the category
 * tags (first value of a repeated name), the source's extra tags, then `tags` (`logEvents.tags[]`);
 * empty tags are omitted. Fields per source (`null` numbers omitted; types from the table: the
 * `*_time` fields float, `handle`/`net_ram`/`peak_ram` int), and `raw_event` = compact JSON of the
 * parsed object (it holds exactly the §2.2 keys and `category`, never the configured tags).
 */
export function logEventPoint(q: LogQueuedEvent, tags: readonly TagItem[]): Point {
  const e = q.event;
  const parts = sourceParts(e);
  const builder = new TagBuilder<LogEventTag>(BUILT_IN_POINT_NAMES[LOG_EVENT_MEASUREMENT])
    .builtIn('host', e.host)
    .builtIn('level', e.level)
    .builtIn('source', e.source)
    .builtIn('log_row', e.log_row === null ? null : String(e.log_row))
    .builtIn('subsystem', e.subsystem);
  const categories: readonly Category[] = 'category' in e && e.category !== undefined ? e.category : [];
  for (const [name, value] of Object.entries(firstValueTags(categories))) builder.extra(name, value);
  for (const [name, value] of parts.tags) builder.builtIn(name, value);
  for (const tag of tags) builder.extra(tag.name, tag.value);
  const fields = fieldsOf(LOG_EVENT, { ...parts.fields, raw_event: JSON.stringify(e) });
  return { measurement: LOG_EVENT_MEASUREMENT, tags: builder.record(), fields, timeNs: parseTimeNs(q.timeNs) };
}

// ---------------------------------------------------------------------------------------------
// Polled data: §6.1 health and §6.2 sessions. All points of one sample share the millisecond the
// response arrived; the edge reserved one §0.3 counter value per point (PointClock.reserve), so point
// `i` is at `nthPointTime(timeNs, i)` and a redelivered sample overwrites its own points.

/**
 * Points of one health sample, one per §6.1 measurement. The edge reserves this many point times per
 * sample (the pollers export the same count; one constant at the merge).
 */
export const HEALTH_POINTS_PER_SAMPLE = HEALTH_MEASUREMENTS.length;
/** Points of one session sample before its details: the summary (the edge reserves 1 + sessions.length). */
export const SESSION_SUMMARY_POINTS = 1;

/** `tsdbConfig.includeFields`: which app lists go into `apps`. */
export type IncludeFields = Readonly<Record<'activeDocs' | 'loadedDocs' | 'inMemoryDocs', boolean>>;

/** One app list of `apps` (§6.1): ids, and names when the sample has them; nothing when its include flag is off. */
function docList(
  include: boolean,
  ids: readonly string[],
  names: DocNames | undefined,
): { ids: string | null; names: string | null; sessionNames: string | null } {
  if (!include) return { ids: null, names: null, sessionNames: null };
  return {
    ids: ids.join(','),
    names: names === undefined ? null : names.names.join(','),
    sessionNames: names === undefined ? null : names.sessionApps.join(','),
  };
}

/**
 * §6.1: the points of one health poll, in the order of `HEALTH_MEASUREMENTS` (`server_info`, `mem`,
 * `apps`, `cpu`, `session`, `users`, `cache`, `saturated`), each tagged with the server tags. The
 * app lists of `apps` follow `tsdbConfig.includeFields`; an included list that is empty is written as
 * `""` (Svc choice: the field says "none" instead of disappearing from the series).
 */
export function healthPoints(q: HealthQueuedEvent, include: IncludeFields): Point[] {
  const { body, tags, uptime, docNames } = q.sample;
  const active = docList(include.activeDocs, body.apps.active_docs, docNames?.active);
  const loaded = docList(include.loadedDocs, body.apps.loaded_docs, docNames?.loaded);
  const inMemory = docList(include.inMemoryDocs, body.apps.in_memory_docs, docNames?.inMemory);
  const parts: [MeasurementModel, Record<string, FieldValue>][] = [
    [SERVER_INFO, fieldsOf(SERVER_INFO, { version: body.version, started: body.started, uptime })],
    [MEM, fieldsOf(MEM, { committed: body.mem.committed, allocated: body.mem.allocated, free: body.mem.free })],
    [
      APPS,
      fieldsOf(APPS, {
        active_docs_count: body.apps.active_docs.length,
        loaded_docs_count: body.apps.loaded_docs.length,
        in_memory_docs_count: body.apps.in_memory_docs.length,
        calls: body.apps.calls,
        selections: body.apps.selections,
        active_docs: active.ids,
        active_docs_names: active.names,
        active_session_docs_names: active.sessionNames,
        loaded_docs: loaded.ids,
        loaded_docs_names: loaded.names,
        loaded_session_docs_names: loaded.sessionNames,
        in_memory_docs: inMemory.ids,
        in_memory_docs_names: inMemory.names,
        in_memory_session_docs_names: inMemory.sessionNames,
      }),
    ],
    [CPU, fieldsOf(CPU, { total: body.cpu.total })],
    [SESSION, fieldsOf(SESSION, { active: body.session.active, total: body.session.total })],
    [USERS, fieldsOf(USERS, { active: body.users.active, total: body.users.total })],
    [
      CACHE,
      fieldsOf(CACHE, {
        hits: body.cache.hits,
        lookups: body.cache.lookups,
        added: body.cache.added,
        replaced: body.cache.replaced,
        bytes_added: body.cache.bytes_added,
      }),
    ],
    [SATURATED, fieldsOf(SATURATED, { saturated: body.saturated })],
  ];
  const first = parseTimeNs(q.timeNs);
  return parts.map(([model, fields], i) => ({
    measurement: model.names[0],
    tags: { ...tags },
    fields,
    timeNs: nthPointTime(first, i),
  }));
}

/**
 * §6.2: the points of one session poll: `user_session_summary` (session tags; `session_count`,
 * `session_user_id_list`), then one `user_session_details` per session after exclusion, in the order
 * of the session API's answer (summary tags + the session's id, directory and user id as tags, and
 * the same three as fields).
 */
export function sessionPoints(q: SessionsQueuedEvent): Point[] {
  const { tags, sessions, userIdList } = q.sample;
  const first = parseTimeNs(q.timeNs);
  const summary: Point = {
    measurement: USER_SESSION_SUMMARY.names[0],
    tags: { ...tags },
    fields: fieldsOf(USER_SESSION_SUMMARY, { session_count: sessions.length, session_user_id_list: userIdList }),
    timeNs: nthPointTime(first, 0),
  };
  const details = sessions.map(
    (s, i): Point => ({
      measurement: USER_SESSION_DETAILS.names[0],
      tags: {
        ...tags,
        ...tagsOf(USER_SESSION_DETAILS, {
          user_session_id: s.SessionId,
          user_session_user_directory: s.UserDirectory,
          user_session_user_id: s.UserId,
        }),
      },
      fields: fieldsOf(USER_SESSION_DETAILS, {
        session_id: s.SessionId,
        user_directory: s.UserDirectory,
        user_id: s.UserId,
      }),
      timeNs: nthPointTime(first, SESSION_SUMMARY_POINTS + i),
    }),
  );
  return [summary, ...details];
}

function safeInt(value: number | bigint, what: string): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || (typeof value === 'bigint' && BigInt(n) !== value))
    throw new RangeError(`${what}: integer ${String(value)} is not within ±(2^53 − 1)`);
  return n;
}

/**
 * A queued JSON point (kind `points`) as a `Point`. Refuses (RangeError) what JSON cannot have carried
 * faithfully: an int that is not a safe integer, a non-finite float, a time that is not a decimal.
 */
export function jsonPointToPoint(p: JsonPoint): Point {
  const fields = new Map<string, FieldValue>();
  for (const [key, f] of Object.entries(p.fields)) {
    if (f.type === 'int') fields.set(key, int(safeInt(f.value, `${p.measurement}.${key}`)));
    else if (f.type === 'float') {
      if (!Number.isFinite(f.value)) throw new RangeError(`${p.measurement}.${key}: float ${f.value} is not finite`);
      fields.set(key, float(f.value));
    } else fields.set(key, f.type === 'string' ? str(f.value) : { type: 'bool', value: f.value });
  }
  return {
    measurement: p.measurement,
    tags: Object.fromEntries(Object.entries(p.tags)),
    fields: Object.fromEntries(fields),
    timeNs: parseTimeNs(p.timeNs),
  };
}

/**
 * A `Point` as JSON for the queue (the edge's own points). `null`/`undefined` tags and fields are
 * left out, as `toLine` would; an int must be a safe integer (JSON numbers are doubles) and a float
 * finite, else RangeError.
 */
export function pointToJson(p: Point): JsonPoint {
  const tags = new Map<string, string>();
  for (const [key, value] of Object.entries(p.tags)) if (value !== null && value !== undefined) tags.set(key, value);
  const fields = new Map<string, JsonFieldValue>();
  for (const [key, f] of Object.entries(p.fields)) {
    if (f === null || f === undefined) continue;
    if (f.type === 'int') fields.set(key, { type: 'int', value: safeInt(f.value, `${p.measurement}.${key}`) });
    else if (f.type === 'float') {
      if (!Number.isFinite(f.value)) throw new RangeError(`${p.measurement}.${key}: float ${f.value} is not finite`);
      fields.set(key, { type: 'float', value: f.value });
    } else if (f.type === 'json') {
      const text = jsonFieldText(f);
      if (text !== undefined) fields.set(key, { type: 'string', value: text });
    } else fields.set(key, f.type === 'string' ? { type: 'string', value: f.value } : { type: 'bool', value: f.value });
  }
  return {
    measurement: p.measurement,
    tags: Object.fromEntries(tags),
    fields: Object.fromEntries(fields),
    timeNs: p.timeNs.toString(),
  };
}

// ---------------------------------------------------------------------------------------------
// Audit events: one point per event in `auditEvents.destination.tsdb.measurementName`, built from
// the audit data model table (tags, fields, time). The point time is the event's own time plus the
// process-wide point counter of §0.3, so two events of the same millisecond and tags never
// overwrite each other. It is decided once, when the audit API queues the event (`timeNs`), so a
// redelivered point overwrites itself; only events queued by an older Svc get theirs here. (A
// discriminator hashed from the event id would make redeliveries overwrite themselves too, but two
// of 600 same-millisecond events already collide with a probability of about 16 %: a silent loss,
// which the outage test caught.)

function auditFieldValue(column: AuditColumn, value: string | number): FieldValue {
  if (column.type === 'int' && typeof value === 'number') return int(value);
  if (column.type === 'float' && typeof value === 'number') return float(value);
  return str(String(value));
}

export function auditPoint(
  q: AuditQueuedEvent,
  measurement: string,
  staticTags: readonly TagItem[],
  clock: PointClock,
): Point {
  const tags: Record<string, string | null> = {};
  const fields: Record<string, FieldValue | null> = {};
  for (const column of AUDIT_COLUMNS) {
    if (column.tsdb !== 'tag' && column.tsdb !== 'field') continue;
    if (column.json !== undefined && column.tsdb === 'field') {
      fields[column.name] = json(column.json(q), MAX_PAYLOAD_JSON);
      continue;
    }
    const value = column.get(q);
    if (column.tsdb === 'tag') tags[column.name] = value === null ? null : String(value);
    else fields[column.name] = value === null ? null : auditFieldValue(column, value);
  }
  for (const tag of staticTags) tags[tag.name] = tag.value;
  return { measurement, tags, fields, timeNs: q.timeNs === undefined ? clock.next(auditTimeMs(q)) : BigInt(q.timeNs) };
}

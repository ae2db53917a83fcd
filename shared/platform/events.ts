/**
 * The platform's UDP events as Svc carries them from the edge listeners to the writers
 * (platform-formats.md §1.2–1.5, §2.2, §2.5): one TypeBox schema per shape, the single source of
 * the TypeScript types (the parsers build them), of the queue codec's validation and of the
 * destinations' input. Only the keys of the spec's parsed objects are here: receive and event times
 * travel beside them in the queued event, so `raw_event` and the MQTT payloads are exactly §2.2.
 */
import { type Static, type TLiteral, type TProperties, Type } from '@sinclair/typebox';

export const USER_EVENT_TYPES = ['qseow-proxy-session', 'qseow-proxy-connection'] as const;
export type UserEventType = (typeof USER_EVENT_TYPES)[number];

export const LOG_SOURCES = [
  'qseow-engine',
  'qseow-proxy',
  'qseow-repository',
  'qseow-scheduler',
  'qseow-qix-perf',
] as const;
export type LogSource = (typeof LOG_SOURCES)[number];

const Text = Type.String();
const OptText = Type.Optional(Type.String({ minLength: 1 }));
const NullableNumber = Type.Union([Type.Number(), Type.Null()]);

/** §1.2–1.5: a user-activity event after parsing and enrichment (app name, user agent). */
export const UserActivitySchema = Type.Object(
  {
    messageType: Type.Union(
      USER_EVENT_TYPES.map((t) => Type.Literal(t)) as [
        TLiteral<'qseow-proxy-session'>,
        TLiteral<'qseow-proxy-connection'>,
      ],
    ),
    host: Text,
    /** `Start session`, `Stop session`, `Open connection`, `Close connection` (as sent). */
    command: Text,
    user_directory: Text,
    user_id: Text,
    /** `dir\id` when both are non-empty, else `''`. */
    user_full: Text,
    origin: Text,
    context: Text,
    message: Text,
    /** §1.4: the lower-case uuid after `/app/` in `context`. */
    appId: OptText,
    /** §1.4: the app-list name of `appId`, or `<unknown app name>`; present exactly when `appId` is. */
    appName: OptText,
    /** §1.5: user agent parsed with bowser; empty values are absent. */
    uaBrowserName: OptText,
    uaBrowserMajorVersion: OptText,
    uaOsName: OptText,
    uaOsVersion: OptText,
  },
  { additionalProperties: false },
);
export type UserActivity = Static<typeof UserActivitySchema>;

/** §2.5: a category added by a `categorise` rule or the default rule. */
export const CategorySchema = Type.Object(
  { name: Type.String({ minLength: 1 }), value: Type.String() },
  { additionalProperties: false },
);
export type Category = Static<typeof CategorySchema>;

/** §2.2 common head (fields 0–7). */
function head<S extends LogSource>(source: S) {
  return {
    source: Type.Literal(source),
    /** `%rownum`: int ≥ 1, else `null`. */
    log_row: NullableNumber,
    /** `%longIso8601date` when a valid platform timestamp (kept as received), else `''`. */
    ts_iso: Text,
    /** `%date` when a valid platform timestamp (kept as received), else `''`. */
    ts_local: Text,
    level: Text,
    host: Text,
    subsystem: Text,
    windows_user: Text,
  };
}

function logEvent<S extends LogSource, P extends TProperties>(source: S, properties: P) {
  return Type.Object({ ...head(source), ...properties }, { additionalProperties: false });
}

/** Categories (§2.5), present when categorisation added any. */
const category = Type.Optional(Type.Array(CategorySchema, { minItems: 1 }));

export const EngineLogSchema = logEvent('qseow-engine', {
  message: Text,
  proxy_session_id: Text,
  user_directory: Text,
  user_id: Text,
  user_full: Text,
  engine_ts: Text,
  process_id: Text,
  engine_exe_version: Text,
  server_started: Text,
  entry_type: Text,
  session_id: Text,
  app_id: Text,
  category,
});

const proxyRepositoryFields = {
  message: Text,
  exception_message: Text,
  user_directory: Text,
  user_id: Text,
  user_full: Text,
  command: Text,
  result_code: Text,
  origin: Text,
  context: Text,
  category,
};
export const ProxyLogSchema = logEvent('qseow-proxy', proxyRepositoryFields);
export const RepositoryLogSchema = logEvent('qseow-repository', proxyRepositoryFields);

export const SchedulerLogSchema = logEvent('qseow-scheduler', {
  message: Text,
  exception_message: Text,
  user_directory: Text,
  user_id: Text,
  user_full: Text,
  task_name: Text,
  app_name: Text,
  task_id: Text,
  app_id: Text,
  execution_id: Text,
  category,
});

/** Engine performance (`/qseow-qix-perf/`): no message, never categorised. */
export const QixPerfLogSchema = logEvent('qseow-qix-perf', {
  proxy_session_id: Text,
  /** `non-user` when field 8 is `0`, else `user`. */
  event_activity_source: Type.Union([Type.Literal('user'), Type.Literal('non-user')]),
  user_directory: Text,
  user_id: Text,
  user_full: Text,
  engine_ts: Text,
  session_id: Text,
  app_id: Text,
  /** §2.2: the app-list name of `app_id` when the lookup is on and knows it, else `''`. */
  app_name: Text,
  request_id: NullableNumber,
  method: Text,
  process_time: NullableNumber,
  work_time: NullableNumber,
  lock_time: NullableNumber,
  validate_time: NullableNumber,
  traverse_time: NullableNumber,
  handle: NullableNumber,
  object_id: Text,
  net_ram: NullableNumber,
  peak_ram: NullableNumber,
  object_type: Text,
});

export const LogEventSchema = Type.Union([
  EngineLogSchema,
  ProxyLogSchema,
  RepositoryLogSchema,
  SchedulerLogSchema,
  QixPerfLogSchema,
]);

export type EngineLog = Static<typeof EngineLogSchema>;
export type ProxyLog = Static<typeof ProxyLogSchema>;
export type RepositoryLog = Static<typeof RepositoryLogSchema>;
export type SchedulerLog = Static<typeof SchedulerLogSchema>;
export type QixPerfLog = Static<typeof QixPerfLogSchema>;
/** A log event after parsing, app-name lookup (engine performance) and categorisation. */
export type PlatformLogEvent = Static<typeof LogEventSchema>;

/**
 * The read API's answers (`/api/v1/…` on the web view's host and port): one TypeBox schema per
 * answer, the single source of the TypeScript types of the queries (shared/store/queries/), of the
 * OpenAPI document (`/api/v1/openapi.json`, docs/api/openapi.json) and of what the pages' scripts read.
 *
 * Common rules of every endpoint (the parameters are described in the OpenAPI document):
 * - `from`, `to`: RFC 3339 times; `to` defaults to now (a future `to` is fine), `from` to `to` − 1 h.
 *   `from` must be before `to`, and the range at most `store.retentionDays` (+1 day) long.
 * - Lists are newest first, `limit` rows (default 100, at most 1,000), with `nextCursor` (opaque; null
 *   on the last page) to pass as `cursor` for the next page.
 * - Times in answers are milliseconds since the epoch (numbers), for the charts; `time` of an event is
 *   also given as RFC 3339 text.
 * - Series are columnar (`t` and one array per value, the same length; null where there is no value),
 *   at most MAX_POINTS points: raw samples when they fit, else buckets of `stepMs`.
 * - A bad or unknown parameter is 400 with an ApiError naming it.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';

/** Points of a series at most (longer ranges are bucketed). */
export const MAX_POINTS = 1000;
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

const Ms = Type.Number({ description: 'milliseconds since the epoch' });
const Series = (description: string) => Type.Array(Type.Union([Type.Number(), Type.Null()]), { description });
const Cursor = Type.Union([Type.String(), Type.Null()], {
  description: 'pass as `cursor` for the next page; null on the last page',
});

/** The body of every 4xx/5xx answer of the API. */
export const ApiErrorSchema = Type.Object(
  {
    error: Type.String({ description: 'bad_request, not_found, too_many_requests, internal' }),
    message: Type.String({ description: 'what was wrong, e.g. "from: must be an RFC 3339 time"' }),
    parameter: Type.Optional(Type.String({ description: 'the query parameter at fault' })),
  },
  { additionalProperties: false },
);
export type ApiError = Static<typeof ApiErrorSchema>;

/** The range an answer covers, as the server understood it. */
export const RangeSchema = Type.Object({ from: Ms, to: Ms });

// ── servers ───────────────────────────────────────────────────────────────────────────────────────

export const ServerLatestSchema = Type.Object({
  time: Ms,
  cpu: Type.Number({ description: 'cpu.total, %' }),
  memCommitted: Type.Number({ description: 'MB' }),
  memAllocated: Type.Number({ description: 'MB' }),
  memFree: Type.Number({ description: 'MB' }),
  sessions: Type.Integer({ description: 'session.active' }),
  users: Type.Integer({ description: 'users.active' }),
  appsActive: Type.Integer(),
  appsLoaded: Type.Integer(),
  appsInMemory: Type.Integer(),
  cacheHits: Type.Integer(),
  cacheLookups: Type.Integer(),
  saturated: Type.Boolean(),
  version: Type.String(),
  uptime: Type.String(),
});

export const ServerSchema = Type.Object({
  name: Type.String(),
  host: Type.String(),
  description: Type.String(),
  tags: Type.Record(Type.String(), Type.String()),
  firstSeen: Ms,
  lastSeen: Ms,
  latest: Type.Union([ServerLatestSchema, Type.Null()], {
    description: 'the newest health sample in the range; null when the range has none',
  }),
});

export const ServersAnswerSchema = Type.Object({ range: RangeSchema, servers: Type.Array(ServerSchema) });
export type ServersAnswer = Static<typeof ServersAnswerSchema>;

/** `servers/{serverName}/health`: min and max are present when the points are buckets (else equal to the value). */
export const HealthAnswerSchema = Type.Object({
  range: RangeSchema,
  server: Type.String(),
  stepMs: Type.Union([Type.Number(), Type.Null()], { description: 'bucket width; null for raw samples' }),
  t: Type.Array(Type.Number(), { description: 'point times (ms)' }),
  cpu: Series('cpu.total mean, %'),
  cpuMin: Series('cpu.total minimum of the bucket'),
  cpuMax: Series('cpu.total maximum of the bucket'),
  memCommitted: Series('MB'),
  memAllocated: Series('MB'),
  memFree: Series('MB'),
  sessions: Series('session.active (mean of the bucket)'),
  sessionsMax: Series('session.active maximum of the bucket'),
  users: Series('users.active'),
  appsActive: Series('active docs'),
  appsLoaded: Series('loaded docs'),
  cacheHitRatio: Series('cache hits ÷ lookups over the point, 0–1'),
});
export type HealthAnswer = Static<typeof HealthAnswerSchema>;

// ── log events ────────────────────────────────────────────────────────────────────────────────────

export const CategoryItemSchema = Type.Object({ name: Type.String(), value: Type.String() });

export const LogEventRowSchema = Type.Object({
  id: Type.String({ description: 'the event point time in ns (decimal), stable' }),
  time: Type.String({ description: 'RFC 3339' }),
  timeMs: Ms,
  server: Type.String(),
  source: Type.String({ description: 'engine, proxy, repository or scheduler' }),
  level: Type.String(),
  subsystem: Type.String(),
  message: Type.String(),
  exception: Type.String(),
  category: Type.Array(CategoryItemSchema),
  appId: Type.String(),
  userFull: Type.String(),
  taskName: Type.String(),
  windowsUser: Type.String(),
  event: Type.Record(Type.String(), Type.Unknown(), { description: 'the whole event (§2.2 fields)' }),
});
export type LogEventRow = Static<typeof LogEventRowSchema>;

export const LogEventsAnswerSchema = Type.Object({
  range: RangeSchema,
  events: Type.Array(LogEventRowSchema),
  nextCursor: Cursor,
});
export type LogEventsAnswer = Static<typeof LogEventsAnswerSchema>;

/** `log-events/counts?by=level|category` (the filters of log-events except q and paging). */
export const CountsAnswerSchema = Type.Object({
  range: RangeSchema,
  by: Type.String(),
  stepMs: Type.Number(),
  t: Type.Array(Type.Number()),
  series: Type.Array(Type.Object({ key: Type.String(), total: Type.Integer(), counts: Type.Array(Type.Integer()) }), {
    description: 'one per level (or category name=value), largest total first, at most 20',
  }),
});
export type CountsAnswer = Static<typeof CountsAnswerSchema>;

// ── users and sessions ────────────────────────────────────────────────────────────────────────────

export const UserSessionsAnswerSchema = Type.Object({
  range: RangeSchema,
  stepMs: Type.Union([Type.Number(), Type.Null()]),
  series: Type.Array(
    Type.Object({
      server: Type.String(),
      virtualProxy: Type.String(),
      t: Type.Array(Type.Number()),
      sessions: Series('sessions (mean of the bucket)'),
      sessionsMax: Series('sessions maximum of the bucket'),
      users: Series('distinct users'),
    }),
  ),
  presence: Type.Array(
    Type.Object({
      user: Type.String(),
      server: Type.String(),
      virtualProxy: Type.String(),
      start: Ms,
      end: Ms,
    }),
    { description: 'who was on when: runs of session polls listing the user, overlapping the range (at most `limit`)' },
  ),
  presenceTruncated: Type.Boolean(),
});
export type UserSessionsAnswer = Static<typeof UserSessionsAnswerSchema>;

export const UserEventRowSchema = Type.Object({
  id: Type.String(),
  time: Type.String(),
  timeMs: Ms,
  server: Type.String(),
  messageType: Type.String(),
  command: Type.String({ description: 'Start session, Stop session, Open connection, Close connection' }),
  user: Type.String(),
  origin: Type.String(),
  context: Type.String(),
  message: Type.String(),
  appId: Type.Union([Type.String(), Type.Null()]),
  appName: Type.Union([Type.String(), Type.Null()]),
  browser: Type.Union([Type.String(), Type.Null()]),
  os: Type.Union([Type.String(), Type.Null()]),
});
export const UserEventsAnswerSchema = Type.Object({
  range: RangeSchema,
  events: Type.Array(UserEventRowSchema),
  nextCursor: Cursor,
});
export type UserEventsAnswer = Static<typeof UserEventsAnswerSchema>;

// ── performance ───────────────────────────────────────────────────────────────────────────────────

export const PERF_BY = ['app', 'object', 'method'] as const;
export const PERF_ORDER = ['total', 'p95', 'count'] as const;

export const PerfRowSchema = Type.Object({
  key: Type.String({ description: 'app id, app id + object id, or method' }),
  appId: Type.String(),
  appName: Type.String(),
  objectId: Type.String({ description: "'' when by=app or by=method" }),
  objectType: Type.String(),
  method: Type.String({ description: "'' when by=app or by=object" }),
  count: Type.Integer(),
  totalMs: Type.Number({ description: 'sum of process_time' }),
  p95Ms: Type.Number({
    description: 'from the hourly histograms: the upper bound of the bucket of the 95th percentile',
  }),
  maxMs: Type.Number(),
  topUsers: Type.Array(Type.Object({ user: Type.String(), count: Type.Integer(), totalMs: Type.Number() }), {
    description: 'the users who cost the most here, at most 5',
  }),
});
export const PerformanceTopAnswerSchema = Type.Object({
  range: RangeSchema,
  by: Type.String(),
  order: Type.String(),
  rows: Type.Array(PerfRowSchema),
});
export type PerformanceTopAnswer = Static<typeof PerformanceTopAnswerSchema>;

// ── audit ─────────────────────────────────────────────────────────────────────────────────────────

export const AuditEventRowSchema = Type.Object({
  id: Type.String(),
  time: Type.String(),
  timeMs: Ms,
  type: Type.String(),
  appId: Type.String(),
  sheetId: Type.String(),
  objectId: Type.String(),
  user: Type.String(),
  durationMs: Type.Union([Type.Number(), Type.Null()]),
  envelope: Type.Record(Type.String(), Type.Unknown()),
});
export const AuditEventsAnswerSchema = Type.Object({
  range: RangeSchema,
  events: Type.Array(AuditEventRowSchema),
  nextCursor: Cursor,
});
export type AuditEventsAnswer = Static<typeof AuditEventsAnswerSchema>;
/** `audit-events/counts?by=type|app|sheet|user` answers with CountsAnswerSchema. */
export const AUDIT_COUNT_BY = ['type', 'app', 'sheet', 'user'] as const;

// ── alerts (docs/alerts.md) ───────────────────────────────────────────────────────────────────────

const Labels = Type.Record(Type.String(), Type.String());
const Severity = Type.Union([Type.Literal('critical'), Type.Literal('warning'), Type.Literal('info')]);

export const AlertViewSchema = Type.Object({
  fingerprint: Type.String(),
  rule: Type.String({ description: 'alertname' }),
  severity: Severity,
  labels: Labels,
  summary: Type.String(),
  link: Type.String({ description: 'the page showing it, a path on this host' }),
  phase: Type.Union([Type.Literal('pending'), Type.Literal('firing')]),
  activeSince: Ms,
  firedAt: Type.Union([Ms, Type.Null()]),
  value: Type.Number(),
  silencedBy: Type.Union([Type.String(), Type.Null()], { description: 'the id of the silence covering it, or null' }),
});
export type AlertView = Static<typeof AlertViewSchema>;

export const RuleViewSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  builtIn: Type.Boolean(),
  severity: Severity,
  text: Type.String({ description: 'the conditions in words, e.g. "server.up == 0 for 2m"' }),
  forMs: Type.Number(),
  lastEvaluation: Type.Union([
    Type.Object({
      at: Ms,
      durationMs: Type.Number(),
      series: Type.Integer(),
      pending: Type.Integer(),
      firing: Type.Integer(),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
    Type.Null(),
  ]),
});
export type RuleView = Static<typeof RuleViewSchema>;

export const SilenceViewSchema = Type.Object({
  id: Type.String(),
  rule: Type.Union([Type.String(), Type.Null()], { description: 'null = any rule' }),
  matchers: Labels,
  startsAt: Ms,
  endsAt: Ms,
  createdBy: Type.String(),
  comment: Type.String(),
  expiredAt: Type.Union([Ms, Type.Null()]),
  active: Type.Boolean(),
});
export type SilenceView = Static<typeof SilenceViewSchema>;

export const ChannelViewSchema = Type.Object({
  name: Type.String(),
  type: Type.String(),
  target: Type.String({ description: 'where it sends, masked' }),
  sent: Type.Integer({ description: 'notifications delivered since start' }),
  failed: Type.Integer({ description: 'notifications not delivered after their retries since start' }),
  lastError: Type.Union([Type.String(), Type.Null()], {
    description: 'the last failure, masked; kept after the channel delivers again',
  }),
  failing: Type.Boolean({ description: 'whether its last notification was not delivered (after its retries)' }),
});
export type ChannelView = Static<typeof ChannelViewSchema>;

/** `alerts`: what is firing now, the rules, the silences and the channels. */
export const AlertsAnswerSchema = Type.Object({
  enabled: Type.Boolean({ description: 'Svc.alerts.enable (and the store on)' }),
  evaluationIntervalMs: Type.Number(),
  alerts: Type.Array(AlertViewSchema, { description: 'pending and firing, firing first, then by severity and time' }),
  rules: Type.Array(RuleViewSchema),
  silences: Type.Array(SilenceViewSchema, { description: 'active ones, and those that ended in the last 24 h' }),
  channels: Type.Array(ChannelViewSchema),
});
export type AlertsAnswer = Static<typeof AlertsAnswerSchema>;

export const AlertHistoryRowSchema = Type.Object({
  id: Type.Integer(),
  time: Ms,
  fingerprint: Type.String(),
  rule: Type.String(),
  severity: Severity,
  labels: Labels,
  event: Type.String({ description: 'fired, notified, notify_failed, resolved, silenced' }),
  value: Type.Union([Type.Number(), Type.Null()]),
  channel: Type.Union([Type.String(), Type.Null()]),
  detail: Type.Union([Type.String(), Type.Null()]),
});
/** `alerts/history?from&to&rule&cursor&limit`. */
export const AlertHistoryAnswerSchema = Type.Object({
  range: RangeSchema,
  entries: Type.Array(AlertHistoryRowSchema),
  nextCursor: Cursor,
});
export type AlertHistoryAnswer = Static<typeof AlertHistoryAnswerSchema>;

/** The body of `POST alerts/silences` (JSON): either `endsAt` or `duration`. */
export const SilenceRequestSchema = Type.Object(
  {
    rule: Type.Optional(Type.String({ minLength: 1, description: 'alertname; absent = any rule' })),
    matchers: Type.Optional(Labels),
    endsAt: Type.Optional(Type.String({ description: 'RFC 3339, in the future' })),
    duration: Type.Optional(Type.String({ description: "e.g. 2h (the config's durations)" })),
    createdBy: Type.Optional(Type.String({ maxLength: 200 })),
    comment: Type.Optional(Type.String({ maxLength: 1000 })),
  },
  { additionalProperties: false },
);
export type SilenceRequest = Static<typeof SilenceRequestSchema>;

/** Every answer schema by path (below /api/v1/), for the OpenAPI document. */
export const ANSWERS: Readonly<Record<string, TSchema>> = {
  servers: ServersAnswerSchema,
  'servers/{serverName}/health': HealthAnswerSchema,
  'log-events': LogEventsAnswerSchema,
  'log-events/counts': CountsAnswerSchema,
  'user-sessions': UserSessionsAnswerSchema,
  'user-events': UserEventsAnswerSchema,
  'performance/top': PerformanceTopAnswerSchema,
  'audit-events': AuditEventsAnswerSchema,
  'audit-events/counts': CountsAnswerSchema,
  alerts: AlertsAnswerSchema,
  'alerts/history': AlertHistoryAnswerSchema,
};

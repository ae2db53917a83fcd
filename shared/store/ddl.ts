/**
 * The embedded store's tables (SQLite through node:sqlite): the one description of what the store
 * keeps, read by its writer (shared/store/writer*) and by the read API's queries (shared/store/queries/).
 *
 * Conventions:
 * - Event tables are keyed by `time_ns`, the §0.3 point time the edge decided once for the event
 *   (ms × 1,000,000 + a process-wide counter): it is unique per event and the same on every
 *   redelivery, so `INSERT OR IGNORE` keeps each event once, and as the rowid it clusters the rows by
 *   time, which every query bounds. Audit events (whose point time is optional in old queue messages)
 *   are keyed by their queue id instead.
 * - Times the API answers with are milliseconds since the epoch (`*_ms`); `time_ns / 1000000` is the
 *   event's millisecond.
 * - A server is a row of `servers`, found by its configured name (`serversToMonitor.servers[].serverName`);
 *   a UDP event names its host, which the writer maps to the configured server of that host, else to a
 *   server named after the host.
 * - Sources are the short names the API takes: `engine`, `proxy`, `repository`, `scheduler`; engine
 *   performance events (`qseow-qix-perf`) go to `perf_events`, not `log_events`.
 * - Rollups (`*_5m`, `*_hourly`) are written by the store itself; see each table.
 */

/** Bumped when a table changes; the store refuses a database of a newer version and migrates an older one. */
export const STORE_SCHEMA_VERSION = 1;

/** The log sources as the API and the tables name them (platform-formats.md §2). */
export const STORE_LOG_SOURCES = ['engine', 'proxy', 'repository', 'scheduler'] as const;
export type StoreLogSource = (typeof STORE_LOG_SOURCES)[number];

/** Rollup bucket of health and session samples older than `store.rawHealthHours`. */
export const ROLLUP_BUCKET_MS = 5 * 60_000;
/** Bucket of the hourly rollups (log counts, engine performance). */
export const HOUR_MS = 3_600_000;

/**
 * Upper bounds (ms) of the engine-performance duration histogram kept per hourly rollup row
 * (`perf_hourly.hist`: a JSON array of counts, one per bound, the last one for everything above):
 * p95 over any range is read from the merged histogram (the bound of the bucket holding the 95th
 * percentile, capped by the range's maximum).
 */
export const PERF_HISTOGRAM_BOUNDS_MS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 60_000, 300_000,
] as const;

export const STORE_DDL = `
CREATE TABLE IF NOT EXISTS meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS servers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  host TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  tags TEXT NOT NULL DEFAULT '{}',          -- JSON object: the §4 server tags of its last sample
  first_seen_ms INTEGER NOT NULL,
  last_seen_ms INTEGER NOT NULL
);

-- One row per successful health poll (§4, the §6.1 fields), kept for store.rawHealthHours.
CREATE TABLE IF NOT EXISTS health (
  time_ns INTEGER PRIMARY KEY,
  server_id INTEGER NOT NULL,
  version TEXT NOT NULL,
  started TEXT NOT NULL,
  uptime TEXT NOT NULL,
  mem_committed REAL NOT NULL,
  mem_allocated REAL NOT NULL,
  mem_free REAL NOT NULL,
  apps_active INTEGER NOT NULL,             -- counts of the doc lists
  apps_loaded INTEGER NOT NULL,
  apps_in_memory INTEGER NOT NULL,
  apps_calls INTEGER NOT NULL,
  apps_selections INTEGER NOT NULL,
  cpu_total REAL NOT NULL,
  session_active INTEGER NOT NULL,
  session_total INTEGER NOT NULL,
  users_active INTEGER NOT NULL,
  users_total INTEGER NOT NULL,
  cache_hits INTEGER NOT NULL,
  cache_lookups INTEGER NOT NULL,
  cache_added INTEGER NOT NULL,
  cache_replaced INTEGER NOT NULL,
  cache_bytes_added INTEGER NOT NULL,
  saturated INTEGER NOT NULL,               -- 0 or 1
  docs TEXT                                 -- JSON {active, loaded, inMemory} of app names, when extracted
);
CREATE INDEX IF NOT EXISTS health_server_time ON health (server_id, time_ns);

-- Health older than store.rawHealthHours: per server and 5-minute bucket, min / mean / max.
CREATE TABLE IF NOT EXISTS health_5m (
  server_id INTEGER NOT NULL,
  bucket_ms INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  cpu_min REAL NOT NULL, cpu_mean REAL NOT NULL, cpu_max REAL NOT NULL,
  mem_committed_min REAL NOT NULL, mem_committed_mean REAL NOT NULL, mem_committed_max REAL NOT NULL,
  mem_allocated_min REAL NOT NULL, mem_allocated_mean REAL NOT NULL, mem_allocated_max REAL NOT NULL,
  mem_free_min REAL NOT NULL, mem_free_mean REAL NOT NULL, mem_free_max REAL NOT NULL,
  session_active_min REAL NOT NULL, session_active_mean REAL NOT NULL, session_active_max REAL NOT NULL,
  users_active_min REAL NOT NULL, users_active_mean REAL NOT NULL, users_active_max REAL NOT NULL,
  apps_active_min REAL NOT NULL, apps_active_mean REAL NOT NULL, apps_active_max REAL NOT NULL,
  apps_loaded_min REAL NOT NULL, apps_loaded_mean REAL NOT NULL, apps_loaded_max REAL NOT NULL,
  cache_hits_last INTEGER NOT NULL, cache_lookups_last INTEGER NOT NULL,
  PRIMARY KEY (server_id, bucket_ms)
) WITHOUT ROWID;

-- One row per successful session poll of a server and virtual proxy (§5.1), kept for store.rawHealthHours.
CREATE TABLE IF NOT EXISTS session_samples (
  time_ns INTEGER PRIMARY KEY,
  server_id INTEGER NOT NULL,
  virtual_proxy TEXT NOT NULL,
  sessions INTEGER NOT NULL,
  users INTEGER NOT NULL,
  user_list TEXT NOT NULL                   -- session_user_id_list: distinct DIR\\id joined by ','
);
CREATE INDEX IF NOT EXISTS session_samples_server_time ON session_samples (server_id, virtual_proxy, time_ns);

CREATE TABLE IF NOT EXISTS sessions_5m (
  server_id INTEGER NOT NULL,
  virtual_proxy TEXT NOT NULL,
  bucket_ms INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  sessions_min REAL NOT NULL, sessions_mean REAL NOT NULL, sessions_max REAL NOT NULL,
  users_max INTEGER NOT NULL,
  PRIMARY KEY (server_id, virtual_proxy, bucket_ms)
) WITHOUT ROWID;
-- The read API reads every server's and virtual proxy's buckets of a range at once (user-sessions).
CREATE INDEX IF NOT EXISTS sessions_5m_bucket ON sessions_5m (bucket_ms);

-- Who was on when: one row per user, server and virtual proxy for each unbroken run of session polls
-- that listed the user (a gap of more than 2.5 polling intervals starts a new row). Kept for retentionDays.
CREATE TABLE IF NOT EXISTS session_presence (
  id INTEGER PRIMARY KEY,
  server_id INTEGER NOT NULL,
  virtual_proxy TEXT NOT NULL,
  user_full TEXT NOT NULL,
  start_ms INTEGER NOT NULL,
  end_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS session_presence_end ON session_presence (end_ms);
CREATE INDEX IF NOT EXISTS session_presence_user ON session_presence (user_full, end_ms);

-- User-activity events (§1): session and connection starts and stops.
CREATE TABLE IF NOT EXISTS user_events (
  time_ns INTEGER PRIMARY KEY,
  server_id INTEGER NOT NULL,
  message_type TEXT NOT NULL,               -- qseow-proxy-session | qseow-proxy-connection
  command TEXT NOT NULL,
  user_full TEXT NOT NULL,
  user_directory TEXT NOT NULL,
  user_id TEXT NOT NULL,
  origin TEXT NOT NULL,
  context TEXT NOT NULL,
  message TEXT NOT NULL,
  app_id TEXT,
  app_name TEXT,
  ua_browser TEXT,                          -- "name major"
  ua_os TEXT                                -- "name version"
);
CREATE INDEX IF NOT EXISTS user_events_user ON user_events (user_full, time_ns);

-- Log events (§2, §3) of the engine, proxy, repository and scheduler.
CREATE TABLE IF NOT EXISTS log_events (
  time_ns INTEGER PRIMARY KEY,
  server_id INTEGER NOT NULL,
  source TEXT NOT NULL,                     -- STORE_LOG_SOURCES
  level TEXT NOT NULL,                      -- upper case: ERROR, WARN, INFO, …
  subsystem TEXT NOT NULL,
  message TEXT NOT NULL,
  exception TEXT NOT NULL,                  -- exception_message, '' when none
  category TEXT NOT NULL,                   -- JSON array of {name, value}, '[]' when none
  app_id TEXT NOT NULL,
  user_full TEXT NOT NULL,
  task_name TEXT NOT NULL,
  windows_user TEXT NOT NULL,
  rest TEXT NOT NULL                        -- JSON of the event's other §2.2 fields: the whole event is columns + rest
);
CREATE INDEX IF NOT EXISTS log_events_level ON log_events (level, time_ns);
CREATE INDEX IF NOT EXISTS log_events_server ON log_events (server_id, time_ns);
-- Free text over message and exception (q: every word must match), kept in step by the writer.
CREATE VIRTUAL TABLE IF NOT EXISTS log_events_fts USING fts5 (
  message, exception, content='log_events', content_rowid='time_ns'
);
-- The writer's INSERT OR IGNORE fires the insert trigger only for a row actually inserted, so a
-- redelivered event adds no second index entry; upkeep's deletes remove theirs.
CREATE TRIGGER IF NOT EXISTS log_events_fts_insert AFTER INSERT ON log_events BEGIN
  INSERT INTO log_events_fts (rowid, message, exception) VALUES (new.time_ns, new.message, new.exception);
END;
CREATE TRIGGER IF NOT EXISTS log_events_fts_delete AFTER DELETE ON log_events BEGIN
  INSERT INTO log_events_fts (log_events_fts, rowid, message, exception)
    VALUES ('delete', old.time_ns, old.message, old.exception);
END;

-- Log events counted per hour, server, source, level and category: every event adds 1 to the row of
-- category '' (so the '' rows count ALL events) and 1 to the row of each category name=value it has
-- (0, 1 or several): the counts over long ranges without scanning log_events.
CREATE TABLE IF NOT EXISTS log_counts_hourly (
  hour_ms INTEGER NOT NULL,
  server_id INTEGER NOT NULL,
  source TEXT NOT NULL,
  level TEXT NOT NULL,
  category TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (hour_ms, server_id, source, level, category)
) WITHOUT ROWID;

-- Engine performance events (qseow-qix-perf).
CREATE TABLE IF NOT EXISTS perf_events (
  time_ns INTEGER PRIMARY KEY,
  server_id INTEGER NOT NULL,
  app_id TEXT NOT NULL,
  app_name TEXT NOT NULL,
  object_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  method TEXT NOT NULL,
  user_full TEXT NOT NULL,
  activity TEXT NOT NULL,                   -- user | non-user
  proxy_session_id TEXT NOT NULL,
  process_time REAL,                        -- ms
  work_time REAL,
  lock_time REAL,
  validate_time REAL,
  traverse_time REAL,
  net_ram REAL,
  peak_ram REAL
);

-- Engine performance per hour, server, app, object, method and user: count, total and max of
-- process_time, and its histogram over PERF_HISTOGRAM_BOUNDS_MS (JSON array of counts).
CREATE TABLE IF NOT EXISTS perf_hourly (
  hour_ms INTEGER NOT NULL,
  server_id INTEGER NOT NULL,
  app_id TEXT NOT NULL,
  app_name TEXT NOT NULL,
  object_id TEXT NOT NULL,
  object_type TEXT NOT NULL,
  method TEXT NOT NULL,
  user_full TEXT NOT NULL,
  count INTEGER NOT NULL,
  total_ms REAL NOT NULL,
  max_ms REAL NOT NULL,
  hist TEXT NOT NULL,
  PRIMARY KEY (hour_ms, server_id, app_id, object_id, method, user_full)
) WITHOUT ROWID;

-- Audit events (the audit API), whatever auditEvents.destination says.
CREATE TABLE IF NOT EXISTS audit_events (
  id TEXT PRIMARY KEY,                      -- the queued event's id
  time_ms INTEGER NOT NULL,                 -- the envelope's timestamp
  type TEXT NOT NULL,
  app_id TEXT NOT NULL,
  sheet_id TEXT NOT NULL,
  object_id TEXT NOT NULL,
  user_id TEXT NOT NULL,                    -- payload.context.user as sent
  duration_ms REAL,                         -- object.view.duration
  envelope TEXT NOT NULL                    -- the whole envelope as JSON
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS audit_events_time ON audit_events (time_ms);

-- Svc's own counters, sampled once a minute: name (received, dropped.<reason>, queue_depth,
-- failed_writes, …), labels as JSON ({"listener":"log"}, {"destination":"tsdb"}), value.
CREATE TABLE IF NOT EXISTS svc_counters (
  time_ms INTEGER NOT NULL,
  name TEXT NOT NULL,
  labels TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (time_ms, name, labels)
) WITHOUT ROWID;
-- Alerts (shared/alerts/store.ts, docs/alerts.md). Times in ms since the epoch; labels as JSON objects.
-- Added after version 1 without a version bump: the tables are new, so CREATE … IF NOT EXISTS is the
-- whole migration and an older Svc still opens the file (it ignores them).
-- The alerts pending or firing now: replaced at each evaluation that changes them.
CREATE TABLE IF NOT EXISTS alert_state (
  fingerprint TEXT PRIMARY KEY,             -- alertFingerprint(labels)
  rule_id TEXT NOT NULL,
  rule TEXT NOT NULL,                       -- alertname
  severity TEXT NOT NULL,
  labels TEXT NOT NULL,
  summary TEXT NOT NULL,
  link TEXT NOT NULL,
  phase TEXT NOT NULL CHECK (phase IN ('pending', 'firing')),
  active_since_ms INTEGER NOT NULL,         -- the first evaluation at which the condition held
  fired_at_ms INTEGER,                      -- null while pending
  value REAL NOT NULL,
  last_seen_ms INTEGER NOT NULL
) WITHOUT ROWID;
-- What each channel was last told of each alert (a restart does not send again what was sent).
CREATE TABLE IF NOT EXISTS alert_deliveries (
  fingerprint TEXT NOT NULL,
  channel TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('firing', 'resolved')),
  sent_at_ms INTEGER NOT NULL,
  PRIMARY KEY (fingerprint, channel)
) WITHOUT ROWID;
-- Alerts that resolved while a channel had been told they fire and not yet that they resolved: the
-- last record (the columns of alert_state) and when it resolved, so a restart still tells it.
-- Deleted once no channel's delivery of the alert says firing.
CREATE TABLE IF NOT EXISTS alert_resolved (
  fingerprint TEXT PRIMARY KEY,
  rule_id TEXT NOT NULL,
  rule TEXT NOT NULL,
  severity TEXT NOT NULL,
  labels TEXT NOT NULL,
  summary TEXT NOT NULL,
  link TEXT NOT NULL,
  phase TEXT NOT NULL,
  active_since_ms INTEGER NOT NULL,
  fired_at_ms INTEGER,
  value REAL NOT NULL,
  last_seen_ms INTEGER NOT NULL,
  resolved_at_ms INTEGER NOT NULL
) WITHOUT ROWID;
-- Each alert's history: fired, notified, notify_failed, resolved, silenced.
CREATE TABLE IF NOT EXISTS alert_history (
  id INTEGER PRIMARY KEY,
  time_ms INTEGER NOT NULL,
  fingerprint TEXT NOT NULL,
  rule TEXT NOT NULL,
  severity TEXT NOT NULL,
  labels TEXT NOT NULL,
  event TEXT NOT NULL CHECK (event IN ('fired', 'notified', 'notify_failed', 'resolved', 'silenced')),
  value REAL,
  channel TEXT,
  detail TEXT
);
CREATE INDEX IF NOT EXISTS alert_history_time ON alert_history (time_ms);
CREATE INDEX IF NOT EXISTS alert_history_rule ON alert_history (rule, time_ms);
-- Silences, from the Alerts page and svc alerts silence.
CREATE TABLE IF NOT EXISTS alert_silences (
  id TEXT PRIMARY KEY,                      -- 8 hex digits
  rule TEXT,                                -- alertname, or null for any rule
  matchers TEXT NOT NULL,                   -- {"server":"node2"}
  starts_at_ms INTEGER NOT NULL,
  ends_at_ms INTEGER NOT NULL,
  created_by TEXT NOT NULL,
  comment TEXT NOT NULL,
  expired_at_ms INTEGER                     -- ended early
) WITHOUT ROWID;
`;

/**
 * Parser of UDP log events (platform-formats.md §2.2 field layouts, §2.3 step 1 prefix dispatch,
 * §0.3 event time, §0.4 splitting). Pure, never throws. Counting, source flags, the engine-performance
 * filter and app-name lookup, categorisation and publishing happen after this.
 */
import {
  failure,
  parseDatagram,
  prefixKey,
  unknownPrefix,
  userFull,
  type Datagram,
  type ParseResult,
} from './common.js';
import {
  decodeInto,
  LOG_HEAD_FIELDS,
  LOG_LAYOUTS,
  LOG_SOURCE_BY_PREFIX,
  QIX_PERF_PROXY_SESSION_FIELD,
  SCHEDULER_USER_FULL_CAP,
  SCHEDULER_USER_TRIPLE,
  type LogSource,
} from './layouts.js';
import { s, stripControl } from './sanitize.js';
import { SOURCE_CHECKS, splitDatagram, type SplitSpec } from './split.js';
import { tsToInstantMs, uuid } from './validators.js';

export type { LogSource } from './layouts.js';
import type { EngineLog, ProxyLog, QixPerfLog, RepositoryLog, SchedulerLog } from '../../../../shared/platform/events.js';

/** The times the parser adds to every log event (§0.3); they travel beside the §2.2 keys, not in them. */
export interface ParsedTimes {
  /** §0.3: field 2 if a valid ISO timestamp, else field 3 if one, else `receivedAtMs` (ms since the epoch). */
  eventTimeMs: number;
  /** The instant the datagram was read from the socket (ms since the epoch). */
  receivedAtMs: number;
}

/** Fields 0–7 of every log source plus the times. */
export type LogEventHead<S extends LogSource> = Pick<EngineLog, 'log_row' | 'ts_iso' | 'ts_local' | 'level' | 'host' | 'subsystem' | 'windows_user'> & { source: S } & ParsedTimes;

/** What the parser returns: the §2.2 keys (no categories yet, no engine-performance app name) and the times. */
type Parsed<T> = Omit<T, 'category' | 'app_name'> & ParsedTimes;

export type EngineLogEvent = Parsed<EngineLog>;
/** The fields proxy and repository events share after the head. */
export type ProxyRepositoryFields = Omit<ProxyLog, keyof LogEventHead<'qseow-proxy'> | 'category'>;
export type ProxyLogEvent = Parsed<ProxyLog>;
export type RepositoryLogEvent = Parsed<RepositoryLog>;
export type SchedulerLogEvent = Omit<SchedulerLog, 'category'> & ParsedTimes;
export type EventActivitySource = QixPerfLog['event_activity_source'];
/** Engine performance (`/qseow-qix-perf/`). `app_name` (app-list lookup) is added after parsing. */
export type QixPerfLogEvent = Parsed<QixPerfLog>;

export type LogEvent = EngineLogEvent | ProxyLogEvent | RepositoryLogEvent | SchedulerLogEvent | QixPerfLogEvent;

/** The split spec of each source: field count and free-text fields of LOG_LAYOUTS, checks of split.ts. */
const SPLIT_SPECS: Readonly<Record<LogSource, SplitSpec>> = {
  'qseow-engine': splitSpec('qseow-engine'),
  'qseow-proxy': splitSpec('qseow-proxy'),
  'qseow-repository': splitSpec('qseow-repository'),
  'qseow-scheduler': splitSpec('qseow-scheduler'),
  'qseow-qix-perf': splitSpec('qseow-qix-perf'),
};

function splitSpec(source: LogSource): SplitSpec {
  const { n, freeText } = LOG_LAYOUTS[source];
  const check = SOURCE_CHECKS[source];
  return check === undefined ? { n, freeText } : { n, freeText, check };
}

/** §0.3: `ts_iso` (field 2) if a valid ISO form, else `ts_local` (field 3) if one, else the receive time. */
export function eventTime(tsIso: string, tsLocal: string, receivedAtMs: number): number {
  return tsToInstantMs(tsIso) ?? tsToInstantMs(tsLocal) ?? receivedAtMs;
}

/*
 * The builders write every key into one object (source, head, source fields, derived keys, times)
 * instead of spreading partial objects: this keeps the hot path allocation-light.
 */

function head<S extends LogSource>(source: S, f: readonly string[]) {
  return decodeInto({ source }, f, LOG_HEAD_FIELDS);
}

function finish<T extends { ts_iso: string; ts_local: string; user_directory: string; user_id: string }>(event: T, receivedAtMs: number) {
  return Object.assign(event, {
    user_full: userFull(event.user_directory, event.user_id),
    eventTimeMs: eventTime(event.ts_iso, event.ts_local, receivedAtMs),
    receivedAtMs,
  });
}

function engine(f: readonly string[], receivedAtMs: number): EngineLogEvent {
  return finish(decodeInto(head('qseow-engine', f), f, LOG_LAYOUTS['qseow-engine'].fields), receivedAtMs);
}

function proxyOrRepository<S extends 'qseow-proxy' | 'qseow-repository'>(
  source: S,
  f: readonly string[],
  receivedAtMs: number,
): LogEventHead<S> & ProxyRepositoryFields {
  return finish(decodeInto(head(source, f), f, LOG_LAYOUTS[source].fields), receivedAtMs);
}

/**
 * Scheduler `user_full` (§2.2): dir and id both non-empty → `dir\id` (s(200)); else, when both are
 * empty and field 12 contains exactly one `\`, dir and id are its two halves (s(100) each) and
 * `user_full` is `dir\id` when both halves are non-empty; else `''`.
 */
function scheduler(f: readonly string[], receivedAtMs: number): SchedulerLogEvent {
  const fields = LOG_LAYOUTS['qseow-scheduler'].fields;
  const event = decodeInto(head('qseow-scheduler', f), f, fields);
  if (event.user_directory === '' && event.user_id === '') {
    const user = stripControl(f[SCHEDULER_USER_TRIPLE.user] ?? '');
    const cut = user.indexOf('\\');
    if (cut !== -1 && user.indexOf('\\', cut + 1) === -1) {
      event.user_directory = s(user.slice(0, cut), fields.user_directory.rule.cap);
      event.user_id = s(user.slice(cut + 1), fields.user_id.rule.cap);
    }
  }
  const done = finish(event, receivedAtMs);
  done.user_full = s(done.user_full, SCHEDULER_USER_FULL_CAP);
  return done;
}

function qixPerf(f: readonly string[], receivedAtMs: number): QixPerfLogEvent {
  const proxySession = stripControl(f[QIX_PERF_PROXY_SESSION_FIELD] ?? '');
  const nonUser = proxySession === '0';
  const activity: EventActivitySource = nonUser ? 'non-user' : 'user';
  const withSession = Object.assign(head('qseow-qix-perf', f), {
    proxy_session_id: nonUser ? '' : uuid(proxySession),
    event_activity_source: activity,
  });
  return finish(decodeInto(withSession, f, LOG_LAYOUTS['qseow-qix-perf'].fields), receivedAtMs);
}

function build(source: LogSource, f: readonly string[], receivedAtMs: number): LogEvent {
  switch (source) {
    case 'qseow-engine':
      return engine(f, receivedAtMs);
    case 'qseow-proxy':
    case 'qseow-repository':
      return proxyOrRepository(source, f, receivedAtMs);
    case 'qseow-scheduler':
      return scheduler(f, receivedAtMs);
    case 'qseow-qix-perf':
      return qixPerf(f, receivedAtMs);
  }
}

function parse(text: string, receivedAtMs: number): ParseResult<LogEvent> {
  const key = prefixKey(text);
  const source = key === null ? undefined : LOG_SOURCE_BY_PREFIX.get(key);
  if (source === undefined) return unknownPrefix(text);
  const spec = SPLIT_SPECS[source];
  const split = splitDatagram(text, spec);
  if (!split.ok) {
    const detail =
      split.error === 'too_few'
        ? `${source}: expected ${spec.n} fields, got ${split.parts}`
        : `${source}: expected exactly ${spec.n} fields (no free-text field takes surplus ';'), got ${split.parts}`;
    return failure('malformed', detail, text);
  }
  return { ok: true, event: build(source, split.fields, receivedAtMs) };
}

/**
 * Parses one datagram of the log-event listener, dispatching on field 0 (case-insensitive) to the five
 * sources. `receivedAtMs` is the instant it was read from the socket. Unknown prefix → `unknown_prefix`;
 * too few fields, or surplus fields in an engine-performance event → `malformed`.
 */
export function parseLogEvent(datagram: Datagram, receivedAtMs: number): ParseResult<LogEvent> {
  return parseDatagram(datagram, (text) => parse(text, receivedAtMs));
}

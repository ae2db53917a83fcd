/**
 * Parser of UDP log events (platform-formats.md §2.2 field layouts, §2.3 step 1 prefix dispatch,
 * §0.3 event time, §0.4 splitting). Pure, never throws. Counting, source flags, the engine-performance
 * filter and app-name lookup, categorisation and publishing happen after this.
 */

import { hasNoControl, sanitiseField, stripControl } from '../../common/sanitise.js';
import { tsToInstantMs, uuid } from '../../common/validators.js';
import {
  type Datagram,
  failure,
  type ParseFailure,
  type ParseResult,
  parseDatagram,
  prefixKey,
  unknownPrefix,
  userFull,
} from './common.js';
import {
  decodeInto,
  LOG_HEAD_FIELDS,
  LOG_LAYOUTS,
  LOG_SOURCE_BY_PREFIX,
  type LogSource,
  layoutKeys,
  QIX_PERF_PROXY_SESSION_FIELD,
  SCHEDULER_USER_FULL_CAP,
  SCHEDULER_USER_TRIPLE,
} from './layouts.js';
import { SOURCE_CHECKS, type SplitSpec, splitDatagram } from './split.js';

export type { LogSource } from './layouts.js';

import type {
  EngineLog,
  ProxyLog,
  QixPerfLog,
  RepositoryLog,
  SchedulerLog,
} from '../../../../shared/platform/events.js';

/** The times the parser adds to every log event (§0.3); they travel beside the §2.2 keys, not in them. */
export interface ParsedTimes {
  /** §0.3: field 2 if a valid ISO timestamp, else field 3 if one, else `receivedAtMs` (ms since the epoch). */
  eventTimeMs: number;
  /** The instant the datagram was read from the socket (ms since the epoch). */
  receivedAtMs: number;
}

/** Fields 0–7 of every log source plus the times. */
export type LogEventHead<S extends LogSource> = Pick<
  EngineLog,
  'log_row' | 'ts_iso' | 'ts_local' | 'level' | 'host' | 'subsystem' | 'windows_user'
> & { source: S } & ParsedTimes;

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

/** The §2.2 keys alone (no times, no categories, no engine-performance app name yet). */
export type LogFields =
  | Omit<EngineLog, 'category'>
  | Omit<ProxyLog, 'category'>
  | Omit<RepositoryLog, 'category'>
  | Omit<SchedulerLog, 'category'>
  | Omit<QixPerfLog, 'app_name'>;

/** What `parseLogFields` returns: the §2.2 keys, and beside them the §0.3 event time. */
export type LogFieldsResult = { ok: true; event: LogFields; eventTimeMs: number } | ParseFailure;

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
 * The builders write every key into one object (source, head, source fields, derived keys) instead
 * of spreading partial objects: this keeps the hot path allocation-light. The times stay out of it,
 * so the handler queues that very object (no copy without them).
 *
 * That object starts as a copy of its source's blank: every key already there, in the final order.
 * Added one by one, twenty-odd keys would turn it into a slow dictionary-mode object, which costs
 * at every later step (and twice in JSON.stringify).
 */

type Blank<S extends LogSource> = { source: S } & Record<string, unknown>;

function blankOf<S extends LogSource>(source: S, ...keys: (readonly string[])[]): Blank<S> {
  // Object.fromEntries, not a spread into a literal: only then are its copies fast-mode objects at every size.
  return Object.assign(Object.fromEntries(['source', ...keys.flat(), 'user_full'].map((key) => [key, null])), {
    source,
  });
}

const headKeys = layoutKeys(LOG_HEAD_FIELDS);
const BLANKS: { readonly [S in LogSource]: Blank<S> } = {
  'qseow-engine': blankOf('qseow-engine', headKeys, layoutKeys(LOG_LAYOUTS['qseow-engine'].fields)),
  'qseow-proxy': blankOf('qseow-proxy', headKeys, layoutKeys(LOG_LAYOUTS['qseow-proxy'].fields)),
  'qseow-repository': blankOf('qseow-repository', headKeys, layoutKeys(LOG_LAYOUTS['qseow-repository'].fields)),
  'qseow-scheduler': blankOf('qseow-scheduler', headKeys, layoutKeys(LOG_LAYOUTS['qseow-scheduler'].fields)),
  // Engine performance: field 8 becomes two keys before the layout's (see qixPerf).
  'qseow-qix-perf': blankOf(
    'qseow-qix-perf',
    headKeys,
    ['proxy_session_id', 'event_activity_source'],
    layoutKeys(LOG_LAYOUTS['qseow-qix-perf'].fields),
  ),
};

/**
 * A fresh copy of each source's blank: a spread per source, each at a place of its own. A spread
 * clones the blank's shape and values at once, where Object.assign({}, blank) adds its keys one by
 * one (growing the new object's property store as it goes); but one spread of all five sources'
 * blanks at one place is megamorphic, and V8 then clones in its runtime, dearer than either.
 * bench/udp-steps.mjs measures it: its first step (the handler, no queue) parses every datagram.
 */
const COPIES: { readonly [S in LogSource]: () => Blank<S> } = {
  'qseow-engine': () => ({ ...BLANKS['qseow-engine'] }),
  'qseow-proxy': () => ({ ...BLANKS['qseow-proxy'] }),
  'qseow-repository': () => ({ ...BLANKS['qseow-repository'] }),
  'qseow-scheduler': () => ({ ...BLANKS['qseow-scheduler'] }),
  'qseow-qix-perf': () => ({ ...BLANKS['qseow-qix-perf'] }),
};

/** A fresh object of the source's blank with the head (fields 0–7) decoded. `clean`: no control character in the datagram. */
function head<S extends LogSource>(source: S, f: readonly string[], clean: boolean) {
  const copy: () => Blank<S> = COPIES[source];
  return decodeInto(copy(), f, LOG_HEAD_FIELDS, clean);
}

function finish<T extends { user_directory: string; user_id: string }>(event: T) {
  return Object.assign(event, { user_full: userFull(event.user_directory, event.user_id) });
}

function engine(f: readonly string[], clean: boolean): Omit<EngineLog, 'category'> {
  return finish(decodeInto(head('qseow-engine', f, clean), f, LOG_LAYOUTS['qseow-engine'].fields, clean));
}

function proxyOrRepository<S extends 'qseow-proxy' | 'qseow-repository'>(
  source: S,
  f: readonly string[],
  clean: boolean,
): Omit<LogEventHead<S>, keyof ParsedTimes> & ProxyRepositoryFields {
  return finish(decodeInto(head(source, f, clean), f, LOG_LAYOUTS[source].fields, clean));
}

/**
 * Scheduler `user_full` (§2.2): dir and id both non-empty → `dir\id` (s(200)); else, when both are
 * empty and field 12 contains exactly one `\`, dir and id are its two halves (s(100) each) and
 * `user_full` is `dir\id` when both halves are non-empty; else `''`.
 */
function scheduler(f: readonly string[], clean: boolean): Omit<SchedulerLog, 'category'> {
  const fields = LOG_LAYOUTS['qseow-scheduler'].fields;
  const event = decodeInto(head('qseow-scheduler', f, clean), f, fields, clean);
  if (event.user_directory === '' && event.user_id === '') {
    const user = stripControl(f[SCHEDULER_USER_TRIPLE.user] ?? '');
    const cut = user.indexOf('\\');
    if (cut !== -1 && user.indexOf('\\', cut + 1) === -1) {
      event.user_directory = sanitiseField(user.slice(0, cut), fields.user_directory.rule.cap);
      event.user_id = sanitiseField(user.slice(cut + 1), fields.user_id.rule.cap);
    }
  }
  const done = finish(event);
  done.user_full = sanitiseField(done.user_full, SCHEDULER_USER_FULL_CAP);
  return done;
}

function qixPerf(f: readonly string[], clean: boolean): Omit<QixPerfLog, 'app_name'> {
  const raw = f[QIX_PERF_PROXY_SESSION_FIELD] ?? '';
  const proxySession = clean ? raw : stripControl(raw);
  const nonUser = proxySession === '0';
  const activity: EventActivitySource = nonUser ? 'non-user' : 'user';
  const withSession = Object.assign(head('qseow-qix-perf', f, clean), {
    proxy_session_id: nonUser ? '' : uuid(proxySession),
    event_activity_source: activity,
  });
  return finish(decodeInto(withSession, f, LOG_LAYOUTS['qseow-qix-perf'].fields, clean));
}

function build(source: LogSource, f: readonly string[], clean: boolean): LogFields {
  switch (source) {
    case 'qseow-engine':
      return engine(f, clean);
    case 'qseow-proxy':
    case 'qseow-repository':
      return proxyOrRepository(source, f, clean);
    case 'qseow-scheduler':
      return scheduler(f, clean);
    case 'qseow-qix-perf':
      return qixPerf(f, clean);
  }
}

function parse(text: string, receivedAtMs: number): LogFieldsResult {
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
  const event = build(source, split.fields, hasNoControl(text));
  return { ok: true, event, eventTimeMs: eventTime(event.ts_iso, event.ts_local, receivedAtMs) };
}

/**
 * `parseLogEvent` without the times in the event: the §2.2 keys, and the §0.3 event time beside
 * them. The listener's handler queues this object as it is (categories or the app name added).
 */
export function parseLogFields(datagram: Datagram, receivedAtMs: number): LogFieldsResult {
  return parseDatagram(datagram, (text) => parse(text, receivedAtMs));
}

/**
 * Parses one datagram of the log-event listener, dispatching on field 0 (case-insensitive) to the five
 * sources. `receivedAtMs` is the instant it was read from the socket. Unknown prefix → `unknown_prefix`;
 * too few fields, or surplus fields in an engine-performance event → `malformed`.
 */
export function parseLogEvent(datagram: Datagram, receivedAtMs: number): ParseResult<LogEvent> {
  const result = parseLogFields(datagram, receivedAtMs);
  if (!result.ok) return result;
  const times: ParsedTimes = { eventTimeMs: result.eventTimeMs, receivedAtMs };
  // The same keys in the same order as the builders write them, the times last.
  const event: LogEvent = Object.assign(result.event, times);
  return { ok: true, event };
}

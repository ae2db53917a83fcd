/**
 * The field layouts of the UDP sources (platform-formats.md §0.4, §1.2, §2.2): prefixes, field counts,
 * free-text fields, and for every parsed key its field index and rule (sanitising cap or validator).
 * This is the single place these numbers live; the parsers, the splitter and the tests read them from here.
 */
import {
  LOG_SOURCES,
  type LogSource,
  USER_EVENT_TYPES,
  type UserEventType,
} from '../../../../shared/platform/events.js';
import { stripControl, truncateCodePoints } from '../../common/sanitise.js';
import { float, int, intAtLeast, ts, uuid } from '../../common/validators.js';

/** How a field becomes a parsed value. */
export type FieldRule =
  | { readonly kind: 'text'; readonly cap: number }
  | { readonly kind: 'uuid' }
  | { readonly kind: 'ts' }
  | { readonly kind: 'int'; readonly min: number | null }
  | { readonly kind: 'float' };

export interface FieldDef {
  /** 0-based index of the field in the datagram (after the surplus-`;` assignment of §0.4). */
  readonly idx: number;
  readonly rule: FieldRule;
}

/** `s(cap)` text (§0.1). */
const text = (idx: number, cap: number) => ({ idx, rule: { kind: 'text', cap } }) as const;
/** `uuid` (§0.2): lower-case id or `''`. */
const uuidAt = (idx: number) => ({ idx, rule: { kind: 'uuid' } }) as const;
/** `ts` (§0.2): the timestamp as received or `''`. */
const tsAt = (idx: number) => ({ idx, rule: { kind: 'ts' } }) as const;
/** `int` (§0.2), optionally with a lower bound (`int ≥ 0`, `int ≥ 1`); `null` when invalid. */
const intAt = (idx: number, min: number | null = null) => ({ idx, rule: { kind: 'int', min } }) as const;
/** `float` (§0.2); `null` when invalid. */
const floatAt = (idx: number) => ({ idx, rule: { kind: 'float' } }) as const;

/** The parsed value type of a rule: numbers may be `null`, everything else is a string. */
export type RuleValue<R> = R extends { kind: 'int' | 'float' } ? number | null : string;
export type Decoded<F extends Readonly<Record<string, FieldDef>>> = {
  -readonly [K in keyof F]: RuleValue<F[K]['rule']>;
};

/**
 * Applies a rule to a raw field: control characters are removed first (§0.1), then the cap (`s(n)`)
 * or validator. `clean` says the caller knows the field holds no control character (the whole
 * datagram has none), which saves a scan per field.
 */
export function applyRule(rule: FieldRule, raw: string, clean = false): string | number | null {
  const text = clean ? raw : stripControl(raw);
  switch (rule.kind) {
    case 'text':
      return truncateCodePoints(text, rule.cap);
    case 'uuid':
      return uuid(text);
    case 'ts':
      return ts(text);
    case 'int':
      return rule.min === null ? int(text) : intAtLeast(text, rule.min);
    case 'float':
      return float(text);
  }
}

/** One field of a layout: the key it becomes, its index, its rule. */
interface CompiledField {
  readonly key: string;
  readonly idx: number;
  readonly rule: FieldRule;
}

const COMPILED = new WeakMap<object, readonly CompiledField[]>();

/** A layout's fields in table order, computed once per layout (the parsers run per datagram). */
function compiled(defs: Readonly<Record<string, FieldDef>>): readonly CompiledField[] {
  let layout = COMPILED.get(defs);
  if (layout === undefined) {
    layout = Object.entries(defs).map(([key, def]) => ({ key, idx: def.idx, rule: def.rule }));
    COMPILED.set(defs, layout);
  }
  return layout;
}

/** The keys of a layout in table order (what `decodeInto` writes). */
export function layoutKeys(defs: Readonly<Record<string, FieldDef>>): string[] {
  return compiled(defs).map((f) => f.key);
}

/**
 * Decodes the fields a layout describes into `target` (in table order) and returns it; a missing field
 * counts as `''` (the splitter never returns one). Writing into one object instead of spreading
 * partial objects keeps the parsers allocation-light. `clean`: see `applyRule`.
 */
export function decodeInto<T extends object, F extends Readonly<Record<string, FieldDef>>>(
  target: T,
  fields: readonly string[],
  defs: F,
  clean = false,
): T & Decoded<F> {
  const out = target as Record<string, unknown>;
  for (const f of compiled(defs)) out[f.key] = applyRule(f.rule, fields[f.idx] ?? '', clean);
  return target as T & Decoded<F>;
}

// ---------------------------------------------------------------------------------------------
// §1 user-activity events

export { USER_EVENT_TYPES, type UserEventType };

/** Field 0, lower-case (compared ASCII-case-insensitively) → `messageType`. */
export const USER_EVENT_PREFIXES: ReadonlyMap<string, UserEventType> = new Map(
  USER_EVENT_TYPES.map((type) => [`/${type}/`, type]),
);

/** §1.2: 8 fields, field 7 (`message`) is free text. */
export const USER_EVENT_LAYOUT = {
  n: 8,
  freeText: [7],
  /** `messageType` comes from field 0 (the prefix; s(100) in §1.2, always within it). */
  messageTypeCap: 100,
  fields: {
    host: text(1, 100),
    command: text(2, 100),
    user_directory: text(3, 100),
    user_id: text(4, 100),
    origin: text(5, 200),
    context: text(6, 500),
    message: text(7, 1000),
  },
} as const;

// ---------------------------------------------------------------------------------------------
// §2 log events

export { LOG_SOURCES, type LogSource };

/** §2.2 common head (fields 0–7 of every log source; field 0 is the prefix → `source`). */
export const LOG_HEAD_FIELDS = {
  log_row: intAt(1, 1),
  ts_iso: tsAt(2),
  ts_local: tsAt(3),
  level: text(4, 20),
  host: text(5, 100),
  subsystem: text(6, 200),
  windows_user: text(7, 100),
} as const;

/** Field index of the exception text checked in §0.4 step 5 (proxy, repository, scheduler). */
export const EXCEPTION_FIELD = 9;
/** Scheduler fields dir, id, user of the *user triple* check (§0.4 step 5) and the `user_full` rule (§2.2). */
export const SCHEDULER_USER_TRIPLE = { dir: 10, id: 11, user: 12 } as const;
/** Scheduler field 12 (`user_full`) cap. */
export const SCHEDULER_USER_FULL_CAP = 200;
/** Engine performance field 8: `proxy_session_id` (uuid, raw `0` → `''` and `event_activity_source = non-user`). */
export const QIX_PERF_PROXY_SESSION_FIELD = 8;

const PROXY_REPOSITORY_FIELDS = {
  message: text(8, 1000),
  exception_message: text(9, 1000),
  user_directory: text(10, 100),
  user_id: text(11, 100),
  command: text(12, 200),
  result_code: text(13, 50),
  origin: text(14, 200),
  context: text(15, 200),
} as const;

/**
 * Per source: prefix, field count `n`, free-text fields (ascending) and the fields after the head.
 * Derived keys (`user_full`, engine-performance `proxy_session_id` / `event_activity_source`) are
 * built by the parser from the indices above.
 */
export const LOG_LAYOUTS = {
  'qseow-engine': {
    prefix: '/qseow-engine/',
    n: 19,
    freeText: [8],
    fields: {
      message: text(8, 1000),
      proxy_session_id: uuidAt(9),
      user_directory: text(10, 100),
      user_id: text(11, 100),
      engine_ts: text(12, 50),
      process_id: uuidAt(13),
      engine_exe_version: text(14, 50),
      server_started: text(15, 50),
      entry_type: text(16, 50),
      session_id: uuidAt(17),
      app_id: uuidAt(18),
    },
  },
  'qseow-proxy': { prefix: '/qseow-proxy/', n: 16, freeText: [8, 9], fields: PROXY_REPOSITORY_FIELDS },
  'qseow-repository': { prefix: '/qseow-repository/', n: 16, freeText: [8, 9], fields: PROXY_REPOSITORY_FIELDS },
  'qseow-scheduler': {
    prefix: '/qseow-scheduler/',
    n: 18,
    freeText: [8, 9, 13, 14],
    fields: {
      message: text(8, 1000),
      exception_message: text(9, 1000),
      user_directory: text(10, 100),
      user_id: text(11, 100),
      // 12: user_full, see SCHEDULER_USER_TRIPLE
      task_name: text(13, 200),
      app_name: text(14, 200),
      task_id: uuidAt(15),
      app_id: uuidAt(16),
      execution_id: uuidAt(17),
    },
  },
  'qseow-qix-perf': {
    prefix: '/qseow-qix-perf/',
    n: 26,
    freeText: [],
    fields: {
      // 8: proxy_session_id + event_activity_source, see QIX_PERF_PROXY_SESSION_FIELD
      user_directory: text(9, 100),
      user_id: text(10, 100),
      engine_ts: text(11, 50),
      session_id: uuidAt(12),
      app_id: uuidAt(13),
      request_id: intAt(14, 0),
      method: text(15, 100),
      process_time: floatAt(16),
      work_time: floatAt(17),
      lock_time: floatAt(18),
      validate_time: floatAt(19),
      traverse_time: floatAt(20),
      handle: intAt(21),
      object_id: text(22, 100),
      net_ram: intAt(23, 0),
      peak_ram: intAt(24, 0),
      object_type: text(25, 100),
    },
  },
} as const;

/** Field 0, lower-case (compared ASCII-case-insensitively) → log source. */
export const LOG_SOURCE_BY_PREFIX: ReadonlyMap<string, LogSource> = new Map(
  LOG_SOURCES.map((source) => [LOG_LAYOUTS[source].prefix, source]),
);

/** Longest known prefix; a longer field 0 is unknown without further work. */
export const MAX_PREFIX_LENGTH = Math.max(
  ...[...USER_EVENT_PREFIXES.keys()].map((p) => p.length),
  ...[...LOG_SOURCE_BY_PREFIX.keys()].map((p) => p.length),
);

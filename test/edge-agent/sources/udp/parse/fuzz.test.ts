/**
 * Fuzzing the datagram parsers with fast-check: random bytes, random UTF-16 text, valid prefixes with
 * random tails, the spec examples with fields mutated / inserted / deleted / `;` injected / made huge /
 * corrupted into invalid UTF-8, and a model-based property on well-formed datagrams. Invariants: a
 * parser never throws; `ok: true` events have exactly their keys, every string field within its cap
 * and free of control characters, every number valid; `ok: false` carries a reason and a clean preview.
 */
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { sanitiseField, stripControl } from '../../../../../edge-agent/sources/common/sanitise.js';
import {
  float,
  int,
  intAtLeast,
  ts,
  tsToInstantMs,
  uuid,
} from '../../../../../edge-agent/sources/common/validators.js';
import { type ParseResult, PREVIEW_LENGTH } from '../../../../../edge-agent/sources/udp/parse/common.js';
import {
  type FieldDef,
  type FieldRule,
  LOG_HEAD_FIELDS,
  LOG_LAYOUTS,
  LOG_SOURCES,
  SCHEDULER_USER_FULL_CAP,
  USER_EVENT_LAYOUT,
  USER_EVENT_TYPES,
} from '../../../../../edge-agent/sources/udp/parse/layouts.js';
import { type LogEvent, parseLogEvent } from '../../../../../edge-agent/sources/udp/parse/log-event.js';
import { parseUserEvent, type UserEvent } from '../../../../../edge-agent/sources/udp/parse/user-event.js';
import { LOG_EXAMPLES, USER_EXAMPLES } from './fixtures.js';

const RECEIVED_AT = 1_710_244_800_000;
const LOWER_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const GRIN = '\u{1F600}';

/** Independent of the module under test. */
const CONTROL = /[\u0000-\u001f\u007f]/;
const hasNoControl = (text: string): boolean => !CONTROL.test(text);
const codePointLength = (text: string): number => Array.from(text).length;

let datagrams = 0;
let okUser = 0;
let okLog = 0;
const started = performance.now();

afterAll(() => {
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `fuzz: ${datagrams} datagrams (each through both parsers; ok: user ${okUser}, log ${okLog}) in ${seconds.toFixed(1)} s`,
  );
});

// ---------------------------------------------------------------------------------------------
// Invariants

/** Plain assertion: `expect` costs microseconds per call, too much for ~60 checks × 100,000 datagrams. */
function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`invariant violated: ${what}`);
}

function sameKeys(event: object, keys: string[]): void {
  const got = Object.keys(event).sort().join(',');
  const want = keys.sort().join(',');
  check(got === want, `keys ${got} !== ${want}`);
}

function expectCleanText(value: unknown, cap: number, what: string): void {
  check(typeof value === 'string', `${what} is a string`);
  const text = String(value);
  check(hasNoControl(text), `${what} has no control characters`);
  check(codePointLength(text) <= cap, `${what}: ${codePointLength(text)} > ${cap}`);
}

function expectRule(value: unknown, rule: FieldRule, what: string): void {
  switch (rule.kind) {
    case 'text':
      expectCleanText(value, rule.cap, what);
      return;
    case 'uuid':
      check(value === '' || (typeof value === 'string' && LOWER_UUID.test(value)), `${what} uuid`);
      return;
    case 'ts':
      check(typeof value === 'string' && ts(value) === value && hasNoControl(value), `${what} ts`);
      return;
    case 'int':
      if (value === null) return;
      check(
        typeof value === 'number' && Number.isInteger(value) && Math.abs(value) <= 2 ** 53 && !Object.is(value, -0),
        `${what} int`,
      );
      if (rule.min !== null) check(Number(value) >= rule.min, `${what} ≥ ${rule.min}`);
      return;
    case 'float':
      if (value === null) return;
      check(typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0), `${what} float`);
      return;
  }
}

function expectFields(event: object, defs: Readonly<Record<string, FieldDef>>, what: string): void {
  const record = new Map(Object.entries(event));
  for (const [key, def] of Object.entries(defs)) expectRule(record.get(key), def.rule, `${what}.${key}`);
}

function expectFailure(r: { ok: false; reason: string; detail: string; preview: string }, text: string): void {
  check(r.reason === 'unknown_prefix' || r.reason === 'malformed', `reason ${r.reason}`);
  check(!r.detail.startsWith('internal parser error'), r.detail);
  check(r.detail.length > 0 && hasNoControl(r.detail), 'clean detail');
  check(r.preview === sanitiseField(text, PREVIEW_LENGTH), 'preview = first 512 sanitised characters');
  check(hasNoControl(r.preview) && codePointLength(r.preview) <= PREVIEW_LENGTH, 'clean preview within 512');
}

function checkUser(r: ParseResult<UserEvent>, text: string): void {
  if (!r.ok) {
    expectFailure(r, text);
    return;
  }
  okUser++;
  const e = r.event;
  const keys = ['messageType', ...Object.keys(USER_EVENT_LAYOUT.fields), 'user_full', 'receivedAtMs'];
  if (e.appId !== undefined) keys.push('appId');
  if (e.uaText !== undefined) keys.push('uaText');
  sameKeys(e, keys);
  check(USER_EVENT_TYPES.includes(e.messageType), 'messageType');
  expectFields(e, USER_EVENT_LAYOUT.fields, 'user');
  check(
    e.user_full === (e.user_directory !== '' && e.user_id !== '' ? `${e.user_directory}\\${e.user_id}` : ''),
    'user_full',
  );
  if (e.appId !== undefined) check(LOWER_UUID.test(e.appId) && e.context.startsWith('/app/'), 'appId');
  if (e.uaText !== undefined) {
    expectCleanText(e.uaText, USER_EVENT_LAYOUT.fields.message.rule.cap, 'uaText');
    check(e.uaText.length > 0 && !e.uaText.includes("'"), 'uaText non-empty without quote');
  }
  check(e.receivedAtMs === RECEIVED_AT, 'receivedAtMs');
}

function checkLog(r: ParseResult<LogEvent>, text: string): void {
  if (!r.ok) {
    expectFailure(r, text);
    return;
  }
  okLog++;
  const e = r.event;
  check(LOG_SOURCES.includes(e.source), 'source');
  const layout = LOG_LAYOUTS[e.source];
  const keys = [
    'source',
    ...Object.keys(LOG_HEAD_FIELDS),
    ...Object.keys(layout.fields),
    'user_full',
    'eventTimeMs',
    'receivedAtMs',
  ];
  if (e.source === 'qseow-qix-perf') keys.push('proxy_session_id', 'event_activity_source');
  sameKeys(e, keys);
  expectFields(e, LOG_HEAD_FIELDS, e.source);
  expectFields(e, layout.fields, e.source);
  const full = e.user_directory !== '' && e.user_id !== '' ? `${e.user_directory}\\${e.user_id}` : '';
  check(
    e.user_full === (e.source === 'qseow-scheduler' ? sanitiseField(full, SCHEDULER_USER_FULL_CAP) : full),
    'user_full',
  );
  check(e.eventTimeMs === (tsToInstantMs(e.ts_iso) ?? tsToInstantMs(e.ts_local) ?? RECEIVED_AT), 'eventTimeMs');
  check(e.receivedAtMs === RECEIVED_AT, 'receivedAtMs');
  if (e.source === 'qseow-qix-perf') {
    check(e.proxy_session_id === '' || LOWER_UUID.test(e.proxy_session_id), 'proxy_session_id');
    check(
      e.event_activity_source === 'user' || (e.event_activity_source === 'non-user' && e.proxy_session_id === ''),
      'event_activity_source',
    );
  }
}

/** Both parsers on one datagram; `text` is what the datagram decodes to. A throw fails the property. */
function checkBoth(datagram: Buffer | string, text: string): void {
  datagrams++;
  checkUser(parseUserEvent(datagram, RECEIVED_AT), text);
  checkLog(parseLogEvent(datagram, RECEIVED_AT), text);
}

// ---------------------------------------------------------------------------------------------
// Generators

const codeUnits = (maxLength: number): fc.Arbitrary<string> =>
  fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength }).map((units) => String.fromCharCode(...units));

const pad = (v: number, w: number): string => String(Math.abs(v)).padStart(w, '0');
const timestamp = fc
  .tuple(
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 }),
    fc.integer({ min: 0, max: 24 }),
    fc.integer({ min: 0, max: 60 }),
    fc.integer({ min: -1440, max: 1440 }),
    fc.constantFrom('compact', 'extended', 'local', 'Z'),
  )
  .map(([y, mo, d, h, mi, off, form]) => {
    const o = `${off < 0 ? '-' : '+'}${pad(Math.trunc(off / 60), 2)}${off % 2 === 0 ? ':' : ''}${pad(off % 60, 2)}`;
    if (form === 'compact')
      return `${pad(y, 4)}${pad(mo, 2)}${pad(d, 2)}T${pad(h, 2)}${pad(mi, 2)}${pad(mi, 2)}.123${o}`;
    if (form === 'local') return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)} ${pad(h, 2)}:${pad(mi, 2)}:00,000`;
    return `${pad(y, 4)}-${pad(mo, 2)}-${pad(d, 2)}T${pad(h, 2)}:${pad(mi, 2)}:59.999${form === 'Z' ? 'Z' : o}`;
  });

/** Field values: short random text of every kind plus the tokens the parsers look for. */
const fieldText: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 20 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
  { weight: 2, arbitrary: codeUnits(20) },
  {
    weight: 2,
    arbitrary: fc
      .uuid()
      .chain((u) => fc.constantFrom(u, u.toUpperCase(), `/app/${u}`, `/app/${u}?x=1`, `/app/${u}/sheet`)),
  },
  { weight: 2, arbitrary: timestamp },
  { weight: 1, arbitrary: fc.integer().map(String) },
  { weight: 1, arbitrary: fc.bigInt({ min: -(2n ** 64n), max: 2n ** 64n }).map(String) },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: fc.float({ noNaN: true }).map((x) => x.toFixed(3)) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      '',
      '0',
      '-1',
      '\\',
      'LAB\\goran',
      'a\\b\\c',
      'System.Exception: x',
      'System.Data.DataException: Host=db1',
      'Error',
      "UserAgent: 'Mozilla/5.0 (X11; Linux)'",
      'UserAgent:',
      "''",
      '\t\r\n\u0000\u007f',
      '\uD83D',
      '\uDE00',
      GRIN,
      '\uFFFD',
      '/app/',
      'constructor',
      '__proto__',
    ),
  },
);

const ALL_EXAMPLES: readonly string[] = [...USER_EXAMPLES, ...LOG_EXAMPLES];
const PREFIXES = [
  '/qseow-proxy-session/',
  '/qseow-proxy-connection/',
  ...LOG_SOURCES.map((src) => LOG_LAYOUTS[src].prefix),
];

type Mutation =
  | { kind: 'replace' | 'insert'; at: number; value: string }
  | { kind: 'delete'; at: number }
  | { kind: 'semicolon'; at: number; pos: number; count: number }
  | { kind: 'huge'; at: number; unit: string; size: number }
  | { kind: 'case'; seed: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: fieldText }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), value: fieldText }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('semicolon' as const),
      at: fc.nat(),
      pos: fc.nat(),
      count: fc.integer({ min: 1, max: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('huge' as const),
      at: fc.nat(),
      unit: fc.constantFrom('A', ';', GRIN, '\n', 'é', 'System.Exception', '\\'),
      size: fc.constantFrom(600, 1100, 5000, 70_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('case' as const), seed: fc.nat() }) },
);

function mutate(datagram: string, mutations: readonly Mutation[]): string {
  const parts = datagram.split(';');
  for (const m of mutations) {
    const at = 'at' in m ? m.at % Math.max(parts.length, 1) : 0;
    switch (m.kind) {
      case 'replace':
        parts[at] = m.value;
        break;
      case 'insert':
        parts.splice(at, 0, m.value);
        break;
      case 'delete':
        parts.splice(at, 1);
        break;
      case 'semicolon': {
        const field = parts[at] ?? '';
        const pos = m.pos % (field.length + 1);
        parts[at] = field.slice(0, pos) + ';'.repeat(m.count) + field.slice(pos);
        break;
      }
      case 'huge':
        parts[at] = m.unit.repeat(Math.ceil(m.size / m.unit.length));
        break;
      case 'case':
        parts[0] = [...(parts[0] ?? '')].map((c, i) => ((m.seed >> (i % 30)) & 1 ? c.toUpperCase() : c)).join('');
        break;
    }
  }
  return parts.join(';');
}

/** Byte-level corruption: invalid UTF-8 sequences and random bytes inserted at random positions. */
const corruption = fc.array(
  fc.record({
    pos: fc.nat(),
    bytes: fc.oneof(
      fc.constantFrom(
        Uint8Array.of(0xff),
        Uint8Array.of(0xc0, 0xaf),
        Uint8Array.of(0xe2, 0x82),
        Uint8Array.of(0xf0, 0x9f, 0x98),
        Uint8Array.of(0xed, 0xa0, 0x80),
        Uint8Array.of(0x80),
        Uint8Array.of(0x3b),
        Uint8Array.of(0x00),
      ),
      fc.uint8Array({ minLength: 1, maxLength: 4 }),
    ),
  }),
  { maxLength: 4 },
);

function corrupt(text: string, edits: readonly { pos: number; bytes: Uint8Array }[]): Buffer {
  let buf = Buffer.from(text, 'utf8');
  for (const { pos, bytes } of edits) {
    const at = pos % (buf.length + 1);
    buf = Buffer.concat([buf.subarray(0, at), bytes, buf.subarray(at)]);
  }
  return buf;
}

const FUZZ_TIMEOUT = 120_000;

// ---------------------------------------------------------------------------------------------

describe('fuzz: never throws, invariants hold', () => {
  it(
    'random bytes',
    () => {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => {
          const buf = Buffer.from(bytes);
          checkBoth(buf, buf.toString('utf8'));
        }),
        { numRuns: 15_000 },
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'random UTF-16 text (lone surrogates, control characters, any code point)',
    () => {
      fc.assert(
        fc.property(
          fc.oneof(codeUnits(300), fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ maxLength: 300 })),
          (text) => {
            checkBoth(text, text);
          },
        ),
        { numRuns: 15_000 },
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'valid prefixes (any case) with random fields',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...PREFIXES),
          fc.nat(),
          fc.array(fieldText, { maxLength: 40 }),
          fc.boolean(),
          (prefix, seed, fields, asBytes) => {
            const cased = [...prefix].map((c, i) => ((seed >> (i % 30)) & 1 ? c.toUpperCase() : c)).join('');
            const text = [cased, ...fields].join(';');
            checkBoth(
              asBytes ? Buffer.from(text, 'utf8') : text,
              asBytes ? Buffer.from(text, 'utf8').toString('utf8') : text,
            );
          },
        ),
        { numRuns: 25_000 },
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'example messages with fields mutated, inserted, deleted, `;` injected, made huge, bytes corrupted',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...ALL_EXAMPLES),
          fc.array(mutation, { minLength: 1, maxLength: 5 }),
          fc.option(corruption, { freq: 4 }),
          (example, mutations, edits) => {
            const text = mutate(example, mutations);
            if (edits === null) {
              checkBoth(text, text);
            } else {
              const buf = corrupt(text, edits);
              checkBoth(buf, buf.toString('utf8'));
            }
          },
        ),
        { numRuns: 40_000 },
      );
    },
    FUZZ_TIMEOUT,
  );
});

describe('fuzz: model of well-formed datagrams', () => {
  /** A field without `;` (so the datagram has exactly N fields). */
  const field = fieldText.map((t) => t.replaceAll(';', ''));

  it(
    'log events: every field lands at its index with its rule applied',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...LOG_SOURCES),
          fc.array(field, { minLength: 26, maxLength: 26 }),
          (source, values) => {
            const layout = LOG_LAYOUTS[source];
            const fields = [layout.prefix, ...values.slice(1, layout.n)];
            const text = fields.join(';');
            datagrams++;
            const r = parseLogEvent(text, RECEIVED_AT);
            checkLog(r, text);
            if (!r.ok) throw new Error(`${r.reason}: ${r.detail}`);
            const event = new Map(Object.entries(r.event));
            for (const defs of [LOG_HEAD_FIELDS, layout.fields] as const) {
              for (const [key, def] of Object.entries<FieldDef>(defs)) {
                const raw = stripControl(fields[def.idx] ?? '');
                const rule = def.rule;
                const want =
                  rule.kind === 'text'
                    ? sanitiseField(raw, rule.cap)
                    : rule.kind === 'uuid'
                      ? uuid(raw)
                      : rule.kind === 'ts'
                        ? ts(raw)
                        : rule.kind === 'float'
                          ? float(raw)
                          : rule.min === null
                            ? int(raw)
                            : intAtLeast(raw, rule.min);
                // The scheduler may fill directory and user id from field 12 (checked by checkLog's user_full rule).
                const derived = source === 'qseow-scheduler' && (key === 'user_directory' || key === 'user_id');
                if (!derived) check(Object.is(event.get(key), want), `${source}.${key}`);
              }
            }
          },
        ),
        { numRuns: 10_000 },
      );
    },
    FUZZ_TIMEOUT,
  );

  it(
    'user events: every field lands at its index',
    () => {
      fc.assert(
        fc.property(
          fc.constantFrom(...USER_EVENT_TYPES),
          fc.array(field, { minLength: 8, maxLength: 8 }),
          (type, values) => {
            const fields = [`/${type}/`, ...values.slice(1)];
            const text = fields.join(';');
            datagrams++;
            const r = parseUserEvent(text, RECEIVED_AT);
            checkUser(r, text);
            if (!r.ok) throw new Error(`${r.reason}: ${r.detail}`);
            const event = new Map(Object.entries(r.event));
            for (const [key, def] of Object.entries<FieldDef>(USER_EVENT_LAYOUT.fields)) {
              if (def.rule.kind === 'text')
                check(event.get(key) === sanitiseField(fields[def.idx] ?? '', def.rule.cap), key);
            }
            check(r.event.messageType === type, 'messageType');
          },
        ),
        { numRuns: 10_000 },
      );
    },
    FUZZ_TIMEOUT,
  );
});

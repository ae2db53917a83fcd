/**
 * The content rules of docs/audit-api.md that check one payload member (payload.context and the
 * per-type rules), and the messages of the `source` rules, written once as the tests' oracle: the edge-by-edge test
 * (test/shared/audit/payload.test.ts) takes its edges from here, and the fuzz test
 * (test/shared/audit/fuzz.test.ts) its generators of valid and broken members.
 *
 * Deliberately independent of shared/audit/envelope.ts: a rule changed there without the docs and
 * this table fails the tests.
 */
import { randomUUID } from 'node:crypto';

/** What a member must hold. Lengths are Unicode code points. */
export type Check =
  | { kind: 'text'; min: number; max: number; nullable: boolean }
  | { kind: 'absoluteUri'; max: number }
  /** A finite number in [min, max], or in (above, max] when `above` is set; no upper bound without `max`. */
  | { kind: 'number'; above?: number; min?: number; max?: number }
  | { kind: 'dateTime' }
  | { kind: 'dateTimeOrNull' }
  | { kind: 'numberStringOrNull' }
  | { kind: 'booleanOrNull' }
  | { kind: 'integerOrNull' }
  | { kind: 'uuid' }
  | { kind: 'list'; max: number };

export interface MemberRule {
  /** The envelope type whose payload has this member; undefined: every type (payload.context). */
  type: string | undefined;
  /** From the envelope root, e.g. ['payload', 'event', 'crop', 'width']. */
  path: readonly string[];
  /** Required whenever its parent object is sent. */
  required: boolean;
  check: Check;
  /** The 422 entry's message when the value breaks the rule. */
  message: string;
  /** The 422 entry's message when a required member is missing. */
  requiredMessage?: string;
}

const dotted = (path: readonly string[]) => path.join('.');
export const pointer = (path: readonly string[]) => `/${path.join('/')}`;

/** The message of a broken `check` at `path`, as docs/audit-api.md lists it. */
function messageOf(path: readonly string[], check: Check): string {
  const at = dotted(path);
  switch (check.kind) {
    case 'text':
      return `${at} must be a string of ${check.min > 0 ? `${check.min} to ${check.max}` : `at most ${check.max}`} characters${check.nullable ? ', or null' : ''}`;
    case 'absoluteUri':
      return `${at} must be an absolute URI (RFC 3986) of 1 to ${check.max} characters`;
    case 'number':
      if (check.max === undefined) return `${at} must be a finite number of at least ${check.min ?? 0}`;
      return check.above !== undefined
        ? `${at} must be a number greater than ${check.above} and at most ${check.max}`
        : `${at} must be a number from ${check.min ?? 0} to ${check.max}`;
    case 'dateTime':
      return `${at} must be an RFC 3339 date-time with a zone`;
    case 'dateTimeOrNull':
      return `${at} must be an RFC 3339 date-time with a zone, or null`;
    case 'numberStringOrNull':
      return `${at} must be a number, a string or null`;
    case 'booleanOrNull':
      return `${at} must be a boolean or null`;
    case 'integerOrNull':
      return `${at} must be an integer or null`;
    case 'uuid':
      return `${at} must be a UUID`;
    case 'list':
      return `${at} must be a list of at most ${check.max} items`;
  }
}

function member(type: string | undefined, path: readonly string[], check: Check, required = false): MemberRule {
  // A member of a nested object (payload.event.crop.width) is required only when that object is sent.
  const why = path.length > 3 ? `is required when ${dotted(path.slice(0, -1))} is sent` : 'is required for this type';
  return {
    type,
    path,
    required,
    check,
    message: messageOf(path, check),
    ...(required ? { requiredMessage: `${dotted(path)} ${why}` } : {}),
  };
}

const context = (name: string, max: number) =>
  member(undefined, ['payload', 'context', name], { kind: 'text', min: 0, max, nullable: false });
const event = (type: string, name: string, check: Check, required = false) =>
  member(type, ['payload', 'event', name], check, required);
const crop = (name: string, check: Check, required = false) =>
  member('screenshot.url.received', ['payload', 'event', 'crop', name], check, required);
const textOrNull = (max: number): Check => ({ kind: 'text', min: 0, max, nullable: true });
const CROP_SIZE: Check = { kind: 'number', above: 0, max: 32_767 };
const CROP_OFFSET: Check = { kind: 'number', min: 0, max: 32_767 };

/** Every member rule of docs/audit-api.md's content rules. */
export const MEMBER_RULES: readonly MemberRule[] = [
  member(undefined, ['payload', 'context', 'appId'], { kind: 'uuid' }),
  context('appName', 64),
  context('sheetId', 64),
  context('sheetName', 64),
  context('user', 256),
  context('userAgent', 512),

  event('screenshot.url.received', 'screenshotUrl', { kind: 'absoluteUri', max: 2048 }, true),
  event('screenshot.url.received', 'selectionTxnId', { kind: 'uuid' }, true),
  event('screenshot.url.received', 'objectId', textOrNull(64)),
  crop('width', CROP_SIZE, true),
  crop('height', CROP_SIZE, true),
  ...['top', 'left', 'scrollTop', 'scrollAreaOffsetY', 'renderingOverflow'].map((name) => crop(name, CROP_OFFSET)),

  event('event.unsupported.visualization', 'vizType', { kind: 'text', min: 1, max: 64, nullable: false }, true),
  event('event.unsupported.visualization', 'selectionTxnId', { kind: 'uuid' }, true),
  ...['objectId', 'title', 'trigger'].map((name) => event('event.unsupported.visualization', name, textOrNull(64))),
  event('event.unsupported.visualization', 'dataStateId', { kind: 'numberStringOrNull' }),

  event('object.view.duration', 'objectId', { kind: 'text', min: 1, max: 64, nullable: false }, true),
  event('object.view.duration', 'duration', { kind: 'number', min: 0 }, true),
  event('object.view.duration', 'leftAt', { kind: 'dateTime' }, true),
  ...['selectionTxnId', 'enterSelectionTxnId', 'leaveSelectionTxnId'].map((name) =>
    event('object.view.duration', name, textOrNull(36)),
  ),
  event('object.view.duration', 'enteredAt', { kind: 'dateTimeOrNull' }),
  event('object.view.duration', 'visible', { kind: 'booleanOrNull' }),
  event('object.view.duration', 'dataStateId', { kind: 'integerOrNull' }),

  event('app.model.validated', 'selectionTxnId', { kind: 'uuid' }, true),
  event('app.model.validated', 'dataStateId', { kind: 'integerOrNull' }),
  event('app.model.validated', 'captureScheduled', { kind: 'booleanOrNull' }),

  event('selection.state.changed', 'selectionTxnId', { kind: 'uuid' }, true),
  event('selection.state.changed', 'details', { kind: 'list', max: 500 }, true),
];

/**
 * The structural (400) messages for `source`, at instancePath /source or /source/<member>: every
 * member is optional, and only a present one is checked.
 */
export const SOURCE_MESSAGES = {
  notObject: 'must be object',
  kind: 'must be "qlik-sense-extension"',
  name: 'must be "audit-qs"',
  versionEmpty: 'must be a non-empty string',
  versionNotString: 'must be string',
} as const;

/** The types with payload.event rules. */
export const RULED_TYPES: readonly string[] = [
  ...new Set(MEMBER_RULES.flatMap((r) => (r.type === undefined ? [] : [r.type]))),
];

/**
 * Number literals JSON.parse makes ±Infinity: refused wherever a rule checks a number, with that
 * rule's message (a JSON value can never be a number that is not finite, except these).
 */
export const OVERFLOWING_NUMBERS = ['1e400', '-1e400'] as const;

/** Does the check accept some numbers, so that an overflowing literal must be refused by it? */
export function checksNumber(check: Check): boolean {
  return check.kind === 'number' || check.kind === 'integerOrNull' || check.kind === 'numberStringOrNull';
}

/** One code point, two UTF-16 units: a length counted in UTF-16 units would go wrong on it. */
export const EMOJI = '\u{1F600}';
export const ascii = (n: number): string => 'a'.repeat(n);
export const emoji = (n: number): string => EMOJI.repeat(n);

/** An absolute URI of exactly `n` characters. */
export function uriOf(n: number): string {
  const head = 'https://shots.example.com/';
  return head + 'p'.repeat(n - head.length);
}

/** Values on both sides of a check's edges (a missing member is not among them). */
export function edgeValues(check: Check): { valid: unknown[]; invalid: unknown[] } {
  const wrongTypes = [true, {}, ['x']];
  switch (check.kind) {
    case 'text': {
      const { min, max, nullable } = check;
      return {
        valid: [
          ...(min === 0 ? [''] : []),
          'x',
          ascii(max),
          emoji(max),
          `${emoji(max - 1)}a`,
          ...(nullable ? [null] : []),
        ],
        invalid: [
          ...(min > 0 ? [''] : []),
          ascii(max + 1),
          emoji(max + 1),
          `${emoji(max)}a`,
          ...(nullable ? [] : [null]),
          7,
          { directory: 'LAB', id: 'goran' },
          ...wrongTypes,
        ],
      };
    }
    case 'absoluteUri':
      return {
        valid: [
          'https://a.example.com/x.png',
          'http://10.0.0.7:8080/print?id=1&w=640#top',
          `urn:uuid:${randomUUID()}`,
          'https://[::1]/x',
          'https://a.example.com/%C3%BC.png',
          uriOf(check.max),
        ],
        invalid: [
          '',
          uriOf(check.max + 1),
          '/relative.png',
          'shots.example.com/a.png',
          'https://a.example.com/a b.png',
          'https://a.example.com/ü.png',
          'https://a.example.com/x.png\n',
          ' https://a.example.com/x.png',
          'https://a.example.com:99999/x',
          'https://',
          'https://a.example.com/x#a#b',
          null,
          42,
          ...wrongTypes,
        ],
      };
    case 'number': {
      const { max } = check;
      const min = check.above ?? check.min ?? 0;
      // Without a maximum the largest finite number is an edge; with one, just above it.
      const top = max === undefined ? [Number.MAX_VALUE] : [max];
      const overTop = max === undefined ? [] : [max + 0.01, max + 1];
      if (check.above !== undefined)
        return {
          valid: [min + 0.001, 1, 640.5, ...top],
          invalid: [min, min - 1, ...overTop, '100', null, ...wrongTypes],
        };
      return {
        valid: [min, min + 0.5, 12, ...top],
        invalid: [min - 0.5, min - 1, ...overTop, '0', null, ...wrongTypes],
      };
    }
    case 'dateTime':
    case 'dateTimeOrNull': {
      const nullable = check.kind === 'dateTimeOrNull';
      return {
        valid: [
          ...(nullable ? [null] : []),
          '2026-11-22T10:15:02Z',
          '2026-11-22T10:15:02.123456+05:30',
          '2028-02-29t23:59:59-08:00',
        ],
        invalid: [
          ...(nullable ? [] : [null]),
          '',
          '2026-11-22T10:15:02',
          '2026-11-22 10:15:02Z',
          '2026-02-30T10:00:00Z',
          '2026-11-22T24:00:00Z',
          'yesterday',
          1_732_270_502_000,
          ...wrongTypes,
        ],
      };
    }
    case 'numberStringOrNull':
      return {
        valid: [null, 0, -3, 17.5, 1_732_270_502_000, '', 'ds-17', emoji(100)],
        invalid: wrongTypes,
      };
    case 'booleanOrNull':
      return { valid: [true, false, null], invalid: ['true', 0, 1, {}, []] };
    case 'integerOrNull':
      return { valid: [null, 0, -5, 1_732_270_502_000, Number.MAX_SAFE_INTEGER], invalid: [1.5, '17', ...wrongTypes] };
    case 'uuid':
      return {
        valid: [randomUUID(), randomUUID().toUpperCase()],
        invalid: ['nope', '', `${randomUUID()}x`, 7, null, ...wrongTypes],
      };
    case 'list':
      return {
        valid: [[], new Array<number>(check.max).fill(0)],
        invalid: [new Array<number>(check.max + 1).fill(0), 'x', {}, null],
      };
  }
}

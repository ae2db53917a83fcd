/**
 * The audit event envelope (audit-event-api.md): its structural schema (violations → 400 "Schema
 * validation failed") and its content rules (violations → 422 "One or more constraint
 * violations"). Both are JSON schemas (TypeBox) checked by shared/util/schema-check.ts with all
 * errors reported and no type coercion, as ajv would (which it replaced, to keep the audit Lambda small).
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { isRecord } from '../util/records.js';
import { lazyChecker, type SchemaError } from '../util/schema-check.js';

/** One validator for every id: any UUID version or variant (platform-formats.md §0.2). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** RFC 3339 date-time with a zone (Z or ±hh:mm): `2026-11-22T10:15:22.123Z`. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

export function isRfc3339(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  // Each member read on its own (no slice, map or list per call: this runs for every time of every
  // request and of every delivered event).
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const daysInMonth =
    month === 2 ? (leap ? 29 : 28) : month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
  const zoneOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth &&
    Number(m[4]) <= 23 &&
    Number(m[5]) <= 59 &&
    Number(m[6]) <= 60 &&
    zoneOk
  );
}

/** One URI character (RFC 3986 §2: unreserved, reserved but "#", "[" and "]", or a percent-encoded octet). */
const URI_CHAR = "(?:[A-Za-z0-9\\-._~!$&'()*+,;=:@/?]|%[0-9A-Fa-f]{2})";
/** RFC 3986 §3: scheme ":" hier-part [ "?" query ] [ "#" fragment ]; brackets only before the fragment (IP literals). */
const ABSOLUTE_URI = new RegExp(`^[A-Za-z][A-Za-z0-9+.-]*:(?:${URI_CHAR}|[\\[\\]])*(?:#${URI_CHAR}*)?$`);

/**
 * An absolute URI: a scheme, only characters RFC 3986 allows (no spaces, no raw non-ASCII), and a
 * URL that parses (a real host and port where the scheme has them). The WHATWG parser alone is too
 * lenient: it drops tabs and newlines and trims spaces instead of refusing them.
 */
export function isAbsoluteUri(text: string): boolean {
  return ABSOLUTE_URI.test(text) && URL.canParse(text);
}

/** The values the audit client sends in `source` (our decision; the spec leaves them open). */
export const SOURCE_KIND = 'qlik-sense-extension';
export const SOURCE_NAME = 'audit-qs';

/** A constant without Type.Literal's extra `type`, so a wrong value is one error (`must be "…"`), not two. */
const exactly = <T extends string>(value: T) => Type.Unsafe<T>({ const: value });

export const AuditEnvelopeSchema = Type.Object(
  {
    schemaVersion: Type.Integer({ minimum: 1 }),
    eventId: Type.String(),
    timestamp: Type.String({ format: 'rfc3339' }),
    type: Type.String(),
    payload: Type.Record(Type.String(), Type.Unknown()),
    correlationId: Type.Optional(Type.String()),
    // Every member of `source` is optional; only a present one is checked (the audit client may send `{}`).
    source: Type.Optional(
      Type.Object({
        kind: Type.Optional(exactly(SOURCE_KIND)),
        name: Type.Optional(exactly(SOURCE_NAME)),
        version: Type.Optional(Type.String({ minLength: 1 })),
      }),
    ),
  },
  // Unknown top-level members are accepted and ignored, so a newer client's additions do not break ingestion.
  { additionalProperties: true },
);
export type AuditEnvelope = Static<typeof AuditEnvelopeSchema>;

/** The audit event types we know; any `event.<name>` is accepted as well. */
export const KNOWN_TYPES = [
  'navigation.sheet.loaded',
  'selection.state.changed',
  'object.visibility.changed',
  'object.view.duration',
  'app.model.validated',
  'screenshot.url.received',
  'event.bookmark',
  'event.unsupported.visualization',
  'audit.event',
] as const;
const CUSTOM_TYPE = /^event\.[A-Za-z0-9_.:-]+$/;

export function isKnownType(type: string): boolean {
  return (KNOWN_TYPES as readonly string[]).includes(type) || CUSTOM_TYPE.test(type);
}

/**
 * Each content rule carries the message a client sees (`x-message`): the member's path and its rule.
 * Lengths are counted in Unicode code points (ajv's default `unicode: true`), so an emoji is one.
 */
const uuid = (path: string) => Type.String({ pattern: UUID_PATTERN, 'x-message': `${path} must be a UUID` });
/** A string of `min`..`max` code points. */
const text = (path: string, max: number, min = 0) =>
  Type.String({
    ...(min > 0 ? { minLength: min } : {}),
    maxLength: max,
    'x-message':
      min > 0
        ? `${path} must be a string of ${min} to ${max} characters`
        : `${path} must be a string of at most ${max} characters`,
  });
/** A string of at most `max` code points, or null. */
const textOrNull = (path: string, max: number) =>
  Type.Unsafe<string | null>({
    type: ['string', 'null'],
    maxLength: max,
    'x-message': `${path} must be a string of at most ${max} characters, or null`,
  });
const booleanOrNull = (path: string) =>
  Type.Unsafe<boolean | null>({ type: ['boolean', 'null'], 'x-message': `${path} must be a boolean or null` });
const integerOrNull = (path: string) =>
  Type.Unsafe<number | null>({ type: ['integer', 'null'], 'x-message': `${path} must be an integer or null` });
/** An RFC 3339 date-time with a zone; with `nullable`, null too. */
const dateTime = (path: string, nullable: boolean) =>
  Type.Unsafe<string | null>({
    type: nullable ? ['string', 'null'] : 'string',
    format: 'rfc3339',
    'x-message': `${path} must be an RFC 3339 date-time with a zone${nullable ? ', or null' : ''}`,
  });

/** The largest crop coordinate or size, in CSS pixels (the largest 16-bit signed integer). */
export const MAX_CROP_PIXELS = 32_767;
const cropSize = (name: string) =>
  Type.Number({
    exclusiveMinimum: 0,
    maximum: MAX_CROP_PIXELS,
    'x-message': `payload.event.crop.${name} must be a number greater than 0 and at most ${MAX_CROP_PIXELS}`,
  });
const cropOffset = (name: string) =>
  Type.Optional(
    Type.Number({
      minimum: 0,
      maximum: MAX_CROP_PIXELS,
      'x-message': `payload.event.crop.${name} must be a number from 0 to ${MAX_CROP_PIXELS}`,
    }),
  );

/**
 * `payload.event` with the given members; members not wrapped in Type.Optional are required. The
 * event itself is required when it has a required member; when present it must be an object.
 */
function event(properties: Record<string, TSchema>): TSchema {
  const members = Type.Object(properties, { 'x-message': 'payload.event must be an object' });
  const required = (members.required ?? []).length > 0;
  return Type.Object({ event: required ? members : Type.Optional(members) });
}

/**
 * Per-type payload rules (the rules the audit client is validated against; docs/audit-api.md lists
 * them). A type not listed here only needs `payload` to be an object. Members a rule does not name
 * are accepted, whatever they hold, so a newer client's additions do not break ingestion. A number
 * JSON.parse overflowed (1e400 is Infinity) fails every `number` and `integer` type of these rules
 * (shared/util/schema-check.ts), so each rule refuses it with its own message and none needs a check
 * of its own for it.
 */
export const PAYLOAD_RULES: Record<string, TSchema> = {
  'selection.state.changed': event({
    selectionTxnId: uuid('payload.event.selectionTxnId'),
    details: Type.Array(Type.Unknown(), {
      maxItems: 500,
      'x-message': 'payload.event.details must be a list of at most 500 items',
    }),
  }),
  'app.model.validated': event({
    selectionTxnId: uuid('payload.event.selectionTxnId'),
    dataStateId: Type.Optional(integerOrNull('payload.event.dataStateId')),
    captureScheduled: Type.Optional(booleanOrNull('payload.event.captureScheduled')),
  }),
  'screenshot.url.received': event({
    screenshotUrl: Type.String({
      minLength: 1,
      maxLength: 2048,
      format: 'absolute-uri',
      'x-message': 'payload.event.screenshotUrl must be an absolute URI (RFC 3986) of 1 to 2048 characters',
    }),
    selectionTxnId: uuid('payload.event.selectionTxnId'),
    objectId: Type.Optional(textOrNull('payload.event.objectId', 64)),
    crop: Type.Optional(
      Type.Object(
        {
          width: cropSize('width'),
          height: cropSize('height'),
          top: cropOffset('top'),
          left: cropOffset('left'),
          scrollTop: cropOffset('scrollTop'),
          scrollAreaOffsetY: cropOffset('scrollAreaOffsetY'),
          renderingOverflow: cropOffset('renderingOverflow'),
        },
        {
          'x-message': 'payload.event.crop must be an object',
          'x-required': 'is required when payload.event.crop is sent',
        },
      ),
    ),
  }),
  'event.unsupported.visualization': event({
    vizType: text('payload.event.vizType', 64, 1),
    selectionTxnId: uuid('payload.event.selectionTxnId'),
    objectId: Type.Optional(textOrNull('payload.event.objectId', 64)),
    title: Type.Optional(textOrNull('payload.event.title', 64)),
    trigger: Type.Optional(textOrNull('payload.event.trigger', 64)),
    // The client sends the engine's data state as it has it: a number or a text id.
    dataStateId: Type.Optional(
      Type.Unsafe<number | string | null>({
        type: ['number', 'string', 'null'],
        'x-message': 'payload.event.dataStateId must be a number, a string or null',
      }),
    ),
  }),
  'object.view.duration': event({
    objectId: text('payload.event.objectId', 64, 1),
    duration: Type.Number({
      minimum: 0,
      'x-message': 'payload.event.duration must be a finite number of at least 0',
    }),
    leftAt: dateTime('payload.event.leftAt', false),
    // Opaque ids of at most a UUID's length; the audit client need not send UUIDs here.
    selectionTxnId: Type.Optional(textOrNull('payload.event.selectionTxnId', 36)),
    enterSelectionTxnId: Type.Optional(textOrNull('payload.event.enterSelectionTxnId', 36)),
    leaveSelectionTxnId: Type.Optional(textOrNull('payload.event.leaveSelectionTxnId', 36)),
    enteredAt: Type.Optional(dateTime('payload.event.enteredAt', true)),
    visible: Type.Optional(booleanOrNull('payload.event.visible')),
    dataStateId: Type.Optional(integerOrNull('payload.event.dataStateId')),
  }),
};

/** `payload.context`, for every type: optional members, each checked only when present. */
const ContextSchema = Type.Object(
  {
    appId: Type.Optional(uuid('payload.context.appId')),
    appName: Type.Optional(text('payload.context.appName', 64)),
    sheetId: Type.Optional(text('payload.context.sheetId', 64)),
    sheetName: Type.Optional(text('payload.context.sheetName', 64)),
    user: Type.Optional(text('payload.context.user', 256)),
    userAgent: Type.Optional(text('payload.context.userAgent', 512)),
  },
  { 'x-message': 'payload.context must be an object' },
);

const ContentSchema = Type.Object({
  eventId: uuid('eventId'),
  correlationId: Type.Optional(
    Type.String({ maxLength: 64, 'x-message': 'correlationId must be at most 64 characters' }),
  ),
  payload: Type.Object({ context: Type.Optional(ContextSchema) }),
});

/** One reported problem: `instancePath` is a JSON pointer into the body. */
export interface EnvelopeError {
  instancePath: string;
  message: string;
}

/** The string formats the rules use, and the annotations read by contentErrors (a rule's message, why a member is required). */
export const ENVELOPE_SCHEMA_OPTIONS = {
  formats: { rfc3339: isRfc3339, 'absolute-uri': isAbsoluteUri },
  annotations: ['x-message', 'x-required'],
} as const;

// Compiled on first use, not at module load: the writers import this module for its schema only (the queue codec).
const envelopeChecker = lazyChecker<AuditEnvelope>(AuditEnvelopeSchema, ENVELOPE_SCHEMA_OPTIONS);
const contentChecker = lazyChecker(ContentSchema, ENVELOPE_SCHEMA_OPTIONS);
/** The payload checker of each envelope type with payload rules. */
const PAYLOAD_CHECKERS = new Map(
  Object.entries(PAYLOAD_RULES).map(([type, schema]) => [type, lazyChecker(schema, ENVELOPE_SCHEMA_OPTIONS)]),
);

function schemaMessage(err: SchemaError): string {
  if (err.keyword === 'required') return `must have required property '${String(err.params['missingProperty'])}'`;
  if (err.keyword === 'format' && err.params['format'] === 'rfc3339')
    return 'must be an RFC 3339 date-time with a zone, such as 2026-11-22T10:15:22.123Z';
  if (err.keyword === 'const') return `must be ${JSON.stringify(err.params['allowedValue'])}`;
  if (err.keyword === 'minLength' && err.params['limit'] === 1) return 'must be a non-empty string';
  return err.message;
}

/**
 * The deepest nesting accepted in a body. Audit payloads are a few levels deep; a limit keeps every
 * later step (validation, the queue codec's JSON.stringify, writers) far from the stack's limit.
 */
export const MAX_NESTING_DEPTH = 64;

/**
 * The JSON pointer of the first value (depth first) nested deeper than `max`, or null. Recursive,
 * but never deeper than `max` + 1 calls: it stops descending at the limit. The pointer is built
 * only on the way back from a find, so a valid body costs no strings (this runs on every request).
 */
export function tooDeep(value: unknown, max: number): string | null {
  return deepPointer(value, 0, max, { infinity: false });
}

/** What the walk of `deepPointer` saw besides depth: a number JSON.parse made ±Infinity. */
interface WalkFindings {
  infinity: boolean;
}

const isInfinite = (value: unknown): boolean => value === Infinity || value === -Infinity;

function deepPointer(value: unknown, depth: number, max: number, found: WalkFindings): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (depth >= max) return '';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const child: unknown = value[i];
      if (typeof child !== 'object' || child === null) {
        if (isInfinite(child)) found.infinity = true;
        continue;
      }
      const below = deepPointer(child, depth + 1, max, found);
      if (below !== null) return `/${i}${below}`;
    }
    return null;
  }
  if (!isRecord(value)) return null;
  const record = value;
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue;
    const child = record[key];
    if (typeof child !== 'object' || child === null) {
      if (isInfinite(child)) found.infinity = true;
      continue;
    }
    const below = deepPointer(child, depth + 1, max, found);
    if (below !== null) return `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}${below}`;
  }
  return null;
}

/**
 * The envelopes `validateEnvelope` passed (the objects it was given and returned), so the queue's
 * in-memory hand-off need not check them against the same schema a second time (codec.ts
 * `decodeRecord`). Weak: the mark goes with the object. It vouches for the object as it was
 * checked: the audit API queues the envelope unchanged, and a queued event is not changed after
 * it is sent (queue/port.ts).
 */
const passedEnvelopes = new WeakSet<object>();

/** Did `validateEnvelope` pass this very object (see `passedEnvelopes`)? */
export function passedEnvelopeCheck(value: unknown): boolean {
  return typeof value === 'object' && value !== null && passedEnvelopes.has(value);
}

/** `validateEnvelope`'s verdict on a body that passed: the audit handler queues what it holds. */
export interface PassedEnvelope {
  ok: true;
  envelope: AuditEnvelope;
  /**
   * A number in it is ±Infinity (a literal like 1e400 that JSON.parse overflowed), seen by the same
   * walk that measures the depth.
   */
  holdsInfinity: boolean;
}

/** Structural check (→ 400). */
export function validateEnvelope(body: unknown): PassedEnvelope | { ok: false; errors: EnvelopeError[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ instancePath: '', message: 'the body must be a JSON object' }] };
  }
  const found: WalkFindings = { infinity: false };
  const deep = deepPointer(body, 0, MAX_NESTING_DEPTH, found);
  if (deep !== null)
    return {
      ok: false,
      errors: [{ instancePath: deep, message: `is nested more than ${MAX_NESTING_DEPTH} levels deep` }],
    };
  const checker = envelopeChecker;
  if (checker.check(body)) {
    passedEnvelopes.add(body);
    return { ok: true, envelope: body, holdsInfinity: found.infinity };
  }
  return {
    ok: false,
    errors: checker.errors(body).map((e) => ({ instancePath: e.instancePath, message: schemaMessage(e) })),
  };
}

function contentErrors(errors: readonly SchemaError[], prefix: string): EnvelopeError[] {
  const seen = new Set<string>();
  const out: EnvelopeError[] = [];
  for (const err of errors) {
    const annotation = (name: string): string | undefined => {
      const text = err.parentSchema[name];
      return typeof text === 'string' ? text : undefined;
    };
    const path =
      err.keyword === 'required'
        ? `${prefix}${err.instancePath}/${String(err.params['missingProperty'])}`
        : `${prefix}${err.instancePath}`;
    const member = path.slice(1).replace(/\//g, '.');
    const message =
      err.keyword === 'required'
        ? `${member} ${annotation('x-required') ?? 'is required for this type'}`
        : (annotation('x-message') ?? `${member} ${err.message}`);
    const key = `${path}\n${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ instancePath: path, message });
  }
  return out;
}

/** Content rules (→ 422), all evaluated: ids, lengths, the type and its payload rules. */
export function checkContent(envelope: AuditEnvelope): EnvelopeError[] {
  const errors: EnvelopeError[] = [];
  const content = contentChecker;
  if (!content.check(envelope)) errors.push(...contentErrors(content.errors(envelope), ''));
  if (!isKnownType(envelope.type)) {
    errors.push({
      instancePath: '/type',
      message: `type "${envelope.type.slice(0, 100)}" is not recognised (known: ${KNOWN_TYPES.join(', ')}, or event.<name>)`,
    });
  }
  const payloadChecker = PAYLOAD_CHECKERS.get(envelope.type);
  if (payloadChecker && !payloadChecker.check(envelope.payload))
    errors.push(...contentErrors(payloadChecker.errors(envelope.payload), '/payload'));
  return errors;
}

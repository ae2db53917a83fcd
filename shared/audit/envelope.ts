/**
 * The audit event envelope (audit-event-api.md): its structural schema (violations → 400 "Schema
 * validation failed") and its content rules (violations → 422 "One or more constraint
 * violations"). Both are ajv schemas with all errors reported; no type coercion.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

/** One validator for every id: any UUID version or variant (platform-formats.md §0.2). */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

/** RFC 3339 date-time with a zone (Z or ±hh:mm): `2026-11-22T10:15:22.123Z`. */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

export function isRfc3339(text: string): boolean {
  const m = RFC3339.exec(text);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const daysInMonth = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  const zoneOk = m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 60 && zoneOk;
}

/** The values the audit client sends in `source` (our decision; the spec leaves them open). */
export const SOURCE_KIND = 'qlik-sense-extension';
export const SOURCE_NAME = 'audit-qs';

export const AuditEnvelopeSchema = Type.Object(
  {
    schemaVersion: Type.Integer({ minimum: 1 }),
    eventId: Type.String(),
    timestamp: Type.String({ format: 'rfc3339' }),
    type: Type.String(),
    payload: Type.Record(Type.String(), Type.Unknown()),
    correlationId: Type.Optional(Type.String()),
    source: Type.Optional(
      Type.Object({
        kind: Type.Literal(SOURCE_KIND),
        name: Type.Literal(SOURCE_NAME),
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

/** Each content rule carries the message a client sees (`x-message`). */
const uuid = (what: string) => Type.String({ pattern: UUID_PATTERN, 'x-message': `${what} must be a UUID` });
const text = (what: string) => Type.String({ minLength: 1, 'x-message': `${what} must be a non-empty string` });
/** `payload.event` with the given members; members not wrapped in Type.Optional are required. */
const event = (properties: Record<string, TSchema>) =>
  Type.Object({ event: Type.Object(properties, { 'x-message': 'payload.event must be an object' }) }, { 'x-message': 'payload.event is required for this type' });

/** Per-type payload rules; a type not listed here only needs `payload` to be an object. */
export const PAYLOAD_RULES: Record<string, TSchema> = {
  'selection.state.changed': event(
    {
      selectionTxnId: uuid('payload.event.selectionTxnId'),
      details: Type.Array(Type.Unknown(), { maxItems: 500, 'x-message': 'payload.event.details must be a list of at most 500 items' }),
    },
  ),
  'app.model.validated': event(
    {
      selectionTxnId: uuid('payload.event.selectionTxnId'),
      dataStateId: Type.Unsafe<number | null>({ type: ['integer', 'null'], 'x-message': 'payload.event.dataStateId must be an integer or null' }),
    },
  ),
  'screenshot.url.received': event(
    {
      screenshotUrl: Type.String({ maxLength: 2048, format: 'absolute-uri', 'x-message': 'payload.event.screenshotUrl must be an absolute URL of at most 2048 characters' }),
      selectionTxnId: uuid('payload.event.selectionTxnId'),
      crop: Type.Optional(Type.Record(Type.String(), Type.Number({ 'x-message': 'payload.event.crop must be an object of numbers' }), { 'x-message': 'payload.event.crop must be an object of numbers' })),
    },
  ),
  'event.unsupported.visualization': event(
    { vizType: text('payload.event.vizType'), selectionTxnId: uuid('payload.event.selectionTxnId') },
  ),
  'object.view.duration': event(
    {
      objectId: text('payload.event.objectId'),
      duration: Type.Number({ minimum: 0, 'x-message': 'payload.event.duration must be a number >= 0' }),
      leftAt: Type.String({ format: 'rfc3339', 'x-message': 'payload.event.leftAt must be an RFC 3339 date-time with a zone' }),
    },
  ),
};

const ContentSchema = Type.Object({
  eventId: uuid('eventId'),
  correlationId: Type.Optional(Type.String({ maxLength: 64, 'x-message': 'correlationId must be at most 64 characters' })),
  payload: Type.Object({
    context: Type.Optional(Type.Object({ appId: Type.Optional(uuid('payload.context.appId')) })),
  }),
});

/** One reported problem: `instancePath` is a JSON pointer into the body. */
export interface EnvelopeError {
  instancePath: string;
  message: string;
}

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, coerceTypes: false, verbose: true, strict: true, allowUnionTypes: true });
  ajv.addFormat('rfc3339', isRfc3339);
  ajv.addFormat('absolute-uri', (value: string) => {
    try {
      return new URL(value).protocol.length > 1 && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(value);
    } catch {
      return false;
    }
  });
  ajv.addKeyword({ keyword: 'x-message' });
  return ajv;
}

const ajv = makeAjv();
const envelopeValidator: ValidateFunction<AuditEnvelope> = ajv.compile<AuditEnvelope>(AuditEnvelopeSchema);
const contentValidator = ajv.compile(ContentSchema);
const payloadValidators = new Map(Object.entries(PAYLOAD_RULES).map(([type, schema]) => [type, ajv.compile(schema)]));

function schemaMessage(err: ErrorObject): string {
  if (err.keyword === 'required') return `must have required property '${String(err.params['missingProperty'])}'`;
  if (err.keyword === 'format' && err.params['format'] === 'rfc3339') return 'must be an RFC 3339 date-time with a zone, such as 2026-11-22T10:15:22.123Z';
  if (err.keyword === 'const') return `must be ${JSON.stringify(err.params['allowedValue'])}`;
  return err.message ?? 'is invalid';
}

/**
 * The deepest nesting accepted in a body. Audit payloads are a few levels deep; a limit keeps every
 * later step (validation, the queue codec's JSON.stringify, writers) far from the stack's limit.
 */
export const MAX_NESTING_DEPTH = 64;

/** The JSON pointer of the first value nested deeper than `max`, or null. Iterative: no recursion limit. */
export function tooDeep(value: unknown, max: number): string | null {
  const stack: { v: unknown; depth: number; path: string }[] = [{ v: value, depth: 0, path: '' }];
  while (stack.length > 0) {
    const { v, depth, path } = stack.pop() as { v: unknown; depth: number; path: string };
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= max) return path;
    const entries: [string, unknown][] = Array.isArray(v) ? v.map((x, i) => [String(i), x]) : Object.entries(v);
    for (const [key, child] of entries) stack.push({ v: child, depth: depth + 1, path: `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}` });
  }
  return null;
}

/** Structural check (→ 400). */
export function validateEnvelope(body: unknown): { ok: true; envelope: AuditEnvelope } | { ok: false; errors: EnvelopeError[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, errors: [{ instancePath: '', message: 'the body must be a JSON object' }] };
  }
  const deep = tooDeep(body, MAX_NESTING_DEPTH);
  if (deep !== null) return { ok: false, errors: [{ instancePath: deep, message: `is nested more than ${MAX_NESTING_DEPTH} levels deep` }] };
  if (envelopeValidator(body)) return { ok: true, envelope: body };
  return { ok: false, errors: (envelopeValidator.errors ?? []).map((e) => ({ instancePath: e.instancePath, message: schemaMessage(e) })) };
}

function contentErrors(errors: readonly ErrorObject[] | null | undefined, prefix: string): EnvelopeError[] {
  const seen = new Set<string>();
  const out: EnvelopeError[] = [];
  for (const err of errors ?? []) {
    const parent = err.parentSchema as { 'x-message'?: string } | undefined;
    const path = err.keyword === 'required' ? `${prefix}${err.instancePath}/${String(err.params['missingProperty'])}` : `${prefix}${err.instancePath}`;
    const message =
      err.keyword === 'required'
        ? `${path.slice(1).replace(/\//g, '.')} is required for this type`
        : (parent?.['x-message'] ?? `${path.slice(1).replace(/\//g, '.')} ${err.message ?? 'is invalid'}`);
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
  if (!contentValidator(envelope)) errors.push(...contentErrors(contentValidator.errors, ''));
  if (!isKnownType(envelope.type)) {
    errors.push({ instancePath: '/type', message: `type "${envelope.type.slice(0, 100)}" is not recognised (known: ${KNOWN_TYPES.join(', ')}, or event.<name>)` });
  }
  const payloadValidator = payloadValidators.get(envelope.type);
  if (payloadValidator && !payloadValidator(envelope.payload)) errors.push(...contentErrors(payloadValidator.errors, '/payload'));
  return errors;
}

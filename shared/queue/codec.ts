/**
 * The wire format of queue messages, shared by the SQS adapter, the durable local queue and the
 * queue-triggered writer handlers. A message body is JSON, either several events packed together
 *   {"v":1,"events":[QueuedEvent, ...]}
 * or a claim check, for a packed body too large for the queue, that names where the body is stored
 *   {"v":1,"claimCheck":{"bucket":"...","key":"...","events":3}}
 * Readers validate every body against the schemas below (one per event kind) before trusting it.
 */
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import type { SQSRecord } from 'aws-lambda';
import { AuditEnvelopeSchema, ENVELOPE_SCHEMA_OPTIONS, passedEnvelopeCheck } from '../audit/envelope.js';
import { LogEventSchema, UserActivitySchema } from '../platform/events.js';
import { HealthSampleSchema, SessionSampleSchema } from '../platform/polled.js';
import { isRecord } from '../util/records.js';
import { lazyChecker, type SchemaChecker, type SchemaError } from '../util/schema-check.js';
import { QUEUE_FORMAT_VERSION, type QueuedEvent } from './events.js';
import { eventOf, isEncodedEvent, type SendableEvent } from './port.js';

const Timestamp = Type.String({ format: 'rfc3339' });

/** `kind: 'audit'`: an audit event accepted by the audit API. */
const TimeNs = Type.String({ pattern: '^[0-9]{1,19}$' });

export const AuditQueuedEventSchema = Type.Object({
  kind: Type.Literal('audit'),
  id: Type.String({ minLength: 1 }),
  receivedAt: Timestamp,
  meta: Type.Object({ clientIp: Type.String(), clientVersion: Type.Union([Type.String(), Type.Null()]) }),
  event: AuditEnvelopeSchema,
  timeNs: Type.Optional(TimeNs),
});

/** An event from a UDP listener: its kind, the parsed event, and the point time decided at the edge. */
function edgeEventSchema<K extends string, E extends TSchema>(kind: K, event: E) {
  return Type.Object({
    kind: Type.Literal(kind),
    id: Type.String({ minLength: 1 }),
    receivedAt: Timestamp,
    timeNs: TimeNs,
    event,
  });
}

/** `kind: 'user-event'`: a user-activity event from the UDP listener. */
export const UserQueuedEventSchema = edgeEventSchema('user-event', UserActivitySchema);

/** `kind: 'log-event'`: a log event from the UDP listener. */
export const LogQueuedEventSchema = edgeEventSchema('log-event', LogEventSchema);

/** `kind: 'health'` and `'user-sessions'`: one successful poll, with the values the edge derived. */
export const HealthQueuedEventSchema = Type.Object({
  kind: Type.Literal('health'),
  id: Type.String({ minLength: 1 }),
  receivedAt: Timestamp,
  timeNs: TimeNs,
  sample: HealthSampleSchema,
});
export const SessionsQueuedEventSchema = Type.Object({
  kind: Type.Literal('user-sessions'),
  id: Type.String({ minLength: 1 }),
  receivedAt: Timestamp,
  timeNs: TimeNs,
  sample: SessionSampleSchema,
});

const JsonFieldValueSchema = Type.Union([
  Type.Object({ type: Type.Literal('int'), value: Type.Integer() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('float'), value: Type.Number() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('string'), value: Type.String() }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('bool'), value: Type.Boolean() }, { additionalProperties: false }),
]);

/** `kind: 'points'`: tsdb points the edge computed (counters, queue metrics). */
export const PointsQueuedEventSchema = Type.Object({
  kind: Type.Literal('points'),
  id: Type.String({ minLength: 1 }),
  receivedAt: Timestamp,
  module: Type.String({ minLength: 1 }),
  points: Type.Array(
    Type.Object(
      {
        measurement: Type.String({ minLength: 1 }),
        tags: Type.Record(Type.String(), Type.String()),
        fields: Type.Record(Type.String(), JsonFieldValueSchema),
        timeNs: TimeNs,
      },
      { additionalProperties: false },
    ),
    { minItems: 1 },
  ),
});

/**
 * Every kind of queued event, one schema each, told apart by `kind`. A new kind is one more entry
 * here (plus its type in events.ts; the check below fails to compile until the two agree).
 */
const EVENT_SCHEMAS = [
  AuditQueuedEventSchema,
  UserQueuedEventSchema,
  LogQueuedEventSchema,
  PointsQueuedEventSchema,
  HealthQueuedEventSchema,
  SessionsQueuedEventSchema,
] as const;

/** Any queued event (the union of EVENT_SCHEMAS). */
export const QueuedEventSchema = Type.Union([...EVENT_SCHEMAS]);

export const PackedMessageSchema = Type.Object(
  { v: Type.Literal(QUEUE_FORMAT_VERSION), events: Type.Array(QueuedEventSchema, { minItems: 1 }) },
  { additionalProperties: false },
);

export const ClaimCheckMessageSchema = Type.Object(
  {
    v: Type.Literal(QUEUE_FORMAT_VERSION),
    claimCheck: Type.Object(
      {
        bucket: Type.String({ minLength: 1 }),
        key: Type.String({ minLength: 1 }),
        events: Type.Integer({ minimum: 1 }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const QueueMessageSchema = Type.Union([PackedMessageSchema, ClaimCheckMessageSchema]);

export type PackedMessage = Static<typeof PackedMessageSchema>;
export type ClaimCheckMessage = Static<typeof ClaimCheckMessageSchema>;
export type QueueMessage = Static<typeof QueueMessageSchema>;

// The schema and the QueuedEvent type of events.ts must describe the same values, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const schemaMatchesType: Same<Static<typeof QueuedEventSchema>, QueuedEvent> = true;
void schemaMatchesType;

/**
 * The checkers (shared/util/schema-check.ts), each compiled at its first use: a writer that never
 * decodes a message of a kind (or a bad message) never needs its checker. The message checker is
 * compiled at the first decode; the shape and per-kind ones only to explain a message that failed it.
 */
const messageChecker = lazyChecker<QueueMessage>(QueueMessageSchema, ENVELOPE_SCHEMA_OPTIONS);
const packedShape = lazyChecker<{ v: number; events: unknown[] }>(
  Type.Object(
    { v: Type.Literal(QUEUE_FORMAT_VERSION), events: Type.Array(Type.Unknown(), { minItems: 1 }) },
    { additionalProperties: false },
  ),
  ENVELOPE_SCHEMA_OPTIONS,
);
const claimCheckShape = lazyChecker<ClaimCheckMessage>(ClaimCheckMessageSchema, ENVELOPE_SCHEMA_OPTIONS);
/** Per-kind checkers, only to explain why an event failed (the union's errors are noisy). */
const KIND_CHECKERS = new Map<string, SchemaChecker<unknown>>(
  EVENT_SCHEMAS.map((schema) => [schema.properties.kind.const, lazyChecker(schema, ENVELOPE_SCHEMA_OPTIONS)]),
);

export type DecodeResult = { ok: true; message: QueueMessage } | { ok: false; error: string };

function describe(errors: readonly SchemaError[], prefix = ''): string {
  const texts = errors.slice(0, 5).map((e) => {
    const where = `${prefix}${e.instancePath}` || '/';
    if (e.keyword === 'required') return `${where}: must have property '${String(e.params['missingProperty'])}'`;
    if (e.keyword === 'additionalProperties')
      return `${where}: unexpected property '${String(e.params['additionalProperty'])}'`;
    if (e.keyword === 'format' && e.params['format'] === 'rfc3339')
      return `${where}: must be an RFC 3339 date-time with a zone`;
    if (e.keyword === 'const') return `${where}: must be ${JSON.stringify(e.params['allowedValue'])}`;
    return `${where}: ${e.message}`;
  });
  return texts.join('; ') || 'does not match the queue message schema';
}

/** Says which event of a packed message is invalid, and why. */
function explainEvents(events: readonly unknown[]): string {
  for (const [index, event] of events.entries()) {
    const kind = isRecord(event) && typeof event['kind'] === 'string' ? event['kind'] : undefined;
    const checker = kind === undefined ? undefined : KIND_CHECKERS.get(kind);
    if (kind === undefined || checker === undefined) {
      const given = isRecord(event) ? (JSON.stringify(event['kind']) ?? 'none') : 'none (not an object)';
      return `events[${index}]: unknown event kind ${given} (known: ${[...KIND_CHECKERS.keys()].join(', ')})`;
    }
    const id = isRecord(event) && typeof event['id'] === 'string' ? ` id ${event['id'].slice(0, 80)}` : '';
    if (!checker.check(event)) {
      return `events[${index}] (${kind}${id}) is invalid: ${describe(checker.errors(event), `/events/${index}`)}`;
    }
  }
  return 'the events do not match the queue message schema';
}

/** Parses and validates a queue message body; the error says what is wrong and where. */
export function decodeMessage(body: string): DecodeResult {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    return { ok: false, error: `queue message is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  return checkMessage(value);
}

/** Validates a parsed queue message (decodeMessage's check, and the in-memory hand-off's). */
function checkMessage(value: unknown): DecodeResult {
  if (messageChecker.check(value)) return { ok: true, message: value };
  if (!isRecord(value)) return { ok: false, error: 'queue message must be a JSON object' };
  if (value['v'] !== QUEUE_FORMAT_VERSION) {
    return {
      ok: false,
      error: `unsupported queue message version ${JSON.stringify(value['v']) ?? 'undefined'} (this reader understands v=${QUEUE_FORMAT_VERSION})`,
    };
  }
  if ('claimCheck' in value) {
    return { ok: false, error: `invalid claim-check message: ${describe(claimCheckShape.errors(value))}` };
  }
  const packed = packedShape;
  if (!packed.check(value)) return { ok: false, error: `invalid queue message: ${describe(packed.errors(value))}` };
  return { ok: false, error: `invalid queue message: ${explainEvents(value.events)}` };
}

/** Any one queued event (one of EVENT_SCHEMAS): the hand-off's check of an event. */
const eventChecker = lazyChecker<QueuedEvent>(QueuedEventSchema, ENVELOPE_SCHEMA_OPTIONS);
/**
 * An audit event's own members around its envelope (the envelope admitted as it is): the
 * hand-off's check of an audit event whose envelope `validateEnvelope` passed in this process.
 */
const auditAroundEnvelope = lazyChecker<unknown>(
  Type.Object({ ...AuditQueuedEventSchema.properties, event: Type.Unknown() }),
  ENVELOPE_SCHEMA_OPTIONS,
);

/** A handed-off event passes what its message's check would ask of it. */
function handedOffValid(event: QueuedEvent): boolean {
  // The envelope passed AuditEnvelopeSchema (the schema the message's check applies to it) when
  // the audit API took the request: checking it again was the larger part of a 2 KB event's
  // delivery (bench/pipeline.mjs's "queue → no-op" stage decodes every event this way;
  // test/shared/queue/local/delivery.test.ts checks which envelopes are checked again).
  if (event.kind === 'audit' && passedEnvelopeCheck(event.event)) return auditAroundEnvelope.check(event);
  return eventChecker.check(event);
}

/**
 * The message of a delivered record: `handedOff`, the events the local queue handed off in memory
 * with it (queue/local/delivery.ts HandedOff), else its body parsed. Either way it passes the same
 * validation, so a consumer takes nothing it would refuse after a restart. What the in-memory path
 * skips is JSON.parse, and it gives the same values as parsing would because (1) the packers
 * encoded the body moments before from exactly these objects, or from the text their sender gave
 * with them, which parses to them (port.ts EncodedEvent); (2) EventQueue.send's contract: the
 * caller does not change the events once sent (port.ts), and destinations only read them; (3) the
 * schema admits only JSON values where it types them (finite numbers, strings, booleans, null; a
 * Date or NaN in a typed member fails the check here as its JSON would fail it after a restart).
 * Free-form members (`payload`) come from JSON.parse in the audit API, so they are JSON values
 * already. It also skips checking an audit envelope again that `validateEnvelope` passed in this
 * process (`passedEnvelopeCheck`: the same schema, the same object, unchanged since); the event's
 * own members around it are still checked. A body parsed from disk or from SQS is checked in full:
 * a frame's checksum says the bytes are the ones written, not that the Svc that wrote them (before
 * an upgrade) wrote what this one accepts. test/shared/queue/local/delivery.test.ts checks that a
 * hand-off and a restart's read-back give equal events.
 */
export function decodeRecord(record: SQSRecord, handedOff: readonly QueuedEvent[] | undefined): DecodeResult {
  if (handedOff === undefined) return decodeMessage(record.body);
  if (handedOff.length > 0 && handedOff.every(handedOffValid))
    return { ok: true, message: { v: QUEUE_FORMAT_VERSION, events: [...handedOff] } };
  // The whole message's check says which event is wrong and why, in the words a parsed body gets.
  return checkMessage({ v: QUEUE_FORMAT_VERSION, events: handedOff });
}

/** Is this message a claim check (the packed body is stored elsewhere)? */
export function isClaimCheck(message: QueueMessage): message is ClaimCheckMessage {
  return 'claimCheck' in message;
}

/**
 * SQS accepts #x9 #xA #xD #x20-#xD7FF #xE000-#xFFFD #x10000-#x10FFFF. JSON.stringify already escapes
 * control characters and lone surrogates; U+FFFE and U+FFFF it leaves raw, so escape them too
 * (they can only occur inside JSON strings, where `\uffff` means the same character).
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessage.html
 */
function toJson(value: unknown): string {
  return sqsSafe(JSON.stringify(value));
}

/**
 * One event's JSON as queued: an EncodedEvent's text (port.ts; the audit API's, built around the
 * request's own body, so its 2 KB envelope is not stringified again: the stringify it saves is
 * bench/audit-steps.mjs's "queue codec" step, and bench/pipeline.mjs sends as the audit API does),
 * else the event's `JSON.stringify`. The packers keep the events, not the texts: the events may be
 * held until every consumer settled them (the journal's in-memory tail), and a 2 KB text with each
 * would outlive a young generation for nothing.
 */
function eventJson(item: SendableEvent): string {
  return isEncodedEvent(item) ? sqsSafe(item.json) : toJson(item);
}

/** The events of what was sent, in order, in a new array (the queue's consumers get it). */
function eventsOf(items: readonly SendableEvent[]): QueuedEvent[] {
  return items.map(eventOf);
}

const NON_CHARACTERS = /[\uFFFE\uFFFF]/g;

/** `json` with U+FFFE and U+FFFF escaped (see toJson). */
function sqsSafe(json: string): string {
  // Looked for first: a replace allocates a copy of the text even when nothing matches. Two indexOf,
  // not a regex test, which scans the text where indexOf does not (a one-byte string cannot hold
  // either character: V8 answers at once); every UDP event is encoded through here, and
  // bench/udp-steps.mjs times the steps that encode them.
  return json.indexOf('\uFFFE') === -1 && json.indexOf('\uFFFF') === -1
    ? json
    : json.replace(NON_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
}

const PACKED_HEAD = `{"v":${QUEUE_FORMAT_VERSION},"events":[`;
const PACKED_TAIL = ']}';
const FRAME_BYTES = Buffer.byteLength(PACKED_HEAD) + Buffer.byteLength(PACKED_TAIL);

/** The body of one packed message holding `events` (in order). */
export function encodePacked(events: readonly SendableEvent[]): string {
  return PACKED_HEAD + events.map(eventJson).join(',') + PACKED_TAIL;
}

/**
 * `events` encoded as a packed body's event list (what goes between its `[` and `]`), so a sender
 * can encode events when it takes them and hold one string instead of the objects until it writes
 * (the edge's event batcher). `packedBodyOf` joins such lists into a body: the same text as
 * `encodePacked` of all their events, byte for byte; an EncodedEvent is its text.
 */
export function encodeEventList(events: readonly SendableEvent[]): string {
  // One JSON.stringify of the array unless an event comes with its text: the same text, byte for byte.
  if (!events.some(isEncodedEvent)) return toJson(events).slice(1, -1);
  return events.map(eventJson).join(',');
}

/** The body of one packed message from event lists of `encodeEventList`, in order. */
export function packedBodyOf(lists: readonly string[]): string {
  return PACKED_HEAD + lists.join(',') + PACKED_TAIL;
}

const PACKED_HEAD_BYTES = Buffer.from(PACKED_HEAD, 'utf8');
const PACKED_TAIL_BYTES = Buffer.from(PACKED_TAIL, 'utf8');
const COMMA_BYTES = Buffer.from(',', 'utf8');

/**
 * `packedBodyOf` as UTF-8 parts, from the UTF-8 bytes of event lists (`encodeEventList`): the bytes
 * of the same body, in order, for a sender that holds its lists as bytes (the edge's event batcher:
 * bytes live outside the JS heap, so a young-generation GC does not copy them while they wait for
 * the write). Nothing is copied here.
 */
export function packedBodyParts(lists: readonly Uint8Array[]): Uint8Array[] {
  const parts: Uint8Array[] = [PACKED_HEAD_BYTES];
  for (const list of lists) {
    if (parts.length > 1) parts.push(COMMA_BYTES);
    parts.push(list);
  }
  parts.push(PACKED_TAIL_BYTES);
  return parts;
}

/** The body of a claim-check message. */
export function encodeClaimCheck(ref: { bucket: string; key: string }, events: number): string {
  const message: ClaimCheckMessage = {
    v: QUEUE_FORMAT_VERSION,
    claimCheck: { bucket: ref.bucket, key: ref.key, events },
  };
  return toJson(message);
}

/** One packed body and the events in it. */
export interface PackedBody {
  body: string;
  /** UTF-8 length of `body`. */
  bytes: number;
  events: QueuedEvent[];
}

/**
 * Packs `events` in order, greedily, into as few bodies as possible of at most `maxBytes` UTF-8
 * bytes each. An event too large on its own becomes a body by itself, larger than `maxBytes`:
 * the caller claim-checks it.
 */
export function packEventBodies(events: readonly SendableEvent[], maxBytes: number): PackedBody[] {
  // Usually all of them fit in one body (the edge's batcher sends 20 events at a time): one
  // JSON.stringify of the array is that body, byte for byte what the greedy packing below builds.
  if (events.length > 1) {
    const body = PACKED_HEAD + encodeEventList(events) + PACKED_TAIL;
    const bytes = Buffer.byteLength(body);
    if (bytes <= maxBytes) return [{ body, bytes, events: eventsOf(events) }];
  }
  const lists = events.map((item) => {
    const list = eventJson(item);
    return { list, events: 1, bytes: Buffer.byteLength(list), event: eventOf(item) };
  });
  return groupLists(lists, maxBytes).map((g) => ({
    body: packedBodyOf(g.items.map((i) => i.list)),
    bytes: g.bytes,
    events: g.items.map((i) => i.event),
  }));
}

/** Encoded events as a packed body holds them (`encodeEventList`): the text, how many events, its UTF-8 size. */
export interface EncodedList {
  list: string;
  events: number;
  bytes: number;
}

/** UTF-8 bytes of a packed body around its event list. */
export const PACKED_FRAME_BYTES = FRAME_BYTES;

/**
 * Groups `lists` in order, greedily, into as few bodies as possible of at most `maxBytes` UTF-8
 * bytes and `maxEvents` events each (`packedBodyOf` of a group's lists is its body, `bytes` its
 * size). A list too large on its own is a group by itself. One rule for every packer: the queue's
 * (`packEventBodies`) and the edge's event batcher, which holds encoded lists.
 */
export function groupLists<T extends Pick<EncodedList, 'events' | 'bytes'>>(
  lists: readonly T[],
  maxBytes: number,
  maxEvents = Number.POSITIVE_INFINITY,
): { items: T[]; events: number; bytes: number }[] {
  const out: { items: T[]; events: number; bytes: number }[] = [];
  let items: T[] = [];
  let events = 0;
  let bytes = FRAME_BYTES;
  for (const item of lists) {
    // + 1: the comma before every list but the first.
    if (items.length > 0 && (events + item.events > maxEvents || bytes + item.bytes + 1 > maxBytes)) {
      out.push({ items, events, bytes });
      items = [];
      events = 0;
      bytes = FRAME_BYTES;
    }
    bytes += items.length === 0 ? item.bytes : item.bytes + 1;
    events += item.events;
    items.push(item);
  }
  if (items.length > 0) out.push({ items, events, bytes });
  return out;
}

/** One packed message as the UTF-8 bytes to store, and the events in it. */
export interface PackedBytes {
  bytes: Buffer;
  events: QueuedEvent[];
}

/** The UTF-8 bytes of `parts` in one buffer of its own (not a slice of Node's shared pool). */
function utf8Of(parts: readonly string[]): Buffer {
  let size = 0;
  for (const part of parts) size += Buffer.byteLength(part);
  const bytes = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (const part of parts) at += bytes.write(part, at, 'utf8');
  return bytes;
}

/**
 * `packEventBodies` as bytes, for a queue that stores them (the durable local queue). When the
 * events fit in one body, its head, the events' JSON and its tail are written straight into one
 * buffer: the body is never made as a string (joined, concatenated, then flattened and encoded:
 * three more copies of a 2 KB audit event per send).
 */
export function packEventBytes(events: readonly SendableEvent[], maxBytes: number): PackedBytes[] {
  if (events.length > 0) {
    const bytes = utf8Of([PACKED_HEAD, encodeEventList(events), PACKED_TAIL]);
    if (bytes.length <= maxBytes || events.length === 1) return [{ bytes, events: eventsOf(events) }];
  }
  return packEventBodies(events, maxBytes).map((p) => ({ bytes: utf8Of([p.body]), events: p.events }));
}

/** `packEventBodies`, bodies only. */
export function packEvents(events: readonly SendableEvent[], maxBytes: number): string[] {
  return packEventBodies(events, maxBytes).map((p) => p.body);
}

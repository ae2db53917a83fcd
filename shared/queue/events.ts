/**
 * What travels on the EventQueue: typed, versioned events with a stable id (idempotency key).
 * Adapters may pack several events into one queue message.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEnvelope } from '../audit/envelope.js';
import type { PlatformLogEvent, UserActivity } from '../platform/events.js';
import type { HealthSample, SessionSample } from '../platform/polled.js';

export const QUEUE_FORMAT_VERSION = 1;

interface QueuedBase {
  /** Stable per event: writers use it to stay idempotent across redeliveries. */
  id: string;
  /** ISO time the source accepted it. */
  receivedAt: string;
}

/** An audit event accepted by the audit API. */
export interface AuditQueuedEvent extends QueuedBase {
  kind: 'audit';
  event: AuditEnvelope;
  meta: { clientIp: string; clientVersion: string | null };
  /**
   * The tsdb point time, decided once when the event is queued (as for edge events), so a
   * redelivered point overwrites itself. Absent in events queued by Svc ≤ 15.0.0: the writer then
   * decides it.
   */
  timeNs?: string;
}

/**
 * The point time of an edge event, decided once at the edge (platform-formats.md §0.3): the event's
 * own millisecond × 1,000,000 + the process-wide counter, as a decimal string (JSON has no 64-bit
 * integers). Every destination uses it, and a redelivered point overwrites itself.
 */
interface EdgeTimed {
  timeNs: string;
}

/** A user-activity event from the UDP listener (§1), parsed and enriched at the edge. */
export interface UserQueuedEvent extends QueuedBase, EdgeTimed {
  kind: 'user-event';
  event: UserActivity;
}

/** A log event from the UDP listener (§2), parsed, filtered and categorised at the edge. */
export interface LogQueuedEvent extends QueuedBase, EdgeTimed {
  kind: 'log-event';
  event: PlatformLogEvent;
}

/** A field value of a JSON point (line protocol types of §6.0; integers within ±2^53). */
export type JsonFieldValue =
  | { type: 'int'; value: number }
  | { type: 'float'; value: number }
  | { type: 'string'; value: string }
  | { type: 'bool'; value: boolean };

/** A tsdb point as JSON: `timeNs` is nanoseconds since the epoch as a decimal string. */
export interface JsonPoint {
  measurement: string;
  tags: Record<string, string>;
  fields: Record<string, JsonFieldValue>;
  timeNs: string;
}

/** Points the edge computes itself (event counts, rejected counts, listener queue metrics), for the tsdb only. */
export interface PointsQueuedEvent extends QueuedBase {
  kind: 'points';
  /** The producing module, for error tracking (§6.0 step 5), e.g. `EVENT_COUNTS`. */
  module: string;
  points: JsonPoint[];
}

/** A `points` event of `module`, with a fresh id. */
export function pointsEvent(module: string, points: JsonPoint[]): PointsQueuedEvent {
  return { kind: 'points', id: randomUUID(), receivedAt: new Date().toISOString(), module, points };
}

/**
 * One successful health poll of one server (§4). `timeNs` is the time of its first point; the
 * others take the next counter values (the edge reserved them: PointClock.reserve).
 */
export interface HealthQueuedEvent extends QueuedBase, EdgeTimed {
  kind: 'health';
  sample: HealthSample;
}

/** One successful session poll of one server and virtual proxy (§5.1); `timeNs` as for `health`. */
export interface SessionsQueuedEvent extends QueuedBase, EdgeTimed {
  kind: 'user-sessions';
  sample: SessionSample;
}

/** Every kind of event; later sources add theirs here. */
export type QueuedEvent =
  | AuditQueuedEvent
  | UserQueuedEvent
  | LogQueuedEvent
  | PointsQueuedEvent
  | HealthQueuedEvent
  | SessionsQueuedEvent;
export type EventKind = QueuedEvent['kind'];

export type QueuedEventOf<K extends EventKind> = Extract<QueuedEvent, { kind: K }>;

/** The events of one kind: a destination takes the kinds it serves and leaves the others alone. */
export function eventsOfKind<K extends EventKind>(events: readonly QueuedEvent[], kind: K): QueuedEventOf<K>[] {
  return events.filter((e): e is QueuedEventOf<K> => e.kind === kind);
}

const DECIMAL = /^-?\d+$/;

/** A §0.3 point time as carried in the queue (a decimal string of nanoseconds). */
export function parseTimeNs(timeNs: string): bigint {
  // BigInt('') is 0n and BigInt(' 0x1f ') is 31n: only a plain decimal is a time.
  if (!DECIMAL.test(timeNs))
    throw new RangeError(`point time is not a decimal number of nanoseconds: ${JSON.stringify(timeNs)}`);
  return BigInt(timeNs);
}

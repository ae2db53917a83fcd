/** The EventQueue port: sources hand accepted events to it; adapters are local (disk) or SQS. */
import type { QueuedEvent } from './events.js';

/** The largest SQS message body (and the local queue's, so both behave alike); larger bodies go out as claim checks. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

export interface EventQueue {
  /**
   * Takes all of `events` or none. Resolves once they are held by the queue (durably, for a
   * durable adapter). Rejects with QueueFullError when the queue has no room: back-pressure.
   * An EncodedEvent is written as its text, a plain event as its JSON.stringify. The queue may keep
   * the event objects (the local queue hands them to its consumers in this process instead of
   * parsing its own text back): the caller must not change them once sent.
   */
  send(events: readonly SendableEvent[]): Promise<void>;
}

/**
 * An event with its JSON text, for a sender that already has the text (the audit API builds it
 * around the request's own body): the queue writes `json` instead of stringifying `event` again,
 * and its consumers in this process get `event`. `json` must parse to a value equal to `event`,
 * with the members in the same order; so the event is final when this is made, and read-only here,
 * the two travelling together as one value from the sender to the queue.
 */
export interface EncodedEvent {
  readonly event: Readonly<QueuedEvent>;
  readonly json: string;
}

/** What `EventQueue.send` takes: a plain event, which the queue encodes, or an EncodedEvent. */
export type SendableEvent = QueuedEvent | EncodedEvent;

/**
 * Tells an EncodedEvent from a plain event: every queued event has a `kind` (the schema requires it),
 * an EncodedEvent has none. (Not by its `json`: a decoded event may carry members the schema does
 * not name.)
 */
export function isEncodedEvent(item: SendableEvent): item is EncodedEvent {
  return !('kind' in item);
}

/** The event of what was sent. */
export function eventOf(item: SendableEvent): QueuedEvent {
  return isEncodedEvent(item) ? item.event : item;
}

/** A queue message already encoded (codec.ts `packedBodyOf`): its body and the number of events in it. */
export interface EncodedMessage {
  readonly body: string;
  readonly events: number;
  /**
   * The body's UTF-8 bytes in order, when the sender holds it so (the edge's event batcher, codec.ts
   * `packedBodyParts`): a queue that stores bytes writes these, and `body` is then never made.
   */
  readonly parts?: readonly Uint8Array[];
}

/**
 * A queue that takes messages already encoded (the durable local queue): the edge's event batcher
 * encodes events when it takes them and hands the queue the messages' text. Like `send`, all or none.
 */
export interface EncodedEventQueue {
  sendEncoded(message: EncodedMessage): Promise<void>;
  /** The largest body it takes as one message. */
  readonly maxMessageBytes: number;
}

/** The queue cannot take more events now; the source should answer 503 / drop and count. */
export class QueueFullError extends Error {
  override readonly name = 'QueueFullError';
  constructor(readonly capacity: number) {
    super(`the event queue is full (capacity ${capacity})`);
  }
}

/** The queue cannot be reached now (e.g. SQS keeps failing); like a full queue, the source answers 503. */
export class QueueUnavailableError extends Error {
  override readonly name: string = 'QueueUnavailableError';
}

/**
 * The queue cannot store events on its disk now (full disk, I/O error): nothing of the refused
 * events was kept, so the source answers 503 and the client's retry can succeed once there is room.
 */
export class QueueStorageError extends QueueUnavailableError {
  override readonly name = 'QueueStorageError';
}

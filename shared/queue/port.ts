/** The EventQueue port: sources hand accepted events to it; adapters are local (disk) or SQS. */
import type { QueuedEvent } from './events.js';

/** The largest SQS message body (and the local queue's, so both behave alike); larger bodies go out as claim checks. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576;

export interface EventQueue {
  /**
   * Takes all of `events` or none. Resolves once they are held by the queue (durably, for a
   * durable adapter). Rejects with QueueFullError when the queue has no room: back-pressure.
   * The queue may keep the event objects (the local queue hands them to its consumers in this
   * process instead of parsing its own text back): the caller must not change them once sent.
   */
  send(events: readonly QueuedEvent[]): Promise<void>;
}

/** A queue message already encoded (codec.ts `packedBodyOf`): its body and the number of events in it. */
export interface EncodedMessage {
  readonly body: string;
  readonly events: number;
  /**
   * The body's UTF-8 bytes in order, when the sender holds it so (the edge's event spool, codec.ts
   * `packedBodyParts`): a queue that stores bytes writes these, and `body` is then never made.
   */
  readonly parts?: readonly Uint8Array[];
}

/**
 * A queue that takes messages already encoded (the durable local queue): the edge's event spool
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

/**
 * What travels on the EventQueue: typed, versioned events with a stable id (idempotency key).
 * Adapters may pack several events into one queue message.
 */
import type { AuditEnvelope } from '../audit/envelope.js';

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
}

/** Every kind of event; later sources add theirs here. */
export type QueuedEvent = AuditQueuedEvent;
export type EventKind = QueuedEvent['kind'];

/**
 * One EventQueue in front of several: each destination has its own queue (and consumer), so a
 * destination that is down delays only itself. A send succeeds when every queue took the events;
 * when one fails the source answers 503 and the client's retry may repeat the events on the other
 * queues, which the writers absorb (idempotent by event id).
 */
import type { EventQueue, SendableEvent } from './port.js';

export class FanOutEventQueue implements EventQueue {
  constructor(private readonly queues: readonly EventQueue[]) {}

  async send(events: readonly SendableEvent[]): Promise<void> {
    const results = await Promise.allSettled(this.queues.map((q) => q.send(events)));
    const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) throw failure.reason;
  }
}

/**
 * Whether the queue can write its files now: a health check asks, and every journal write of the
 * queue (a send, a delivery's lease or outcome) goes through `writing` to keep the answer current.
 */
import { QueueStorageError } from '../port.js';

/**
 * The queue's files cannot be written (a full disk, an I/O error): set by the write that failed and
 * kept until a later write of the same log succeeds (a source's retry, a delivery's redelivery), so a
 * health check can say so while it lasts.
 */
export interface StorageFault {
  /** Which of its logs failed: the messages (a send) or the delivery outcomes (ack logs). */
  log: 'messages' | 'outcomes';
  /** The OS error code, e.g. `ENOSPC` (no path: it is shown on the container health endpoint). */
  code: string;
  /** Epoch ms of the first failure of this fault. */
  since: number;
}

/** The unresolved write failures of one queue, one per log at most. */
export class StorageFaults {
  private readonly faults = new Map<StorageFault['log'], StorageFault>();

  /** The oldest write failure still unresolved, or null when the queue can write. */
  get oldest(): StorageFault | null {
    let oldest: StorageFault | null = null;
    for (const fault of this.faults.values()) if (!oldest || fault.since < oldest.since) oldest = fault;
    return oldest;
  }

  /** Awaits a journal write of `log`, recording its failure or the end of the log's fault. */
  async writing<T>(log: StorageFault['log'], write: Promise<T>): Promise<T> {
    try {
      const result = await write;
      this.faults.delete(log);
      return result;
    } catch (err) {
      if (err instanceof QueueStorageError && !this.faults.has(log))
        this.faults.set(log, { log, code: errorCode(err), since: Date.now() });
      throw err;
    }
  }
}

/** The OS code behind a storage error (its cause's `code`), `EIO` when it names none. */
function errorCode(err: QueueStorageError): string {
  const cause: unknown = err.cause;
  return cause instanceof Error && 'code' in cause && typeof cause.code === 'string' ? cause.code : 'EIO';
}

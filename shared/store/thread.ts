/**
 * Where the store writer runs. node:sqlite is synchronous: every insert, commit and sync holds the
 * thread it runs on, and Svc's UDP listeners run on the main thread. `bench/udp.mjs --store`
 * showed the store's writes on the main thread lowering the zero-loss UDP rate, also when a
 * delivery was written in slices that give the event loop back between them: the listeners and
 * the writes then share one core. So the writer runs in a worker thread (`worker.ts`): the main
 * thread posts the delivery's events (a structured clone) and awaits the commit.
 *
 * The single executable (a CJS bundle in a Node.js single-executable application) has no worker
 * file to start: there the writer runs on the main thread, in slices (StoreWriter.writeInSlices).
 * Both are a StoreWriting, so the destinations and the counters do not know which.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { QueuedEvent } from '../queue/events.js';
import { isSingleExecutable } from '../runtime/single-executable.js';
import { StoreOpenError } from './database.js';
import type { UpkeepReport } from './upkeep.js';
import {
  type CounterSample,
  StoreUnavailableError,
  type StoreWriteResult,
  StoreWriter,
  type StoreWriterOptions,
} from './writer.js';

/** The nice value of the store's thread on Linux (worker.ts): below the listeners' main thread, not idle-only. */
export const STORE_THREAD_NICE = 10;

/** The store writer as the destinations, the counters and the upkeep use it, on whichever thread it runs. */
export interface StoreWriting {
  readonly file: string;
  /** A delivery, on disk when this resolves (StoreWriter.write; StoreUnavailableError when it cannot write now). */
  write(events: readonly QueuedEvent[]): Promise<StoreWriteResult>;
  writeCounters(timeMs: number, samples: readonly CounterSample[]): Promise<void>;
  upkeep(nowMs: number): Promise<UpkeepReport>;
  close(): Promise<void>;
}

/** A request to the store thread (worker.ts answers each with a StoreReply of the same id). */
export type StoreRequest =
  | { id: number; method: 'open' }
  | { id: number; method: 'write'; events: readonly QueuedEvent[] }
  | { id: number; method: 'counters'; timeMs: number; samples: readonly CounterSample[] }
  | { id: number; method: 'upkeep'; nowMs: number }
  | { id: number; method: 'close' };

/** The store thread's answer: a value, or the error by its kind and message. */
export type StoreReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; kind: 'open' | 'unavailable' | 'other'; message: string };

/** The writer on this thread: a delivery in slices, giving the event loop back between them. */
class MainThreadStore implements StoreWriting {
  readonly file: string;

  constructor(private readonly writer: StoreWriter) {
    this.file = writer.file;
  }

  write(events: readonly QueuedEvent[]): Promise<StoreWriteResult> {
    return this.writer.writeInSlices(events);
  }

  writeCounters(timeMs: number, samples: readonly CounterSample[]): Promise<void> {
    return Promise.resolve().then(() => this.writer.writeCounters(timeMs, samples));
  }

  upkeep(nowMs: number): Promise<UpkeepReport> {
    return Promise.resolve().then(() => this.writer.upkeep(nowMs));
  }

  close(): Promise<void> {
    return Promise.resolve().then(() => this.writer.close());
  }
}

/** The error a reply names, as the class the caller tells apart. */
function replyError(reply: Extract<StoreReply, { ok: false }>): Error {
  if (reply.kind === 'open') return new StoreOpenError(reply.message);
  if (reply.kind === 'unavailable') return new StoreUnavailableError(reply.message, null);
  return new Error(reply.message);
}

/**
 * The writer in a worker thread (worker.ts). A worker that exits while Svc runs (it should not)
 * fails what was in flight as the store being unavailable (the events wait in the queue), and the
 * next request starts a new one.
 */
class WorkerStore implements StoreWriting {
  readonly file: string;
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();

  constructor(private readonly options: StoreWriterOptions) {
    this.file = resolve(options.path);
  }

  /** Starts the thread and opens the database there; StoreOpenError naming the file when it cannot. */
  async open(): Promise<void> {
    await this.request({ method: 'open' });
  }

  async write(events: readonly QueuedEvent[]): Promise<StoreWriteResult> {
    // What worker.ts answers to `write` (a structured clone keeps the Map): the type does not cross the thread.
    return (await this.request({ method: 'write', events })) as StoreWriteResult;
  }

  async writeCounters(timeMs: number, samples: readonly CounterSample[]): Promise<void> {
    await this.request({ method: 'counters', timeMs, samples });
  }

  async upkeep(nowMs: number): Promise<UpkeepReport> {
    return (await this.request({ method: 'upkeep', nowMs })) as UpkeepReport;
  }

  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    try {
      await this.request({ method: 'close' });
    } finally {
      this.worker = null;
      await worker.terminate();
    }
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(fileURLToPath(new URL('./worker.js', import.meta.url)), { workerData: this.options });
    // The thread never keeps Svc running: the store component closes it at stop.
    worker.unref();
    worker.on('message', (reply: StoreReply) => {
      const waiting = this.pending.get(reply.id);
      if (!waiting) return;
      this.pending.delete(reply.id);
      if (reply.ok) waiting.resolve(reply.value);
      else waiting.reject(replyError(reply));
    });
    const failAll = (reason: string) => {
      if (this.worker === worker) this.worker = null;
      for (const [id, waiting] of this.pending) {
        this.pending.delete(id);
        waiting.reject(new StoreUnavailableError(`the store's thread stopped (${reason})`, null));
      }
    };
    worker.on('error', (err: unknown) => failAll(err instanceof Error ? err.message : String(err)));
    worker.on('exit', (code) => failAll(`exit code ${code}`));
    this.worker = worker;
    return worker;
  }

  private request(body: DistributiveOmit<StoreRequest, 'id'>): Promise<unknown> {
    const worker = this.thread();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // A thread started again opens the database at its first write (StoreWriter.connection).
      worker.postMessage({ id, ...body });
    });
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * The store opened for writing: in a worker thread, or on the main thread in the single
 * executable (or when `thread` is false). Throws StoreOpenError naming the file when it cannot be opened.
 */
export async function openStoreWriting(
  options: StoreWriterOptions,
  thread = !isSingleExecutable(),
): Promise<StoreWriting> {
  if (thread) {
    const store = new WorkerStore(options);
    try {
      await store.open();
    } catch (err) {
      await store.close().catch(() => undefined);
      throw err;
    }
    return store;
  }
  const writer = new StoreWriter(options);
  writer.open();
  return new MainThreadStore(writer);
}

/**
 * The store's worker thread (thread.ts starts it with the StoreWriterOptions as its workerData):
 * one StoreWriter, answering each request in order. A delivery is one call of `write` here (the
 * main thread's event loop is not this one, so it need not be sliced).
 *
 * On Linux the thread lowers its own scheduling priority (STORE_THREAD_NICE): when the CPU is short,
 * the listeners on the main thread go first and the store catches up from the durable queue
 * afterwards (`bench/udp.mjs --store` measures the zero-loss rate with and without it).
 */
import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { StoreOpenError } from './database.js';
import { STORE_THREAD_NICE, type StoreReply, type StoreRequest } from './thread.js';
import { StoreUnavailableError, StoreWriter, type StoreWriterOptions } from './writer.js';

function answer(writer: StoreWriter, request: StoreRequest): unknown {
  switch (request.method) {
    case 'open':
      writer.open();
      return null;
    case 'write':
      return writer.write(request.events);
    case 'counters':
      writer.writeCounters(request.timeMs, request.samples);
      return null;
    case 'upkeep':
      return writer.upkeep(request.nowMs);
    case 'close':
      writer.close();
      return null;
  }
}

/**
 * Lowers this thread's priority. On Linux, setpriority(2) of "the calling process" (pid 0) sets the
 * calling thread's nice value only; elsewhere (Windows: the process's priority class, macOS) it would
 * lower the whole process, listeners included, so it is left alone there.
 */
function lowerThreadPriority(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(STORE_THREAD_NICE);
  } catch {
    // Not allowed (a restricted container): the store runs at the process's priority, as elsewhere.
  }
}

function kindOf(err: unknown): 'open' | 'unavailable' | 'other' {
  if (err instanceof StoreOpenError) return 'open';
  if (err instanceof StoreUnavailableError) return 'unavailable';
  return 'other';
}

const port = parentPort;
if (port) {
  lowerThreadPriority();
  // workerData is the StoreWriterOptions thread.ts passed; structured-cloned, so plain data.
  const writer = new StoreWriter(workerData as StoreWriterOptions);
  port.on('message', (request: StoreRequest) => {
    let reply: StoreReply;
    try {
      reply = { id: request.id, ok: true, value: answer(writer, request) };
    } catch (err) {
      reply = {
        id: request.id,
        ok: false,
        kind: kindOf(err),
        message: err instanceof Error ? err.message : String(err),
      };
    }
    port.postMessage(reply);
  });
}

/**
 * A recording HTTP server for tests. It stands in for the monitoring SaaS (monsaas, platform-formats.md
 * §8): no local stand-in of that service exists, so the tests check the requests Svc makes against the
 * spec here. It listens on 127.0.0.1 on a free port, records every request (method, url, headers,
 * raw and JSON-parsed body) and answers with a programmable sequence of replies:
 *
 *   const server = await startRecordingServer();
 *   server.reply(503, 503, 202);                  // the next three requests; then the fallback (202)
 *   server.reply({ status: 202, delayMs: 2_000 }); // answers after 2 s (client timeouts)
 *   ... server.requests ...
 *   await server.stop();
 */

import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { LOOPBACK } from './ports.js';

export interface RecordedHttpRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  /** Header names lower-cased (node:http). */
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  body: unknown;
  /** Date.now() when the request was complete. */
  at: number;
}

/** A status, or a status with a delay, body and headers. */
export type Reply = number | { status: number; delayMs?: number; body?: string; headers?: Record<string, string> };

export interface RecordingServer {
  readonly host: typeof LOOPBACK;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request so far, in arrival order. */
  readonly requests: RecordedHttpRequest[];
  /** Queues replies for the next requests (appended to those still queued). */
  reply(...replies: Reply[]): void;
  /** The reply once the queue is empty (initially 202). */
  setFallback(reply: Reply): void;
  /** Forgets the recorded requests and the queued replies; the fallback becomes 202 again. */
  reset(): void;
  /** Closes every connection (pending delayed replies included) and the listener. Idempotent. */
  stop(): Promise<void>;
}

const DEFAULT_REPLY: Reply = 202;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export async function startRecordingServer(): Promise<RecordingServer> {
  const requests: RecordedHttpRequest[] = [];
  const queue: Reply[] = [];
  let fallback: Reply = DEFAULT_REPLY;
  const timers = new Set<NodeJS.Timeout>();

  const answer = (res: ServerResponse, reply: Reply): void => {
    const r = typeof reply === 'number' ? { status: reply } : reply;
    const send = (): void => {
      if (res.destroyed || res.writableEnded) return;
      const body =
        r.body ?? (r.status === 200 || r.status === 202 ? '{"requestId":"test"}' : `{"error":"status ${r.status}"}`);
      res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
      res.end(body);
    };
    if (r.delayMs === undefined || r.delayMs <= 0) {
      send();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      send();
    }, r.delayMs);
    timers.add(timer);
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawBody,
        body: parseJson(rawBody),
        at: Date.now(),
      });
      answer(res, queue.shift() ?? fallback);
    });
    // A client that gave up (timeout) resets the connection: nothing to do.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: LOOPBACK, port: 0 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`unexpected server address: ${String(address)}`);
  const { port } = address;

  let stopping: Promise<void> | undefined;
  return {
    host: LOOPBACK,
    port,
    url: `http://${LOOPBACK}:${port}`,
    requests,
    reply: (...replies) => {
      queue.push(...replies);
    },
    setFallback: (reply) => {
      fallback = reply;
    },
    reset: () => {
      requests.length = 0;
      queue.length = 0;
      fallback = DEFAULT_REPLY;
    },
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}

/**
 * One recording server for the tests of a file: started before the first, reset before each,
 * stopped after the last (vitest hooks). Read it through `server()` inside a test.
 */
export function recordingServerForFile(): () => RecordingServer {
  let server: RecordingServer | undefined;
  beforeAll(async () => {
    server = await startRecordingServer();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(() => {
    server?.reset();
  });
  return () => {
    if (server === undefined) throw new Error('the recording server starts before the first test');
    return server;
  };
}

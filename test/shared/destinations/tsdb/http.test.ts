/**
 * The writer's HTTP (http.ts HttpTransport, node:http over a keep-alive connection) against a
 * real node:http server on loopback that misbehaves on request: answers 200 or 204, cuts the
 * connection before or in the middle of its answer, stops in the middle of its answer, closes a
 * kept-alive connection. Version 1's write request for all (the transport is the same for all three).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { LOOPBACK } from '../../../support/ports.js';
import { points, type Recorder, recorder, recordingSleep, tsdbConfig } from './helpers.js';

const MODULE = 'test-module';

/** What the server does with the next requests, in order (then: 204). */
type Behaviour = 'ok-204' | 'ok-200' | 'reset' | 'cut-mid-body' | 'stall-mid-body' | 'reset-if-reused';

let server: Server;
let port: number;
let plan: Behaviour[] = [];
/** Per request: the connection it came on (1, 2, …) and its body. */
let seen: { connection: number; body: string }[] = [];
const connections = new WeakMap<Socket, { id: number; requests: number }>();
let connectionCount = 0;

function handle(req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const conn = connections.get(req.socket) ?? { id: 0, requests: 0 };
    conn.requests += 1;
    seen.push({ connection: conn.id, body: Buffer.concat(chunks).toString('utf8') });
    const behaviour = plan.shift() ?? 'ok-204';
    if (behaviour === 'ok-204') {
      res.writeHead(204).end();
    } else if (behaviour === 'ok-200') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"results":[]}');
    } else if (behaviour === 'reset' || (behaviour === 'reset-if-reused' && conn.requests > 1)) {
      req.socket.resetAndDestroy();
    } else if (behaviour === 'reset-if-reused') {
      res.writeHead(204).end();
    } else {
      // Headers and part of an error body; the rest never comes.
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': '100' });
      res.write('{"error":"par');
      if (behaviour === 'cut-mid-body') setTimeout(() => req.socket.destroy(), 20);
    }
  });
}

beforeAll(async () => {
  server = createServer(handle);
  server.on('connection', (socket: Socket) => {
    connectionCount += 1;
    connections.set(socket, { id: connectionCount, requests: 0 });
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

let rec: Recorder;
beforeEach(() => {
  rec = recorder();
  plan = [];
  seen = [];
});

function writer(options: { requestTimeoutMs?: number } = {}): { writer: TsdbWriter; waits: number[] } {
  const { sleep, waits } = recordingSleep();
  return {
    writer: new TsdbWriter({
      config: tsdbConfig({ version: 1, port }),
      log: rec.log,
      onError: rec.onError,
      sleep,
      ...options,
    }),
    waits,
  };
}

describe('the tsdb writer over node:http', () => {
  it('204 and 200 are both success; consecutive writes share one kept-alive connection', async () => {
    plan = ['ok-204', 'ok-200', 'ok-204'];
    const { writer: w, waits } = writer();
    for (let i = 0; i < 3; i++)
      expect(await w.write(points(2), MODULE)).toMatchObject({ written: 2, dropped: 0, failedWhole: [], requests: 1 });
    expect(waits).toEqual([]);
    expect(new Set(seen.map((s) => s.connection)).size).toBe(1);
    expect(seen[0]?.body.split('\n')).toHaveLength(2);
  });

  it('writes in flight at once each send their own lines; a later, smaller write sends only its own', async () => {
    const { writer: w } = writer();
    const a = points(300, 'first');
    const b = points(200, 'second');
    const reports = await Promise.all([w.write(a, MODULE), w.write(b, MODULE)]);
    expect(reports.map((r) => r.written)).toEqual([300, 200]);
    const bodies = seen.map((s) => s.body.split('\n'));
    expect(bodies.map((lines) => lines.length).sort()).toEqual([200, 300]);
    for (const lines of bodies) expect(new Set(lines.map((l) => l.split(',')[0])).size).toBe(1);
    expect(await w.write(points(2, 'third'), MODULE)).toMatchObject({ written: 2 });
    expect(seen[2]?.body.split('\n').map((l) => l.split(',')[0])).toEqual(['third', 'third']);
  });

  it.each([
    ['a connection reset before any answer is a connection-level failure', 'reset', 'ECONNRESET', {}],
    [
      'a timeout in the middle of the answer body is ETIMEDOUT',
      'stall-mid-body',
      'ETIMEDOUT',
      { requestTimeoutMs: 100 },
    ],
  ] as const)('%s: retried, then failed whole', async (_what, action, code, options) => {
    plan = [action, action, action, action];
    const { writer: w, waits } = writer(options);
    const report = await w.write(points(3), MODULE);
    expect(report).toMatchObject({ written: 0, requests: 4 });
    expect(report.failedWhole).toHaveLength(3);
    expect(waits).toEqual([1_000, 2_000, 4_000]);
    expect(rec.errors[0]?.err).toMatchObject({ code });
  });

  it('an answer cut off in its body is a connection-level failure (no ladder), and the retry is written', async () => {
    plan = ['cut-mid-body', 'ok-204'];
    const { writer: w, waits } = writer();
    const report = await w.write(points(3), MODULE);
    expect(report).toMatchObject({ written: 3, dropped: 0, failedWhole: [], requests: 2 });
    expect(waits).toEqual([1_000]);
    expect(rec.at('debug')[0]?.obj).toMatchObject({ code: 'ECONNRESET' });
    // The chunk was sent whole both times, not split down the ladder.
    expect(seen.map((s) => s.body.split('\n').length)).toEqual([3, 3]);
  });

  it('a kept-alive connection the server drops is replaced at once: the write succeeds without a retry wait', async () => {
    plan = ['reset-if-reused', 'reset-if-reused', 'ok-204'];
    const { writer: w, waits } = writer();
    expect(await w.write(points(1), MODULE)).toMatchObject({ written: 1, requests: 1 });
    expect(await w.write(points(1), MODULE)).toMatchObject({ written: 1, failedWhole: [], requests: 1 });
    expect(waits).toEqual([]);
    expect(rec.errors).toEqual([]);
    // The second write was sent on the first connection (reset) and again on a new one.
    expect(seen.map((s) => s.connection)).toEqual([
      seen[0]?.connection,
      seen[0]?.connection,
      (seen[0]?.connection ?? 0) + 1,
    ]);
  });
});

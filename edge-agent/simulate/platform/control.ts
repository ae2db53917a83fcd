/**
 * The control endpoint of the platform simulator: plain HTTP on 127.0.0.1 only, so a person or a
 * test can make a simulated server fail and heal while the simulator runs (`curl -X POST
 * http://127.0.0.1:<port>/fail/node2/timeout`). Signals would not do: Windows has no SIGUSR1, and a
 * signal cannot say which server or how.
 *
 *   GET  /                        the step, every target's mode and the request counts (JSON)
 *   POST /fail/<target>/<mode>    target: a server name, `apps` or `all`; mode: http-500, timeout, bad-body, cert-reject
 *   POST /heal[/<target>]         back to normal (default every target)
 *   POST /step[/<n>]              move the platform n steps on (default 1)
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type FailureMode, isFailureMode, notAFailureMode } from './failures.js';
import type { SimulatorStatus } from './status.js';

/** A running control endpoint: where to reach it, and how the simulator's stop() closes it. */
export interface ControlServer {
  url: string;
  close(): Promise<void>;
}

/**
 * What the endpoint drives: the simulator's switches, step and status. Named here, not taken from
 * the simulator, because the simulator starts this endpoint: the two must not import each other.
 */
interface Controlled {
  fail(target: string, mode: FailureMode): void;
  heal(target?: string): void;
  step(steps?: number): void;
  status(): SimulatorStatus;
}

const USAGE = 'GET /; POST /fail/<target>/<mode>; POST /heal[/<target>]; POST /step[/<n>]';

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = `${JSON.stringify(body, null, 2)}\n`;
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** One request: what to do and the answer, or the problem with it. */
function handle(sim: Controlled, method: string, path: string): { status: number; body: unknown } {
  const parts = path
    .split('/')
    .filter((p) => p !== '')
    .map(decodeURIComponent);
  const [verb, ...args] = parts;
  if (verb === undefined) {
    return method === 'GET'
      ? { status: 200, body: { ...sim.status(), usage: USAGE } }
      : { status: 405, body: { error: `${method} / is not allowed; use GET`, usage: USAGE } };
  }
  if (!['fail', 'heal', 'step'].includes(verb)) return { status: 404, body: { error: `no ${path}`, usage: USAGE } };
  if (method !== 'POST')
    return { status: 405, body: { error: `${method} ${path} is not allowed; use POST`, usage: USAGE } };
  try {
    if (verb === 'fail') {
      const [target, mode] = args;
      if (target === undefined || mode === undefined || args.length > 2)
        return { status: 404, body: { error: 'expected /fail/<target>/<mode>', usage: USAGE } };
      if (!isFailureMode(mode)) return { status: 400, body: { error: `failure mode ${notAFailureMode(mode)}` } };
      sim.fail(target, mode);
    } else if (verb === 'heal') {
      if (args.length > 1) return { status: 404, body: { error: 'expected /heal or /heal/<target>', usage: USAGE } };
      sim.heal(args[0]);
    } else {
      const [n = '1'] = args;
      if (args.length > 1 || !/^\d{1,9}$/.test(n))
        return {
          status: 400,
          body: { error: `expected /step or /step/<n> with n a whole number (got ${JSON.stringify(path)})` },
        };
      sim.step(Number(n));
    }
  } catch (err) {
    // The simulator names an unknown target with the valid ones.
    return { status: 400, body: { error: err instanceof Error ? err.message : String(err) } };
  }
  return { status: 200, body: sim.status() };
}

/** Starts the control endpoint on `host` (a loopback address) and `port` (0 = a free one). */
export function startControlServer(sim: Controlled, host: string, port: number): Promise<ControlServer> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://control.invalid').pathname;
    // The request body is not read: everything is in the path. Drain it so keep-alive works.
    req.resume();
    let answer: { status: number; body: unknown };
    try {
      answer = handle(sim, req.method ?? 'GET', path);
    } catch {
      answer = { status: 400, body: { error: `cannot decode ${JSON.stringify(req.url ?? '')}` } };
    }
    reply(res, answer.status, answer.body);
  });
  return new Promise((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port} (control endpoint): ${err.code ?? err.message}`)),
    );
    server.listen({ host, port }, () => {
      const address = server.address();
      const bound = typeof address === 'object' && address !== null ? address.port : port;
      resolve({
        url: `http://${host}:${bound}`,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections();
            server.close(() => done());
          }),
      });
    });
  });
}

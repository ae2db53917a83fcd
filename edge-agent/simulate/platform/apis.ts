/**
 * The request handler of the platform simulator: it tells the APIs apart by what the connection's
 * port serves (an endpoint: one simulated server's health or session API, or the app list),
 * answers each from the model at the current step, applies the target's failure switch and the
 * request checks, and counts what it answered.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TargetSwitches } from './failures.js';
import type { PlatformModel } from './model.js';
import { qlikUserProblem, requestHeader, xrfkeyProblem } from './request-checks.js';
import type { SimulatorStats } from './status.js';

/** What one listening port serves. */
export interface Endpoint {
  /** Failure target: a server name or `apps`. */
  target: string;
  /** The engine serves the health API, the proxy the session API, the repository the app list. */
  role: 'engine' | 'proxy' | 'repository';
  /** Model index of the server (engine, proxy). */
  index: number;
  /** The endpoint in messages, e.g. `node2 health API`. */
  what: string;
}

type Api = 'health' | 'sessions' | 'apps';

/** An API's answer before it is written: status and body (a string goes out as text, the rest as JSON). */
interface Answer {
  status: number;
  body: unknown;
}

/** The platform APIs every endpoint shares, and the counts of what they answered. */
export class PlatformApis {
  constructor(
    private readonly model: PlatformModel,
    /** Normalised, as the session API paths name them. */
    private readonly virtualProxies: readonly string[],
    private readonly currentStep: () => number,
    private readonly switches: TargetSwitches,
    private readonly stats: SimulatorStats,
  ) {}

  /** Answers one request on `endpoint`: 404/405 off its API, else by the target's mode. */
  handle(endpoint: Endpoint, request: IncomingMessage, response: ServerResponse): void {
    const url = new URL(request.url ?? '/', 'https://simulator.invalid');
    const found = this.route(endpoint, url);
    if (found === undefined) {
      this.stats.notFound++;
      return send(response, 404, `no ${endpoint.what} at ${url.pathname}`);
    }
    if (request.method !== 'GET') {
      this.stats.notFound++;
      response.setHeader('Allow', 'GET');
      return send(response, 405, `${request.method ?? ''} is not allowed; use GET`);
    }
    const { api, virtualProxy } = found;
    const mode = this.switches.mode(endpoint.target) ?? 'ok';
    if (mode !== 'ok') this.stats[api].failed++;
    switch (mode) {
      case 'http-500':
        return send(response, 500, 'Internal Server Error (simulated)');
      case 'timeout':
        // Held unanswered until the client gives up, the target's mode changes or the simulator stops.
        return;
      case 'bad-body':
        return send(response, 200, this.badBody(api, endpoint));
      case 'cert-reject':
        // A connection made before the switch: the switch closes it, this only covers the race.
        return void request.socket.destroy();
      case 'ok': {
        const { status, body } = this.answer(api, endpoint, url, request, virtualProxy);
        if (status === 200) this.stats[api].ok++;
        else this.stats[api].rejected++;
        return send(response, status, body);
      }
    }
  }

  /** The API a path names on this endpoint (and the session API's virtual proxy), or undefined for none. */
  private route(endpoint: Endpoint, url: URL): { api: Api; virtualProxy: string } | undefined {
    if (endpoint.role === 'engine')
      return url.pathname === '/engine/healthcheck' ? { api: 'health', virtualProxy: '' } : undefined;
    if (endpoint.role === 'repository')
      return url.pathname === '/qrs/app' ? { api: 'apps', virtualProxy: '' } : undefined;
    const match = /^\/qps(\/[^/]+)?\/session$/.exec(url.pathname);
    const virtualProxy = match === null ? undefined : (match[1] ?? '/');
    return virtualProxy !== undefined && this.virtualProxies.includes(virtualProxy)
      ? { api: 'sessions', virtualProxy }
      : undefined;
  }

  /** The good body of an API, or what a request check refuses. */
  private answer(api: Api, endpoint: Endpoint, url: URL, request: IncomingMessage, virtualProxy: string): Answer {
    if (api === 'health') return { status: 200, body: this.model.at(endpoint.index, this.currentStep()).health() };
    const xrfkey = xrfkeyProblem(url, requestHeader(request, 'x-qlik-xrfkey'));
    if (xrfkey !== undefined) return { status: 400, body: xrfkey };
    if (api === 'sessions')
      return { status: 200, body: this.model.at(endpoint.index, this.currentStep()).sessionList(virtualProxy) };
    const user = qlikUserProblem(requestHeader(request, 'x-qlik-user'));
    if (user !== undefined) return { status: 403, body: user };
    return { status: 200, body: this.model.appList() };
  }

  /** A body that is JSON but not the API's shape (the `bad-body` switch). */
  private badBody(api: Api, endpoint: Endpoint): unknown {
    if (api === 'health') {
      const { mem: _mem, ...body } = this.model.at(endpoint.index, this.currentStep()).health();
      return { ...body, cpu: { total: `${body.cpu.total}%` } };
    }
    if (api === 'sessions') return { Message: 'The session list is not available' };
    return { apps: this.model.appList().length };
  }
}

/** Writes an answer whole, with its length, so keep-alive clients (Svc's pollers) reuse the connection. */
function send(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
    'Cache-Control': 'no-cache',
    'Content-Length': Buffer.byteLength(text),
  });
  response.end(text);
}

/**
 * The local gateway as the front door that slow and oversized clients meet first, as API Gateway is
 * on AWS (docs/audit-api.md, "Local gateway limits"): the connections a client address may hold,
 * how long headers and a body may take, how large a body may be, and the answers to requests Node's
 * HTTP parser refuses. Every rejection is counted, and logged at most once per interval per client
 * address and kind. Nothing here knows API Gateway's event: that is event.ts.
 */
import { maxHeaderSize, type ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { normaliseIp } from '../../../shared/audit/client-ip.js';
import { ingestionError } from '../../../shared/audit/response.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { Log } from '../../../shared/logging/log.js';
import { LogThrottle } from '../../../shared/logging/throttle.js';

/** The settings of `Svc.auditEvents` the gateway enforces itself. */
export type GatewayLimits = Pick<
  SvcConfig['auditEvents'],
  'maxBodyBytes' | 'headersTimeout' | 'bodyTimeout' | 'maxConnectionsPerClient' | 'trustedProxies'
>;

/** Requests and connections the gateway turned away itself, since start. */
export interface GatewayCounters {
  /** Connections closed at once: their address already held `maxConnectionsPerClient`, none of them idle. */
  connectionsRefused: number;
  /** Bodies not read: the Content-Length header or the body passed `maxBodyBytes` (the answer is 413, or 429/401 first). */
  tooLarge: number;
  /** 408: the headers or the body took longer than `headersTimeout` / `bodyTimeout`. */
  timedOut: number;
  /** 400, 417 or 431: a request Node's HTTP parser rejects, or an `Expect` other than 100-continue. */
  badRequests: number;
}

/** A kind of rejection: what its counter counts. */
export type Rejection = keyof GatewayCounters;

/** Node checks headersTimeout and requestTimeout on this interval (default 30 s): it bounds how late a slow client is cut off. */
export function connectionsCheckingInterval(headersTimeout: number): number {
  return Math.min(1000, Math.max(10, Math.floor(headersTimeout / 4)));
}

/** The connection's (normalised) peer address, for the log lines of rejections. */
export function addressOf(socket: Duplex): string {
  return socket instanceof Socket ? normaliseIp(socket.remoteAddress ?? '') : '';
}

/** Counts what the gateway turns away and logs it, at most once per interval per client address and kind. */
export class Rejections {
  private readonly counts: GatewayCounters = { connectionsRefused: 0, tooLarge: 0, timedOut: 0, badRequests: 0 };
  private readonly throttle: LogThrottle;

  constructor(
    private readonly name: string,
    private readonly log: Log,
    logIntervalMs: number,
  ) {
    this.throttle = new LogThrottle(logIntervalMs);
  }

  /** What was turned away since start (a copy). */
  get counters(): GatewayCounters {
    return { ...this.counts };
  }

  /** Counts a rejection and logs it, at most once per interval per client address and kind. */
  reject(kind: Rejection, address: string, fields: object, what: string): void {
    this.counts[kind]++;
    const { log, suppressed } = this.throttle.take(`${kind} ${address}`);
    if (!log) return;
    this.log.warn(
      {
        clientAddress: address,
        rejection: kind,
        ...fields,
        total: this.counts[kind],
        suppressedSinceLastLine: suppressed,
      },
      `${this.name}: ${address}: ${what}`,
    );
  }
}

interface AddressConnections {
  open: Set<Duplex>;
  /** Connections between requests, the longest idle first. */
  idle: Set<Duplex>;
}

/**
 * The open connections of each client address, held to `maxConnectionsPerClient` (the
 * `trustedProxies`, through which many clients come, are not counted), and which of them are idle
 * between requests or serving one.
 */
export class ClientConnections {
  private readonly exempt: ReadonlySet<string>;
  /** Open connections per (normalised) peer address; exempt addresses are not counted. */
  private readonly byAddress = new Map<string, AddressConnections>();
  /** The entry of `byAddress` a counted connection belongs to. */
  private readonly connectionsOf = new WeakMap<Duplex, AddressConnections>();
  /** The response of the request a connection is serving, while there is one. */
  private readonly inFlight = new WeakMap<Duplex, ServerResponse>();

  constructor(
    private readonly limits: GatewayLimits,
    private readonly rejections: Rejections,
  ) {
    this.exempt = new Set(limits.trustedProxies.map(normaliseIp));
  }

  /** The addresses not counted, as the gateway's start line reports them. */
  get exemptAddresses(): string[] {
    return [...this.exempt];
  }

  /**
   * Counts the connection against its address. At the limit, the address's longest idle kept-alive
   * connection gives way (HTTP clients keep idle connections and open new ones freely, and must
   * expect a server to close an idle one); when none is idle, the new connection is closed at once.
   */
  admit(socket: Socket): void {
    // Undefined when the client has already gone.
    if (socket.remoteAddress === undefined) return;
    const address = normaliseIp(socket.remoteAddress);
    if (this.exempt.has(address)) return;
    const limit = this.limits.maxConnectionsPerClient;
    const connections = this.byAddress.get(address) ?? { open: new Set<Duplex>(), idle: new Set<Duplex>() };
    if (connections.open.size >= limit) {
      const [longestIdle] = connections.idle;
      if (longestIdle === undefined) {
        // No answer: it would mean waiting for a request, the very thing a client holding connections withholds.
        socket.destroy();
        this.rejections.reject(
          'connectionsRefused',
          address,
          { limit },
          `connection closed at once: the address already holds ${limit} open connections, none idle (Svc.auditEvents.maxConnectionsPerClient)`,
        );
        return;
      }
      // Out of the count now, not at its 'close': a burst of connections must not pick it twice.
      connections.open.delete(longestIdle);
      connections.idle.delete(longestIdle);
      longestIdle.destroy();
    }
    this.byAddress.set(address, connections);
    this.connectionsOf.set(socket, connections);
    connections.open.add(socket);
    socket.once('close', () => {
      connections.open.delete(socket);
      connections.idle.delete(socket);
      if (connections.open.size === 0 && this.byAddress.get(address) === connections) this.byAddress.delete(address);
    });
  }

  /** The connection serves a request from now until `res` closes; then it is idle again, if still open. */
  serving(socket: Duplex, res: ServerResponse): void {
    this.inFlight.set(socket, res);
    this.markIdle(socket, false);
    res.once('close', () => {
      if (this.inFlight.get(socket) !== res) return;
      this.inFlight.delete(socket);
      if (!socket.destroyed) this.markIdle(socket, true);
    });
  }

  /** The response of the request the connection is serving, if it is serving one. */
  answering(socket: Duplex): ServerResponse | undefined {
    return this.inFlight.get(socket);
  }

  /** Between requests a kept-alive connection is idle; it is busy from its next request on. */
  private markIdle(socket: Duplex, idle: boolean): void {
    const connections = this.connectionsOf.get(socket);
    if (!connections) return;
    // Deleted first, so that the set's order is the order connections became idle.
    connections.idle.delete(socket);
    if (idle) connections.idle.add(socket);
  }
}

/** The code of a Node error ('' without one). */
export function errorCode(err: Error): string {
  return 'code' in err && typeof err.code === 'string' ? err.code : '';
}

/**
 * The answer to a request Node's HTTP parser gave up on (its `clientError`), and the rejection it
 * counts as: 408 when the headers, or with a request in flight the whole request, took too long;
 * 431 for headers over Node's size limit; 400 for anything that is not HTTP/1.1.
 */
export function clientErrorAnswer(
  code: string,
  requestInFlight: boolean,
  limits: GatewayLimits,
  receivedAt: string,
): { kind: Rejection; result: APIGatewayProxyStructuredResultV2 } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    // With a request in flight its headers were in, so the whole request took too long (requestTimeout).
    const { headersTimeout, bodyTimeout } = limits;
    const message = requestInFlight
      ? `the request did not arrive within ${headersTimeout + bodyTimeout} ms`
      : `the request headers did not arrive within ${headersTimeout} ms`;
    return {
      kind: 'timedOut',
      result: ingestionError(receivedAt, 408, 'dropped', 'Request timeout', { errors: [{ message }] }),
    };
  }
  if (code === 'HPE_HEADER_OVERFLOW')
    return {
      kind: 'badRequests',
      result: ingestionError(receivedAt, 431, 'dropped', 'Request header fields too large', {
        errors: [{ message: `the request headers exceed ${maxHeaderSize} bytes` }],
      }),
    };
  return {
    kind: 'badRequests',
    result: ingestionError(receivedAt, 400, 'dropped', 'Bad request', {
      errors: [{ message: 'the request is not valid HTTP/1.1' }],
    }),
  };
}

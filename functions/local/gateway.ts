/**
 * Local mode's stand-in for API Gateway ("sam-style"): an HTTP server that turns each request into
 * an API Gateway HTTP API event (payload format 2.0), invokes the very handler the Lambda runs, and
 * writes its result back.
 *
 * Like API Gateway on AWS, it is also the front door that slow and oversized clients meet first
 * (docs/audit-api.md, "Local gateway limits"). A body that passes `maxBodyBytes` (by its
 * Content-Length, or as it arrives) is not read: the handler's `oversized` entry answers, with no
 * body, after the same checks (so 413, or 429 or 401 first). Headers or a body that take too long
 * get 408. A new connection from an address that already holds `maxConnectionsPerClient` takes the
 * place of its longest idle one, or is closed at once when none is idle. The gateway's own answers
 * have the ingestion response shape of the handler's, from the same builders.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingMessage,
  maxHeaderSize,
  type Server,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { type AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { normaliseIp } from '../../shared/audit/client-ip.js';
import { ingestionError, internalError } from '../../shared/audit/response.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import type { Log } from '../../shared/logging/log.js';
import { LogThrottle } from '../../shared/logging/throttle.js';
import type { Component } from '../../shared/runtime/lifecycle.js';

export type HttpApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** The settings of `Svc.auditEvents` the gateway enforces itself. */
export type GatewayLimits = Pick<
  SvcConfig['auditEvents'],
  'maxBodyBytes' | 'headersTimeout' | 'bodyTimeout' | 'maxConnectionsPerClient' | 'trustedProxies'
>;

export interface LocalGatewayOptions {
  name: string;
  host: string;
  port: number;
  handler: HttpApiHandler;
  /** Answers, without the body, a request whose body passes `maxBodyBytes` (the audit handler's `oversized`). */
  oversized: HttpApiHandler;
  log: Log;
  limits: GatewayLimits;
  /** At most one log line per client address and kind of rejection in this time; default 60 s. */
  logIntervalMs?: number;
}

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

type Rejection = keyof GatewayCounters;

interface AddressConnections {
  open: Set<Duplex>;
  /** Connections between requests, the longest idle first. */
  idle: Set<Duplex>;
}

const unsupported = (): never => {
  throw new Error('callback-style completion is not supported by the local gateway');
};

/**
 * A Lambda context for local invocations; only what handlers read is meaningful. A class, so a
 * request costs one object (its methods live on the prototype), not an object and three closures.
 */
class LocalContext implements Context {
  callbackWaitsForEmptyEventLoop = false;
  readonly functionVersion = '$LATEST';
  readonly invokedFunctionArn: string;
  readonly memoryLimitInMB = '0';
  readonly logGroupName = 'local';
  readonly logStreamName = 'local';
  private readonly deadline = Date.now() + LOCAL_INVOCATION_MS;
  constructor(
    readonly functionName: string,
    readonly awsRequestId: string,
  ) {
    this.invokedFunctionArn = `arn:aws:lambda:local:000000000000:function:${functionName}`;
  }
  getRemainingTimeInMillis(): number {
    return Math.max(0, this.deadline - Date.now());
  }
  done = unsupported;
  fail = unsupported;
  succeed = unsupported;
}

/** The time a local invocation has, as a Lambda's timeout (the handler answers 500 just before it). */
export const LOCAL_INVOCATION_MS = 30_000;

export function localContext(functionName: string, requestId: string): Context {
  return new LocalContext(functionName, requestId);
}

/** A request target the URL parser would leave as it is: a path of plain characters, no query. */
const PLAIN_PATH = /^\/(?!\/)[\w\-/]*$/;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number): string => (n < 10 ? `0${n}` : String(n));
let timeSecond = NaN;
let timeText = '';

/** API Gateway's `requestContext.time` ("24/Nov/2026:19:03:58 +0000"): made once per second, not per request. */
export function apiGatewayTime(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  if (second !== timeSecond) {
    const d = new Date(second * 1000);
    timeText = `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()] ?? ''}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
    timeSecond = second;
  }
  return timeText;
}

/**
 * The request's headers as API Gateway (payload 2.0) gives them: names in lower case, a repeated
 * header's values joined by commas (Node would join most with ", " and keep only the first of
 * some), and the Cookie headers not among them but split into `cookies`. From `rawHeaders`, the
 * headers as they arrived. The object has no prototype, so a header named like an Object.prototype
 * member ("constructor", "__proto__") is a header like any other.
 */
function headersOf(raw: readonly string[]): { headers: Record<string, string>; cookies: string[] | undefined } {
  const headers = Object.create(null) as Record<string, string>;
  let cookies: string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    const value = raw[i + 1] ?? '';
    if (name === 'cookie') {
      for (const part of value.split(';')) {
        const cookie = part.trim();
        if (cookie !== '') (cookies ??= []).push(cookie);
      }
      continue;
    }
    const before = headers[name];
    headers[name] = before === undefined ? value : `${before},${value}`;
  }
  return { headers, cookies };
}

/** The first label of the host ("api" of "api.example.com"), as API Gateway's `domainPrefix`. */
function domainPrefixOf(host: string): string {
  const dot = host.indexOf('.');
  return dot < 0 ? host : host.slice(0, dot);
}

/**
 * The API Gateway HTTP API event (payload format 2.0) for a request, as API Gateway would send it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html).
 * Every event has the same members in the same order (`cookies`, `queryStringParameters` and
 * `body` are undefined when API Gateway leaves them out), so the handler's code sees one shape.
 * The body is UTF-8 text (`isBase64Encoded` false), as the gateway always gave it.
 */
export function toHttpApiEvent(
  req: IncomingMessage,
  body: Buffer,
  requestId: string = randomUUID(),
  epochMs: number = Date.now(),
): APIGatewayProxyEventV2 {
  const target = req.url ?? '/';
  let rawPath: string;
  let rawQueryString = '';
  let query: Record<string, string> | undefined;
  if (PLAIN_PATH.test(target)) {
    rawPath = target;
  } else {
    const url = new URL(target, 'http://local');
    rawPath = url.pathname;
    rawQueryString = url.search.slice(1);
    for (const [k, v] of url.searchParams) {
      query ??= Object.create(null) as Record<string, string>;
      const before = query[k];
      query[k] = before === undefined ? v : `${before},${v}`;
    }
  }
  const { headers, cookies } = headersOf(req.rawHeaders);
  const host = headers['host'] ?? 'localhost';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    cookies,
    headers,
    queryStringParameters: query,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: host,
      domainPrefix: domainPrefixOf(host),
      http: {
        method: req.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: apiGatewayTime(epochMs),
      timeEpoch: epochMs,
    },
    body: body.length > 0 ? body.toString('utf8') : undefined,
    isBase64Encoded: false,
  };
}

/** Node checks headersTimeout and requestTimeout on this interval (default 30 s): it bounds how late a slow client is cut off. */
export function connectionsCheckingInterval(headersTimeout: number): number {
  return Math.min(1000, Math.max(10, Math.floor(headersTimeout / 4)));
}

type BodyResult = { kind: 'body'; body: Buffer } | { kind: 'too-large' } | { kind: 'timeout' } | { kind: 'gone' };

/**
 * Reads the body, but no more than `maxBytes` and for no longer than `timeoutMs`: it settles as
 * soon as either is passed, without waiting for the rest (which is then discarded until the
 * answer closes the connection).
 */
function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: BodyResult) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) settle({ kind: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = () => settle({ kind: 'body', body: Buffer.concat(chunks) });
    // The client went away, or Node answered for us (clientError): nothing to answer.
    const onGone = () => settle({ kind: 'gone' });
    const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/** The announced body length; null without the header (chunked, or no body). Node has checked its syntax. */
function announcedLength(req: IncomingMessage): number | null {
  const value = req.headers['content-length'];
  return value === undefined ? null : Number(value);
}

/** Lower-case header names, kept: the answers use a handful of names, over and over. */
const lowerNames = new Map<string, string>();
function lowerName(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < 256) lowerNames.set(name, lower);
  }
  return lower;
}

function headersOfResult(result: APIGatewayProxyStructuredResultV2): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  const headers = result.headers;
  if (headers) for (const k of Object.keys(headers)) out[lowerName(k)] = String(headers[k]);
  return out;
}

const EMPTY = Buffer.alloc(0);

/** The connection's (normalised) peer address, for the log lines of rejections. */
function addressOf(socket: Duplex): string {
  return socket instanceof Socket ? normaliseIp(socket.remoteAddress ?? '') : '';
}

/** An answer written straight to the socket, for the moments Node has no ServerResponse to give (clientError). */
function rawAnswer(result: APIGatewayProxyStructuredResultV2): string {
  const status = result.statusCode ?? 500;
  const body = result.body ?? '';
  const headers = {
    ...headersOfResult(result),
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

function errorCode(err: Error): string {
  return 'code' in err && typeof err.code === 'string' ? err.code : '';
}

export class LocalGateway implements Component {
  readonly name: string;
  private server: Server | undefined;
  private readonly exempt: ReadonlySet<string>;
  /** Open connections per (normalised) peer address; exempt addresses are not counted. */
  private readonly byAddress = new Map<string, AddressConnections>();
  /** The entry of `byAddress` a counted connection belongs to. */
  private readonly connectionsOf = new WeakMap<Duplex, AddressConnections>();
  /** The response of the request a connection is serving, while there is one. */
  private readonly inFlight = new WeakMap<Duplex, ServerResponse>();
  private readonly throttle: LogThrottle;
  private readonly counts: GatewayCounters = { connectionsRefused: 0, tooLarge: 0, timedOut: 0, badRequests: 0 };

  constructor(private readonly options: LocalGatewayOptions) {
    this.name = options.name;
    this.exempt = new Set(options.limits.trustedProxies.map(normaliseIp));
    this.throttle = new LogThrottle(options.logIntervalMs ?? 60_000);
  }

  /** The bound address (after start). */
  get address(): AddressInfo {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error(`${this.name} is not listening`);
    return address;
  }

  get url(): string {
    const { address, port, family } = this.address;
    return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  }

  /** What the gateway turned away itself since start (a copy). */
  get counters(): GatewayCounters {
    return { ...this.counts };
  }

  start(): Promise<void> {
    const { headersTimeout, bodyTimeout } = this.options.limits;
    const server = createServer(
      {
        headersTimeout,
        // A backstop for the whole request: the body timer of serve() (exact, with the JSON answer)
        // normally fires first, as it starts when the headers are in.
        requestTimeout: headersTimeout + bodyTimeout,
        connectionsCheckingInterval: connectionsCheckingInterval(headersTimeout),
      },
      (req, res) => void this.serve(req, res, false),
    );
    // Longer than the idle timeouts of common load balancers (60 s), so they close first.
    server.keepAliveTimeout = 65_000;
    server.on('connection', (socket: Socket) => this.admit(socket));
    // Without these listeners Node would answer by itself, with empty bodies.
    server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => void this.serve(req, res, true));
    server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => this.expectationFailed(req, res));
    server.on('clientError', (err: Error, socket: Duplex) => this.clientError(err, socket));
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(
          new Error(
            `${this.name} cannot listen on ${this.options.host}:${this.options.port}: ${err.code ?? err.message}`,
          ),
        );
      });
      server.listen(this.options.port, this.options.host, () => {
        const { maxBodyBytes, maxConnectionsPerClient } = this.options.limits;
        this.options.log.info(
          {
            url: this.url,
            maxBodyBytes,
            headersTimeout,
            bodyTimeout,
            maxConnectionsPerClient,
            exemptAddresses: [...this.exempt],
          },
          `${this.name} listening on ${this.url}`,
        );
        resolve();
      });
    });
  }

  stop(): Promise<void> {
    const server = this.server;
    if (!server) return Promise.resolve();
    return new Promise((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      // Requests in flight finish; keep-alive connections that stay idle are closed.
      setTimeout(() => server.closeAllConnections(), 5000).unref();
    });
  }

  /**
   * Counts the connection against its address. At the limit, the address's longest idle kept-alive
   * connection gives way (HTTP clients keep idle connections and open new ones freely, and must
   * expect a server to close an idle one); when none is idle, the new connection is closed at once.
   */
  private admit(socket: Socket): void {
    // Undefined when the client has already gone.
    if (socket.remoteAddress === undefined) return;
    const address = normaliseIp(socket.remoteAddress);
    if (this.exempt.has(address)) return;
    const limit = this.options.limits.maxConnectionsPerClient;
    const connections = this.byAddress.get(address) ?? { open: new Set<Duplex>(), idle: new Set<Duplex>() };
    if (connections.open.size >= limit) {
      const [longestIdle] = connections.idle;
      if (longestIdle === undefined) {
        // No answer: it would mean waiting for a request, the very thing a client holding connections withholds.
        socket.destroy();
        this.reject(
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

  /** Between requests a kept-alive connection is idle; it is busy from its next request on. */
  private markIdle(socket: Duplex, idle: boolean): void {
    const connections = this.connectionsOf.get(socket);
    if (!connections) return;
    // Deleted first, so that the set's order is the order connections became idle.
    connections.idle.delete(socket);
    if (idle) connections.idle.add(socket);
  }

  private async serve(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): Promise<void> {
    // The arrival time as a number: it becomes text only in the gateway's own answers (the
    // handler's answers carry the handler's own receivedAt).
    const arrivedAt = Date.now();
    const socket = req.socket;
    this.inFlight.set(socket, res);
    this.markIdle(socket, false);
    res.once('close', () => {
      if (this.inFlight.get(socket) !== res) return;
      this.inFlight.delete(socket);
      if (!socket.destroyed) this.markIdle(socket, true);
    });
    const { maxBodyBytes, bodyTimeout } = this.options.limits;
    const announced = announcedLength(req);
    if (announced !== null && announced > maxBodyBytes) {
      this.reject(
        'tooLarge',
        addressOf(socket),
        { contentLength: announced, maxBodyBytes },
        `Content-Length ${announced} exceeds ${maxBodyBytes} bytes: the body is not read`,
      );
      // Answered without a 100 Continue, so a client that waits for one never sends the body.
      await this.invoke(this.options.oversized, req, res, EMPTY, arrivedAt, true);
      return;
    }
    if (expectsContinue) res.writeContinue();
    const read = await readBody(req, maxBodyBytes, bodyTimeout);
    if (read.kind === 'gone') return;
    if (read.kind === 'too-large') {
      this.reject(
        'tooLarge',
        addressOf(socket),
        { maxBodyBytes },
        `the body passed ${maxBodyBytes} bytes: the rest is not read`,
      );
      await this.invoke(this.options.oversized, req, res, EMPTY, arrivedAt, true);
      return;
    }
    if (read.kind === 'timeout') {
      const message = `the request body did not arrive within ${bodyTimeout} ms`;
      this.reject('timedOut', addressOf(socket), { bodyTimeout }, `408: ${message}`);
      this.send(
        res,
        ingestionError(new Date(arrivedAt).toISOString(), 408, 'dropped', 'Request timeout', { errors: [{ message }] }),
        true,
      );
      return;
    }
    await this.invoke(this.options.handler, req, res, read.body, arrivedAt, false);
  }

  /** Runs a handler on the request and writes its result; `close` when the rest of the request is left unread. */
  private async invoke(
    handler: HttpApiHandler,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    arrivedAt: number,
    close: boolean,
  ): Promise<void> {
    // One id for API Gateway's requestContext.requestId and Lambda's awsRequestId (two ids on AWS,
    // both unique per request: nothing reads them as different).
    const requestId = randomUUID();
    try {
      const result = await handler(toHttpApiEvent(req, body, requestId, arrivedAt), localContext(this.name, requestId));
      this.send(res, result, close);
    } catch (err) {
      this.options.log.error({ errorId: requestId, err }, `${this.name}: request failed`);
      if (!res.headersSent) this.send(res, internalError(new Date(arrivedAt).toISOString(), requestId), close);
      else res.destroy();
    }
  }

  /** Writes a result with one writeHead + end; `close` ends the connection once it is written (Node closes it after a `connection: close` answer). */
  private send(res: ServerResponse, result: APIGatewayProxyStructuredResultV2, close: boolean): void {
    const status = result.statusCode ?? 200;
    const body = result.body ?? '';
    const headers = headersOfResult(result);
    // A length rather than chunks; a 204 or 304 has no body and must not announce one (RFC 9110 §8.6).
    if (status !== 204 && status !== 304) headers['content-length'] = String(Buffer.byteLength(body));
    if (close) headers['connection'] = 'close';
    res.writeHead(status, headers);
    res.end(body);
  }

  private expectationFailed(req: IncomingMessage, res: ServerResponse): void {
    const message = 'the only Expect this server meets is 100-continue';
    this.reject(
      'badRequests',
      normaliseIp(req.socket.remoteAddress ?? ''),
      { expect: req.headers['expect'] },
      `417: ${message}`,
    );
    this.send(
      res,
      ingestionError(new Date().toISOString(), 417, 'dropped', 'Expectation failed', { errors: [{ message }] }),
      true,
    );
  }

  /** A request Node could not parse, or whose headers (or whole) took too long; Node leaves the socket to us. */
  private clientError(err: Error, socket: Duplex): void {
    const code = errorCode(err);
    const answering = this.inFlight.get(socket);
    // A reset or a broken pipe: nobody to answer. An answer already begun cannot be replaced.
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable || answering?.headersSent === true) {
      socket.destroy();
      return;
    }
    const address = socket instanceof Socket ? normaliseIp(socket.remoteAddress ?? '') : '';
    const receivedAt = new Date().toISOString();
    let kind: Rejection;
    let result: APIGatewayProxyStructuredResultV2;
    if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      // With a request in flight its headers were in, so the whole request took too long (requestTimeout).
      const { headersTimeout, bodyTimeout } = this.options.limits;
      const message =
        answering === undefined
          ? `the request headers did not arrive within ${headersTimeout} ms`
          : `the request did not arrive within ${headersTimeout + bodyTimeout} ms`;
      kind = 'timedOut';
      result = ingestionError(receivedAt, 408, 'dropped', 'Request timeout', { errors: [{ message }] });
    } else if (code === 'HPE_HEADER_OVERFLOW') {
      kind = 'badRequests';
      result = ingestionError(receivedAt, 431, 'dropped', 'Request header fields too large', {
        errors: [{ message: `the request headers exceed ${maxHeaderSize} bytes` }],
      });
    } else {
      kind = 'badRequests';
      result = ingestionError(receivedAt, 400, 'dropped', 'Bad request', {
        errors: [{ message: 'the request is not valid HTTP/1.1' }],
      });
    }
    this.reject(kind, address, { code }, `${result.statusCode ?? 400}: ${err.message}`);
    socket.end(rawAnswer(result), () => socket.destroy());
  }

  /** Counts a rejection and logs it, at most once per interval per client address and kind. */
  private reject(kind: Rejection, address: string, fields: object, what: string): void {
    this.counts[kind]++;
    const { log, suppressed } = this.throttle.take(`${kind} ${address}`);
    if (!log) return;
    this.options.log.warn(
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

/**
 * Local mode's stand-in for API Gateway ("sam-style"): an HTTP server that turns each request into
 * an API Gateway HTTP API event (payload format 2.0), invokes the very handler the Lambda runs, and
 * writes its result back (event.ts).
 *
 * Like API Gateway on AWS, it is also the front door that slow and oversized clients meet first
 * (policing.ts; docs/audit-api.md, "Local gateway limits"). A body that passes `maxBodyBytes` (by
 * its Content-Length, or as it arrives) is not read: the handler's `oversized` entry answers, with
 * no body, after the same checks (so 413, or 429 or 401 first). Headers or a body that take too
 * long get 408. A new connection from an address that already holds `maxConnectionsPerClient` takes
 * the place of its longest idle one, or is closed at once when none is idle. The gateway's own
 * answers have the ingestion response shape of the handler's, from the same builders. Pipelined
 * requests are answered in the order they came (Node's server holds a later answer until the
 * earlier ones are written), the answer to a request Node cannot parse included (clientError).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { normaliseIp } from '../../../shared/audit/client-ip.js';
import { ingestionError, internalError } from '../../../shared/audit/response.js';
import type { Log } from '../../../shared/logging/log.js';
import { announcedLength, readBody } from '../../../shared/runtime/http-body.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { type HttpApiHandler, localContext, rawAnswer, toHttpApiEvent, writeResult } from './event.js';
import {
  addressOf,
  ClientConnections,
  clientErrorAnswer,
  connectionsCheckingInterval,
  errorCode,
  type GatewayCounters,
  type GatewayLimits,
  Rejections,
} from './policing.js';

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

const EMPTY = Buffer.alloc(0);

/** The gateway as a component of `svc local`: listens from start to stop. */
export class LocalGateway implements Component {
  readonly name: string;
  private server: Server | undefined;
  private readonly rejections: Rejections;
  private readonly connections: ClientConnections;
  /** Connections whose broken request is answered once the answers before it are written (clientError). */
  private readonly failedConnections = new WeakSet<Duplex>();

  constructor(private readonly options: LocalGatewayOptions) {
    this.name = options.name;
    this.rejections = new Rejections(options.name, options.log, options.logIntervalMs ?? 60_000);
    this.connections = new ClientConnections(options.limits, this.rejections);
  }

  /** The bound address (after start). */
  get address(): AddressInfo {
    const address = this.server?.address();
    if (!address || typeof address === 'string') throw new Error(`${this.name} is not listening`);
    return address;
  }

  /** The gateway's base URL (after start), for the start line and for callers. */
  get url(): string {
    const { address, port, family } = this.address;
    return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  }

  /** What the gateway turned away itself since start (a copy). */
  get counters(): GatewayCounters {
    return this.rejections.counters;
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
    server.on('connection', (socket: Socket) => this.connections.admit(socket));
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
            exemptAddresses: this.connections.exemptAddresses,
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

  /** One request: its body within the limits, then the handler; or the answer to a body over them. */
  private async serve(req: IncomingMessage, res: ServerResponse, expectsContinue: boolean): Promise<void> {
    // The arrival time as a number: it becomes text only in the gateway's own answers (the
    // handler's answers carry the handler's own receivedAt).
    const arrivedAt = Date.now();
    const socket = req.socket;
    this.connections.serving(socket, res);
    const { maxBodyBytes, bodyTimeout } = this.options.limits;
    const announced = announcedLength(req);
    if (announced !== null && announced > maxBodyBytes) {
      this.rejections.reject(
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
      this.rejections.reject(
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
      this.rejections.reject('timedOut', addressOf(socket), { bodyTimeout }, `408: ${message}`);
      writeResult(
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
      writeResult(res, result, close);
    } catch (err) {
      this.options.log.error({ errorId: requestId, err }, `${this.name}: request failed`);
      if (!res.headersSent) writeResult(res, internalError(new Date(arrivedAt).toISOString(), requestId), close);
      else res.destroy();
    }
  }

  /** 417 for an `Expect` other than 100-continue. */
  private expectationFailed(req: IncomingMessage, res: ServerResponse): void {
    const message = 'the only Expect this server meets is 100-continue';
    this.rejections.reject(
      'badRequests',
      normaliseIp(req.socket.remoteAddress ?? ''),
      { expect: req.headers['expect'] },
      `417: ${message}`,
    );
    writeResult(
      res,
      ingestionError(new Date().toISOString(), 417, 'dropped', 'Expectation failed', { errors: [{ message }] }),
      true,
    );
  }

  /** A request Node could not parse, or whose headers (or whole) took too long; Node leaves the socket to us. */
  private clientError(err: Error, socket: Duplex): void {
    // Node reports the same broken connection again as more bytes arrive: it gets one answer.
    if (this.failedConnections.has(socket)) return;
    const code = errorCode(err);
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const answering = this.connections.answering(socket);
    if (answering?.req.complete === true) {
      // Pipelining: the requests before the broken one arrived whole and are answered first, in
      // order; this answer follows the last of them (its 'close' comes after the policing's own).
      this.failedConnections.add(socket);
      answering.once('close', () => {
        this.failedConnections.delete(socket);
        this.clientError(err, socket);
      });
      return;
    }
    // An answer already begun cannot be replaced.
    if (answering?.headersSent === true) {
      socket.destroy();
      return;
    }
    const address = addressOf(socket);
    const receivedAt = new Date().toISOString();
    const { kind, result } = clientErrorAnswer(code, answering !== undefined, this.options.limits, receivedAt);
    this.rejections.reject(kind, address, { code }, `${result.statusCode ?? 400}: ${err.message}`);
    socket.end(rawAnswer(result), () => socket.destroy());
  }
}

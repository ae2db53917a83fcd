/**
 * Local mode's stand-in for API Gateway ("sam-style"): an HTTP server that turns each request into
 * an API Gateway HTTP API event (payload format 2.0), invokes the very handler the Lambda runs, and
 * writes its result back.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { Component } from '../../shared/runtime/lifecycle.js';

export type HttpApiHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;

export interface GatewayLog {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface LocalGatewayOptions {
  name: string;
  host: string;
  port: number;
  handler: HttpApiHandler;
  log: GatewayLog;
  /** The handler enforces the body limit; the gateway reads at most one byte more, so memory stays bounded. */
  maxBodyBytes: number;
}

/** A Lambda context for local invocations; only what handlers read is meaningful. */
export function localContext(functionName: string, requestId: string): Context {
  const deadline = Date.now() + 30_000;
  const unsupported = () => {
    throw new Error('callback-style completion is not supported by the local gateway');
  };
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '0',
    awsRequestId: requestId,
    logGroupName: 'local',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

function headersOf(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    // API Gateway joins repeated headers with commas, as Node does for most of them.
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(',') : value;
  }
  return out;
}

/** Reads the body, keeping at most `limit` bytes (the rest is read and discarded). */
function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    req.on('data', (chunk: Buffer) => {
      if (kept >= limit) return;
      const part = chunk.subarray(0, limit - kept);
      chunks.push(part);
      kept += part.length;
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The API Gateway HTTP API event (payload format 2.0) for a request. */
export function toHttpApiEvent(req: IncomingMessage, body: Buffer): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://local');
  const headers = headersOf(req);
  const now = new Date();
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = k in query ? `${query[k]},${v}` : v;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    ...(Object.keys(query).length > 0 ? { queryStringParameters: query } : {}),
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers['host'] ?? 'localhost',
      domainPrefix: (headers['host'] ?? 'localhost').split('.')[0] ?? 'localhost',
      http: {
        method: req.method ?? 'GET',
        path: url.pathname,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(body.length > 0 ? { body: body.toString('utf8') } : {}),
    isBase64Encoded: false,
  };
}

export class LocalGateway implements Component {
  readonly name: string;
  private server: Server | undefined;

  constructor(private readonly options: LocalGatewayOptions) {
    this.name = options.name;
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

  start(): Promise<void> {
    const server = createServer((req, res) => void this.serve(req, res));
    server.keepAliveTimeout = 65_000;
    this.server = server;
    return new Promise((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(new Error(`${this.name} cannot listen on ${this.options.host}:${this.options.port}: ${err.code ?? err.message}`));
      });
      server.listen(this.options.port, this.options.host, () => {
        this.options.log.info({ url: this.url }, `${this.name} listening on ${this.url}`);
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

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    try {
      const body = await readBody(req, this.options.maxBodyBytes + 1);
      const result = await this.options.handler(toHttpApiEvent(req, body), localContext(this.name, requestId));
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(result.headers ?? {})) headers[k.toLowerCase()] = String(v);
      if (body.length > this.options.maxBodyBytes) headers['connection'] = 'close';
      res.writeHead(result.statusCode ?? 200, headers);
      res.end(result.body ?? '');
    } catch (err) {
      this.options.log.error({ errorId: requestId, err }, `${this.name}: request failed`);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' });
        res.end(JSON.stringify({ status: 'error', outcome: 'error', reason: 'Internal server error', details: { errorId: requestId } }));
      } else {
        res.destroy();
      }
    }
  }
}

/**
 * The metrics endpoint's HTTP server (platform-formats.md §9): `GET /metrics` answers the registry
 * in the text exposition format; `HEAD /metrics` the same headers; other methods 405, other paths
 * 404. A failure while collecting is logged with its error and answered 500 with a body that says
 * nothing internal.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Log } from '../../../shared/logging/log.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { close, listen } from '../http-server.js';

export const METRICS_PATH = '/metrics';

export interface MetricsEndpointOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  registry: Registry;
  log: Log;
}

export class MetricsEndpoint implements Component {
  readonly name: string;
  private server: Server | undefined;
  private boundPort = 0;

  constructor(private readonly options: MetricsEndpointOptions) {
    this.name = `metrics endpoint (http://${options.host}:${options.port}${METRICS_PATH})`;
  }

  /** The port listened on (differs from the option only when that is 0). */
  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    const { host, port, log } = this.options;
    const server = createServer((req, res) => void this.answer(req, res));
    this.boundPort = await listen(server, { host, port, what: 'the metrics endpoint', log });
    this.server = server;
    log.info(
      { host, port: this.boundPort },
      `metrics endpoint listening on http://${host}:${this.boundPort}${METRICS_PATH}`,
    );
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    // A scraper keeps its connection open between scrapes; close() does not wait for it.
    if (server) await close(server);
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) return plain(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return plain(res, 405, 'method not allowed\n');
    }
    let body: string;
    try {
      body = await this.options.registry.metrics();
    } catch (err) {
      this.options.log.error({ err }, 'metrics endpoint: collecting the metrics failed; answered 500');
      return plain(res, 500, 'internal error\n');
    }
    res.writeHead(200, {
      'content-type': this.options.registry.contentType,
      'content-length': Buffer.byteLength(body),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

function plain(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

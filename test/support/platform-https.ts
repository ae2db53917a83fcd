/**
 * A small HTTPS server with mutual TLS that stands in for one platform API (health, session, app
 * list) in the pollers' tests: real TLS with certificates from edge-agent/simulate/platform/certs.ts,
 * on 127.0.0.1, answering each path with the replies a test gives (a status, a body, a delay) and
 * recording every request. The platform simulator is a product feature of its own; this stub is
 * only what the tests need to make every kind of answer and failure.
 *
 *   const api = await startHttpsStub(certs);
 *   api.route('/engine/healthcheck', { status: 200, json: body });
 *   api.route('/qps/session', (req) => ({ json: [] }));
 */

import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';
import { type CertificateSet, writeCertificates } from '../../edge-agent/simulate/platform/certs.js';
import { type ClientTls, loadClientTls } from '../../edge-agent/sources/platform/tls.js';
import { LOOPBACK } from './ports.js';

export interface StubReply {
  status?: number;
  /** Sent as JSON. */
  json?: unknown;
  /** Sent as is (wins over `json`). */
  body?: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

export interface StubRequest {
  pathname: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  /** The raw header names and values, in the order sent. */
  rawHeaders: string[];
  /** CN of the client certificate presented (mutual TLS), if any. */
  clientCert: string | undefined;
  /** The connection resumed an earlier TLS session (an abbreviated handshake). */
  resumed: boolean;
  at: number;
}

export type Route = StubReply | ((req: StubRequest) => StubReply);

export interface HttpsStub {
  readonly host: string;
  readonly port: number;
  /** `<host>:<port>` */
  readonly hostPort: string;
  readonly requests: StubRequest[];
  /** Sets the answer of a path (query ignored); other paths get 404. */
  route(pathname: string, reply: Route): void;
  /** Requests to a path so far. */
  to(pathname: string): StubRequest[];
  stop(): Promise<void>;
}

/**
 * Starts the stub on 127.0.0.1 and a free port, or on `host` / `port` (another 127.0.0.0/8 address
 * lets a test use a platform port such as 4242 without colliding with anything).
 * `requestCert: false` makes a server that does not ask for a client certificate.
 */
export async function startHttpsStub(
  certs: CertificateSet,
  options: { requestCert?: boolean; host?: string; port?: number } = {},
): Promise<HttpsStub> {
  const routes = new Map<string, Route>();
  const requests: StubRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const requestCert = options.requestCert ?? true;

  const server: Server = createServer(
    { cert: certs.server.cert, key: certs.server.key, ca: certs.ca.cert, requestCert, rejectUnauthorized: requestCert },
    (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', 'https://stub');
      const cn: unknown = req.socket instanceof TLSSocket ? req.socket.getPeerCertificate().subject?.CN : undefined;
      const resumed = req.socket instanceof TLSSocket && req.socket.isSessionReused();
      const recorded: StubRequest = {
        pathname: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        clientCert: typeof cn === 'string' ? cn : undefined,
        resumed,
        at: Date.now(),
      };
      requests.push(recorded);
      const route = routes.get(url.pathname);
      const reply: StubReply =
        route === undefined
          ? { status: 404, json: { error: 'no such path' } }
          : typeof route === 'function'
            ? route(recorded)
            : route;
      const send = () => {
        if (res.destroyed) return;
        const body = reply.body ?? (reply.json === undefined ? '' : JSON.stringify(reply.json));
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(body);
      };
      req.resume();
      if (!reply.delayMs) return send();
      const timer = setTimeout(() => {
        timers.delete(timer);
        send();
      }, reply.delayMs);
      timers.add(timer);
    },
  );
  // A client that gives up (timeout) or refuses our certificate resets the connection: nothing to do.
  server.on('tlsClientError', () => undefined);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host ?? LOOPBACK, port: options.port ?? 0 }, () => resolve());
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`unexpected server address: ${String(address)}`);
  const { port } = address;
  let stopping: Promise<void> | undefined;
  return {
    host: options.host ?? LOOPBACK,
    port,
    hostPort: `${options.host ?? LOOPBACK}:${port}`,
    requests,
    route: (pathname, reply) => void routes.set(pathname, reply),
    to: (pathname) => requests.filter((r) => r.pathname === pathname),
    stop: () => {
      stopping ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return stopping;
    },
  };
}

/**
 * The client side of `certs` as the pollers use it: the PEM files written to a temporary directory
 * (as the management console exports them) and checked by loadClientTls.
 */
export function clientTlsOf(
  certs: CertificateSet,
  options: { rejectUnauthorized?: boolean; passphrase?: string } = {},
): ClientTls {
  const dir = mkdtempSync(join(tmpdir(), 'svc-certs-'));
  const files = writeCertificates(dir, certs, options.passphrase ?? '');
  const loaded = loadClientTls(
    {
      clientCert: files.clientCert,
      clientCertKey: files.clientCertKey,
      clientCertCA: files.clientCertCA,
      clientCertPassphrase: files.passphrase,
    },
    options.rejectUnauthorized ?? true,
    'the test presents it',
  );
  rmSync(dir, { recursive: true, force: true });
  if (!loaded.ok) throw new Error(`test certificates do not load: ${loaded.problems.map((p) => p.message).join('; ')}`);
  return loaded.tls;
}

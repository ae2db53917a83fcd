/**
 * The listening ports of the platform simulator. Many listeners stay cheap: each port is a plain
 * TCP listener that hands its connections to one shared HTTPS server (one TLS context, one request
 * handler), which tells the APIs apart by the local port of the connection. A hundred servers cost
 * two hundred listening sockets and nothing more. A target switched to `cert-reject` hands its new
 * connections to a second HTTPS server whose client CA is another one, so Svc's certificate is
 * refused in the handshake.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import net from 'node:net';
import type { Endpoint } from './apis.js';
import { makeCertificates } from './certs.js';
import type { TargetSwitches } from './failures.js';
import type { SimulatorStats } from './status.js';

/** The simulator's side of mutual TLS: its server key and certificate, and the CA Svc's client certificate is of. */
export interface ServerTls {
  key: Buffer;
  cert: Buffer;
  clientCa: Buffer;
}

/** Answers a request that came in on the port of `endpoint`. */
export type EndpointHandler = (endpoint: Endpoint, request: IncomingMessage, response: ServerResponse) => void;

interface Listener extends Endpoint {
  server: net.Server;
  port: number;
}

/** Every listening port of one simulator, the HTTPS servers behind them, and their closing. */
export class PortListeners {
  private readonly byPort = new Map<number, Listener>();
  private readonly main: HttpsServer;
  /** Made on first use: a second CA costs a key pair. */
  private otherCa: HttpsServer | undefined;
  private stopping = false;

  constructor(
    /** The IPv4 address every port binds to. */
    private readonly host: string,
    private readonly tls: ServerTls,
    private readonly switches: TargetSwitches,
    private readonly stats: SimulatorStats,
    private readonly handler: EndpointHandler,
  ) {
    this.main = this.tlsServer(tls.clientCa);
  }

  /**
   * Binds one port per endpoint (0 = a free one) and gives the bound ports in the same order; when
   * one fails, it rejects with the first failure once all have settled, so none is left half-open.
   */
  async listenAll(endpoints: readonly (Endpoint & { port: number })[]): Promise<number[]> {
    const settled = await Promise.allSettled(endpoints.map(({ port, ...endpoint }) => this.listen(endpoint, port)));
    const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  }

  /** Closes every listener and connection (held requests included); new connections are refused from here on. */
  async close(): Promise<void> {
    this.stopping = true;
    this.switches.closeConnections();
    await Promise.all(
      [...this.byPort.values()].map((listener) => new Promise<void>((done) => listener.server.close(() => done()))),
    );
  }

  private listen(endpoint: Endpoint, port: number): Promise<number> {
    return new Promise((resolveListen, reject) => {
      const server = net.createServer((socket) => this.accept(endpoint.target, socket));
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(new Error(`cannot listen on ${this.host}:${port} (${endpoint.what}): ${err.code ?? err.message}`)),
      );
      server.listen({ host: this.host, port }, () => {
        // From here on an error is one of accepting (EMFILE with very many connections): that client's
        // connection fails, the simulator goes on.
        server.removeAllListeners('error');
        server.on('error', () => undefined);
        const address = server.address();
        const bound = typeof address === 'object' && address !== null ? address.port : port;
        this.byPort.set(bound, { ...endpoint, server, port: bound });
        resolveListen(bound);
      });
    });
  }

  /** Hands a new connection to the HTTPS server the target's mode asks for, tracked so a switch can close it. */
  private accept(target: string, socket: net.Socket): void {
    if (this.stopping) return void socket.destroy();
    this.switches.track(target, socket);
    // A reset before the TLS layer takes the socket over must not end the simulator; the TLS server reports the rest.
    socket.on('error', () => undefined);
    (this.switches.mode(target) === 'cert-reject' ? this.wrongCaServer() : this.main).emit('connection', socket);
  }

  private wrongCaServer(): HttpsServer {
    this.otherCa ??= this.tlsServer(makeCertificates([this.host], { commonName: 'Another CA' }).ca.cert);
    return this.otherCa;
  }

  private tlsServer(ca: string | Buffer): HttpsServer {
    const { key, cert } = this.tls;
    const server = createHttpsServer(
      { key, cert, ca, requestCert: true, rejectUnauthorized: true },
      (request, response) => {
        const listener = this.byPort.get(request.socket.localPort ?? -1);
        if (listener === undefined) return void request.socket.destroy();
        this.handler(listener, request, response);
      },
    );
    // A refused client certificate ends the handshake; the client sees the TLS alert.
    server.on('tlsClientError', () => this.stats.tlsRejected++);
    return server;
  }
}

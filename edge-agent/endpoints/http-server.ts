/**
 * Starting and stopping the HTTP server of a local endpoint (metrics, container health, config view), so that
 * each one reports a listen failure and closes the same way.
 */
import type { Server } from 'node:http';
import type { Log } from '../../shared/logging/log.js';

export interface ListenOptions {
  /** undefined: every interface (IPv6 and IPv4 where the host has both). */
  host: string | undefined;
  /** 0 picks a free port (tests). */
  port: number;
  /** Starts the listen failure's message, e.g. `the metrics endpoint`. */
  what: string;
  log: Log;
}

/**
 * Listens; resolves to the port bound. Rejects with `<what> cannot listen on <host>:<port>: <error>`
 * (`… on port <port> (all interfaces): …` without a host)
 * (a start-up failure: the lifecycle stops Svc). Errors after that are logged.
 */
export function listen(server: Server, { host, port, what, log }: ListenOptions): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const where = host === undefined ? `port ${port} (all interfaces)` : `${host}:${port}`;
    const onError = (err: Error) =>
      reject(new Error(`${what} cannot listen on ${where}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      server.on('error', (err) => log.error({ err }, `${what}: server error: ${err.message}`));
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/** Closes the server; open keep-alive connections (a scraper's, a probe's) do not hold the stop. */
export async function close(server: Server): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await closed;
}

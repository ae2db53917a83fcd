/**
 * Paced UDP sender of `svc simulate udp`: sends the datagrams of a source to one `host:port` from one
 * dgram socket at a fixed average rate. A timer tick sends the datagrams due so far
 * (`rate × elapsed − sent`), so the average rate is exact and bursts stay at one tick's worth.
 * Never throws on a send error: failed sends are counted.
 */
import dgram from 'node:dgram';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { SIMULATE_KINDS, type SimDatagram, type SimulateKind } from './messages.js';

/** Upper bound of `rate`, datagrams per second. */
export const MAX_RATE = 1_000_000;
/** Upper bound of `durationS`, seconds. */
export const MAX_DURATION_S = 3600;
/** Default timer tick, ms. */
export const DEFAULT_TICK_MS = 5;
/** Default bound of sends handed to the socket and not yet completed; a tick sends no more than that. */
export const DEFAULT_MAX_IN_FLIGHT = 4096;
/** How long the sender waits at the end for sends still in the socket before counting them as errors. */
const DRAIN_TIMEOUT_MS = 5_000;

export interface UdpSendOptions {
  /** IPv4 or IPv6 literal, or a host name (resolved once, before the first send). */
  host: string;
  port: number;
  /** Datagrams per second, > 0 and ≤ MAX_RATE. */
  rate: number;
  /** Seconds, > 0 and ≤ MAX_DURATION_S. The run sends `floor(rate × durationS)` datagrams (or `count`, if fewer). */
  durationS: number;
  /** Stop after this many datagrams (a positive integer). */
  count?: number;
  /** Where the datagrams come from (e.g. createDatagramGenerator). */
  source: { next(): Pick<SimDatagram, 'kind' | 'data' | 'malformed'> };
  /** Stops the run early; the promise still resolves with the stats so far. */
  signal?: AbortSignal;
  /** Timer tick, ms (1–100); default DEFAULT_TICK_MS. */
  tickMs?: number;
  /** Bound of sends in the socket at once; default DEFAULT_MAX_IN_FLIGHT. */
  maxInFlight?: number;
}

export interface UdpSendStats {
  /** Datagrams the socket sent (send completed without error). */
  sent: number;
  /** Well-formed datagrams sent, per kind (every kind is a key). */
  perKind: Record<SimulateKind, number>;
  /** Malformed datagrams sent (not in `perKind`). */
  malformed: number;
  /** From the first tick to the last completed send, ms. */
  elapsedMs: number;
  /** `sent` per second of `elapsedMs` (0 when nothing was sent). */
  achievedRate: number;
  /** Sends that failed (and, at the end, sends still pending after the drain timeout). */
  sendErrors: number;
  /** The first send error's message, if any. */
  firstError?: string;
  /** True when the signal stopped the run. */
  aborted: boolean;
  /** The address the datagrams went to (after resolving `host`). */
  address: string;
}

/** Datagrams a run sends: `floor(rate × durationS)`, capped by `count`. */
export function plannedCount(rate: number, durationS: number, count?: number): number {
  const byTime = Math.floor(rate * durationS + 1e-9);
  return count === undefined ? byTime : Math.min(byTime, count);
}

function checkOptions(o: UdpSendOptions): void {
  if (!(Number.isFinite(o.rate) && o.rate > 0 && o.rate <= MAX_RATE))
    throw new RangeError(`rate must be > 0 and ≤ ${MAX_RATE} (got ${o.rate})`);
  if (!(Number.isFinite(o.durationS) && o.durationS > 0 && o.durationS <= MAX_DURATION_S)) {
    throw new RangeError(`durationS must be > 0 and ≤ ${MAX_DURATION_S} (got ${o.durationS})`);
  }
  if (o.count !== undefined && !(Number.isSafeInteger(o.count) && o.count >= 1))
    throw new RangeError(`count must be a positive integer (got ${o.count})`);
  if (!(Number.isInteger(o.port) && o.port >= 1 && o.port <= 65535))
    throw new RangeError(`port must be 1–65535 (got ${o.port})`);
  if (o.tickMs !== undefined && !(o.tickMs >= 1 && o.tickMs <= 100))
    throw new RangeError(`tickMs must be 1–100 (got ${o.tickMs})`);
  if (o.maxInFlight !== undefined && !(Number.isSafeInteger(o.maxInFlight) && o.maxInFlight >= 1)) {
    throw new RangeError(`maxInFlight must be a positive integer (got ${o.maxInFlight})`);
  }
}

/** The host as an address and family: literals as they are (brackets of `[::1]` removed), names through the resolver. */
async function resolveHost(host: string): Promise<{ address: string; family: 4 | 6 }> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const literal = isIP(bare);
  if (literal === 4 || literal === 6) return { address: bare, family: literal };
  try {
    const { address, family } = await lookup(bare);
    return { address, family: family === 6 ? 6 : 4 };
  } catch (err) {
    throw new Error(`cannot resolve host ${JSON.stringify(host)}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function bindSocket(family: 4 | 6): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket(family === 6 ? 'udp6' : 'udp4');
    const onError = (err: Error): void => {
      socket.close();
      reject(err);
    };
    socket.once('error', onError);
    socket.bind(0, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/**
 * Sends `plannedCount(rate, durationS, count)` datagrams from `source` to `host:port`, paced over
 * `durationS` seconds by a timer tick. The run ends when all are sent, when the duration is over
 * (if the host cannot keep up, fewer are sent: see `achievedRate`) or when `signal` aborts; then it
 * waits for the sends in flight, closes the socket and resolves with the stats. Rejects only on
 * invalid options, an unresolvable host or a socket that cannot be bound.
 */
export async function sendUdp(options: UdpSendOptions): Promise<UdpSendStats> {
  checkOptions(options);
  const { port, rate, durationS, source, signal } = options;
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
  const maxInFlight = options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT;
  const total = plannedCount(rate, durationS, options.count);
  const durationMs = durationS * 1000;
  const { address, family } = await resolveHost(options.host);

  const perKind = Object.fromEntries(SIMULATE_KINDS.map((kind) => [kind, 0])) as Record<SimulateKind, number>;
  const stats: UdpSendStats = {
    sent: 0,
    perKind,
    malformed: 0,
    elapsedMs: 0,
    achievedRate: 0,
    sendErrors: 0,
    aborted: false,
    address,
  };
  if (signal?.aborted) return { ...stats, aborted: true };
  if (total === 0) return stats;

  const socket = await bindSocket(family);
  // Errors of individual sends arrive in their callbacks; anything else must not crash the run.
  socket.on('error', (err) => {
    stats.sendErrors++;
    stats.firstError ??= err.message;
  });

  let attempted = 0;
  let inFlight = 0;
  let stopped = false;
  let lastDoneAt = 0;
  const start = performance.now();

  return new Promise<UdpSendStats>((resolve) => {
    let drainTimer: NodeJS.Timeout | undefined;
    let finished = false;

    const finish = (): void => {
      if (finished) return;
      finished = true;
      if (drainTimer !== undefined) clearTimeout(drainTimer);
      signal?.removeEventListener('abort', onAbort);
      // Sends still pending after the drain timeout never completed: count them as failed.
      stats.sendErrors += inFlight;
      stats.elapsedMs = Math.max(0, (lastDoneAt || performance.now()) - start);
      stats.achievedRate = stats.elapsedMs > 0 ? (stats.sent * 1000) / stats.elapsedMs : 0;
      try {
        socket.close(() => resolve(stats));
      } catch {
        resolve(stats); // already closed
      }
    };

    const stop = (): void => {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      if (inFlight === 0) finish();
      else drainTimer = setTimeout(finish, DRAIN_TIMEOUT_MS);
    };

    const onAbort = (): void => {
      stats.aborted = true;
      stop();
    };

    const sendOne = (): void => {
      const datagram = source.next();
      attempted++;
      inFlight++;
      const done = (err: Error | null): void => {
        if (finished) return; // completed after the drain timeout: already counted as failed
        inFlight--;
        lastDoneAt = performance.now();
        if (err) {
          stats.sendErrors++;
          stats.firstError ??= err.message;
        } else {
          stats.sent++;
          if (datagram.malformed === null) stats.perKind[datagram.kind]++;
          else stats.malformed++;
        }
        if (stopped && inFlight === 0) finish();
      };
      try {
        socket.send(datagram.data, port, address, done);
      } catch (err) {
        done(err instanceof Error ? err : new Error(String(err)));
      }
    };

    const tick = (): void => {
      if (stopped) return;
      const elapsed = performance.now() - start;
      const due = elapsed >= durationMs ? total : Math.min(total, Math.floor((rate * elapsed) / 1000));
      const budget = Math.min(due - attempted, maxInFlight - inFlight);
      for (let i = 0; i < budget; i++) sendOne();
      if (attempted >= total || elapsed >= durationMs) stop();
    };

    const timer = setInterval(tick, tickMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    tick();
  });
}

/**
 * UDP traffic that matches the simulated platform: the datagram generator of `svc simulate udp`
 * (messages.ts) with the simulator's users, apps and nodes as its pool, sent by the same paced
 * sender (udp-sender.ts), for as long as the simulator runs. So the user events Svc receives name
 * the simulated users, and their `/app/<id>` contexts the apps of the simulated app list.
 */
import {
  createDatagramGenerator,
  type DatagramPool,
  kindFamily,
  SIMULATE_KINDS,
  type SimulateKind,
} from '../messages.js';
import { deriveSeed } from '../random.js';
import { MAX_DURATION_S, sendUdp, type UdpSendStats } from '../udp-sender.js';

export interface UdpDriveOptions {
  pool: DatagramPool;
  /** The simulator's seed; the UDP stream draws from a stream of its own, so it does not disturb the servers'. */
  seed: number;
  host: string;
  port: number;
  /** Datagrams per second. */
  rate: number;
  kinds: readonly SimulateKind[];
  /** Ends the run. */
  signal: AbortSignal;
  /** Start of the generator's clock (log events carry their time); default now. */
  startMs?: number;
}

/** Stream numbers for deriveSeed, clear of the model's (pool 0, servers 1 … n): one for user events, one for log events. */
const UDP_STREAM = { user: 0xffff_fff0, log: 0xffff_fff1 } as const;

/**
 * Sends until `signal` aborts, in runs of at most MAX_DURATION_S (the sender's bound) from one
 * generator, so the stream goes on seamlessly from run to run. Resolves with the totals; rejects
 * when the host cannot be resolved or no socket can be opened.
 */
export async function driveUdp(options: UdpDriveOptions): Promise<UdpSendStats> {
  const { host, port, rate, signal } = options;
  const source = createDatagramGenerator({
    seed: deriveSeed(
      options.seed,
      UDP_STREAM[options.kinds.every((kind) => kindFamily(kind) === 'user') ? 'user' : 'log'],
    ),
    kinds: options.kinds,
    pool: options.pool,
    startMs: options.startMs ?? Date.now(),
    stepMs: 1000 / rate,
  });
  let total: UdpSendStats | undefined;
  do {
    const run = await sendUdp({ host, port, rate, durationS: MAX_DURATION_S, source, signal });
    total = total === undefined ? run : add(total, run);
  } while (!signal.aborted);
  total.achievedRate = total.elapsedMs > 0 ? (total.sent * 1000) / total.elapsedMs : 0;
  return total;
}

function add(a: UdpSendStats, b: UdpSendStats): UdpSendStats {
  const perKind = { ...a.perKind };
  for (const kind of SIMULATE_KINDS) perKind[kind] += b.perKind[kind];
  return {
    sent: a.sent + b.sent,
    perKind,
    malformed: a.malformed + b.malformed,
    elapsedMs: a.elapsedMs + b.elapsedMs,
    achievedRate: 0,
    sendErrors: a.sendErrors + b.sendErrors,
    ...((a.firstError ?? b.firstError) ? { firstError: a.firstError ?? b.firstError } : {}),
    aborted: b.aborted,
    address: b.address,
  };
}

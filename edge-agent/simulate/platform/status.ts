/**
 * What the platform simulator reports about itself: the request counts of each API and the state
 * status() returns (also the control endpoint's answer). Kept apart from the simulator so the
 * control endpoint can name it without importing the simulator that starts it.
 */
import type { TargetMode } from './failures.js';

/** Requests of one API: answered normally, answered by a failure switch, refused by a request check. */
export interface ApiStats {
  ok: number;
  failed: number;
  rejected: number;
}

/** The request counts of every API since the start, and what was refused before any API. */
export interface SimulatorStats {
  health: ApiStats;
  sessions: ApiStats;
  apps: ApiStats;
  /** Requests for no API (404, 405). */
  notFound: number;
  /** TLS handshakes refused: no client certificate, one of another CA, or a `cert-reject` switch. */
  tlsRejected: number;
}

/** The simulator's state as status() and the control endpoint show it. */
export interface SimulatorStatus {
  step: number;
  modes: Readonly<Record<string, TargetMode>>;
  stats: SimulatorStats;
}

/** The counts of a simulator that has served nothing yet. */
export function emptyStats(): SimulatorStats {
  return {
    health: { ok: 0, failed: 0, rejected: 0 },
    sessions: { ok: 0, failed: 0, rejected: 0 },
    apps: { ok: 0, failed: 0, rejected: 0 },
    notFound: 0,
    tlsRejected: 0,
  };
}

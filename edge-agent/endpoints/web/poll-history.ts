/**
 * The status page's view of the pollers: a PollSink (sink.ts) that keeps, per monitored server, its
 * last health poll (when, CPU, memory, sessions), whether the last poll failed, the session count of
 * each virtual proxy, and the trend of the last hour. Memory is bounded: samples older than an hour
 * are dropped at each poll, and a server never holds more than MAX_TREND_POINTS of them (the fastest
 * polling interval, 1 s, gives 3,600 an hour).
 */

import type { HealthSample, ServerTags, SessionSample } from '../../../shared/platform/polled.js';
import { type PollSink, VIRTUAL_PROXY_TAG } from '../../sources/platform/sink.js';

export const TREND_WINDOW_MS = 3_600_000;
export const MAX_TREND_POINTS = 3_600;

/** One health poll's numbers: what the page shows and charts. */
export interface HealthPoint {
  atMs: number;
  /** §4 `cpu.total`, percent. */
  cpu: number;
  /** §4 `mem.allocated` and `mem.free`, MB as the engine reports them. */
  memAllocatedMb: number;
  memFreeMb: number;
  /** §4 `session.active`, `users.active`. */
  sessions: number;
  users: number;
}

export interface ServerHistory {
  last: HealthPoint | null;
  engineVersion: string | null;
  uptime: string | null;
  /** When the last health poll failed; null once a poll succeeds again. */
  failedAtMs: number | null;
  /** Sessions per virtual proxy, from the session poller (§5.1). */
  proxySessions: Map<string, number>;
  trend: HealthPoint[];
}

export class PollHistory implements PollSink {
  private readonly servers = new Map<string, ServerHistory>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The history of `serverName`; empty (no poll yet) for a server never seen. */
  of(serverName: string): ServerHistory {
    return (
      this.servers.get(serverName) ?? {
        last: null,
        engineVersion: null,
        uptime: null,
        failedAtMs: null,
        proxySessions: new Map(),
        trend: [],
      }
    );
  }

  private entry(serverName: string): ServerHistory {
    let entry = this.servers.get(serverName);
    if (!entry) {
      entry = this.of(serverName);
      this.servers.set(serverName, entry);
    }
    return entry;
  }

  health(sample: HealthSample, receivedAtMs: number): void {
    const entry = this.entry(sample.serverName);
    const { body } = sample;
    const point: HealthPoint = {
      atMs: receivedAtMs,
      cpu: body.cpu.total,
      memAllocatedMb: body.mem.allocated,
      memFreeMb: body.mem.free,
      sessions: body.session.active,
      users: body.users.active,
    };
    entry.last = point;
    entry.engineVersion = body.version;
    entry.uptime = sample.uptime;
    entry.failedAtMs = null;
    entry.trend.push(point);
    const oldest = this.now() - TREND_WINDOW_MS;
    let drop = Math.max(0, entry.trend.length - MAX_TREND_POINTS);
    while (drop < entry.trend.length && (entry.trend[drop]?.atMs ?? 0) < oldest) drop++;
    if (drop > 0) entry.trend.splice(0, drop);
  }

  healthFailed(serverName: string): void {
    this.entry(serverName).failedAtMs = this.now();
  }

  sessions(sample: SessionSample): void {
    this.entry(sample.serverName).proxySessions.set(sample.virtualProxy, sample.sessions.length);
  }

  sessionsFailed(serverName: string, tags: ServerTags): void {
    // A count that can no longer be read is not shown as current.
    this.entry(serverName).proxySessions.delete(tags[VIRTUAL_PROXY_TAG] ?? '');
  }
}

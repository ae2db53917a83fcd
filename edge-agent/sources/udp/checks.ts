/**
 * The listener's per-datagram checks before the queue (platform-formats.md §3): source validation
 * and the rate limit. Pure apart from the name resolution at start.
 */
import { lookup } from 'node:dns/promises';
import { isIPv4 } from 'node:net';

/**
 * §3 rate limit: a fixed 60 s window opened by the first datagram after the previous window expired;
 * within a window at most `maxPerMinute` are accepted.
 */
export class FixedWindowRateLimit {
  private windowStart = Number.NEGATIVE_INFINITY;
  private accepted = 0;

  constructor(
    private readonly maxPerMinute: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Takes one datagram at `nowMs`: true when it is within the limit. */
  take(nowMs: number): boolean {
    if (nowMs - this.windowStart >= this.windowMs) {
      this.windowStart = nowMs;
      this.accepted = 0;
    }
    if (this.accepted >= this.maxPerMinute) return false;
    this.accepted += 1;
    return true;
  }

  /** §3 `rate_limit_current`: accepted in the current window / elapsed seconds × 60; 0 when the window expired. */
  currentPerMinute(nowMs: number): number {
    const elapsed = nowMs - this.windowStart;
    if (elapsed >= this.windowMs || !Number.isFinite(elapsed)) return 0;
    return (this.accepted / Math.max(elapsed, 1)) * 60_000;
  }
}

export interface ResolvedSources {
  /** The IPv4 addresses allowed to send; null = validation off. */
  allowed: ReadonlySet<string> | null;
  /** Entries that could not be resolved, with the reason (logged at ERROR by the caller). */
  unresolved: { entry: string; reason: string }[];
  /** Validation was enabled but nothing resolved: it is off (WARN, as the configuration reference says). */
  disabledBecauseEmpty: boolean;
}

export type Resolve4 = (host: string) => Promise<string[]>;

const systemResolve4: Resolve4 = async (host) => (await lookup(host, { family: 4, all: true })).map((a) => a.address);

/**
 * §3 source validation at start: each entry is an IPv4 literal or a host name resolved to all its
 * IPv4 addresses. Names are not re-resolved later.
 */
export async function resolveAllowedSources(
  enabled: boolean,
  entries: readonly string[],
  resolve4: Resolve4 = systemResolve4,
): Promise<ResolvedSources> {
  if (!enabled) return { allowed: null, unresolved: [], disabledBecauseEmpty: false };
  const allowed = new Set<string>();
  const unresolved: { entry: string; reason: string }[] = [];
  await Promise.all(
    entries.map(async (raw) => {
      const entry = raw.trim();
      if (isIPv4(entry)) {
        allowed.add(entry);
        return;
      }
      try {
        const addresses = await resolve4(entry);
        if (addresses.length === 0) unresolved.push({ entry, reason: 'no IPv4 address' });
        for (const address of addresses) allowed.add(address);
      } catch (err) {
        unresolved.push({ entry, reason: err instanceof Error ? err.message : String(err) });
      }
    }),
  );
  if (allowed.size === 0) return { allowed: null, unresolved, disabledBecauseEmpty: true };
  return { allowed, unresolved, disabledBecauseEmpty: false };
}

/** The sender address as §3 compares it: an IPv4-mapped IPv6 address counts as its IPv4 address. */
export function senderIPv4(address: string): string {
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

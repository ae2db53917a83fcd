/**
 * The one behavioural contract of RateLimiter (shared/ratelimit/port.ts), run against every adapter
 * by ratelimit.test.ts. It encodes the "Limits" rules of audit-event-api.md: fixed 1-minute windows
 * aligned to the minute, one counter per client IP, request limit+1 refused with retry-after and
 * x-ratelimit-reset derived from the window end, and no lost or extra counts under concurrency
 * (the property that matters when many Lambda instances share one counter).
 *
 * Keys are unique per test, so adapters backed by a shared store need no cleanup between tests.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type RateLimitDecision, type RateLimiter, WINDOW_MS } from '../../../shared/ratelimit/port.js';

export interface TestClock {
  now(): number;
}

export type MakeLimiter = (limit: number, clock: TestClock) => Promise<RateLimiter>;

/** A settable clock; `now()` is what adapters read when `consume` gets no `nowMs`. */
export class ManualClock implements TestClock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
}

/** 2025-01-01T12:00:00.000Z, the start of a window (epoch-minute aligned). */
export const BASE_WINDOW_START = Date.UTC(2025, 0, 1, 12, 0, 0);

let keySeq = 0;
/** A client-IP-like key that no other test (or earlier run against a persistent store) uses. */
export function uniqueKey(ip: string): string {
  keySeq += 1;
  return `${ip}|${keySeq}-${randomUUID()}`;
}

async function consumeN(limiter: RateLimiter, key: string, n: number): Promise<RateLimitDecision[]> {
  const decisions: RateLimitDecision[] = [];
  for (let i = 0; i < n; i++) decisions.push(await limiter.consume(key));
  return decisions;
}

export function rateLimiterContract(name: string, makeLimiter: MakeLimiter): void {
  describe(`RateLimiter contract: ${name}`, () => {
    it('rejects a limit that is not a positive integer', async () => {
      const clock = new ManualClock(BASE_WINDOW_START);
      for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
        // Whether the factory throws or rejects, the construction must fail.
        await expect(
          Promise.resolve().then(() => makeLimiter(bad, clock)),
          `limit ${bad}`,
        ).rejects.toThrow(RangeError);
      }
    });

    it('with limit 300 allows requests 1..300 of one IP (remaining 299..0) and refuses request 301', async () => {
      const clock = new ManualClock(BASE_WINDOW_START + 12_345);
      const limiter = await makeLimiter(300, clock);
      const ipA = uniqueKey('203.0.113.10');
      const windowEndSeconds = (BASE_WINDOW_START + WINDOW_MS) / 1000;

      const first300 = await consumeN(limiter, ipA, 300);
      expect(first300.map((d) => d.allowed)).toEqual(Array<boolean>(300).fill(true));
      expect(first300.map((d) => d.remaining)).toEqual(Array.from({ length: 300 }, (_, i) => 299 - i));
      for (const d of first300) {
        expect(d.limit).toBe(300);
        expect(d.resetAt).toBe(windowEndSeconds);
      }

      const request301 = await limiter.consume(ipA);
      expect(request301).toEqual({
        allowed: false,
        limit: 300,
        remaining: 0,
        resetAt: windowEndSeconds,
        retryAfterSeconds: 48, // ceil((60_000 - 12_345) / 1000) = ceil(47.655)
      });
      // Later requests in the same window stay refused, even close to its end.
      clock.ms = BASE_WINDOW_START + WINDOW_MS - 1;
      expect(await limiter.consume(ipA)).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    });

    it('counts each IP on its own: another IP is allowed while the first is refused', async () => {
      const clock = new ManualClock(BASE_WINDOW_START + 1_000);
      const limiter = await makeLimiter(300, clock);
      const ipA = uniqueKey('203.0.113.20');
      const ipB = uniqueKey('203.0.113.21');

      await consumeN(limiter, ipA, 300);
      expect((await limiter.consume(ipA)).allowed).toBe(false);

      const firstOfB = await limiter.consume(ipB);
      expect(firstOfB).toMatchObject({ allowed: true, limit: 300, remaining: 299 });
      const moreOfB = await consumeN(limiter, ipB, 9);
      expect(moreOfB.map((d) => d.remaining)).toEqual([298, 297, 296, 295, 294, 293, 292, 291, 290]);
      // B's requests did not reset or free up A's counter.
      expect((await limiter.consume(ipA)).allowed).toBe(false);
    });

    it('starts a fresh count in the next window, exactly at the minute boundary', async () => {
      const clock = new ManualClock(BASE_WINDOW_START + 30_000);
      const limiter = await makeLimiter(5, clock);
      const ip = uniqueKey('198.51.100.7');

      expect((await consumeN(limiter, ip, 5)).every((d) => d.allowed)).toBe(true);
      clock.ms = BASE_WINDOW_START + WINDOW_MS - 1; // last millisecond of the window
      expect((await limiter.consume(ip)).allowed).toBe(false);

      clock.ms = BASE_WINDOW_START + WINDOW_MS; // first millisecond of the next window
      const fresh = await limiter.consume(ip);
      expect(fresh).toEqual({
        allowed: true,
        limit: 5,
        remaining: 4,
        resetAt: (BASE_WINDOW_START + 2 * WINDOW_MS) / 1000,
        retryAfterSeconds: 60,
      });
      expect((await consumeN(limiter, ip, 4)).map((d) => d.remaining)).toEqual([3, 2, 1, 0]);
      expect((await limiter.consume(ip)).allowed).toBe(false);

      // Several minutes later: fresh again (nothing carried over from older windows).
      clock.ms = BASE_WINDOW_START + 7 * WINDOW_MS + 59_000;
      expect(await limiter.consume(ip)).toMatchObject({ allowed: true, remaining: 4 });
    });

    it('uses windows aligned to the minute, not to the first request', async () => {
      const clock = new ManualClock(BASE_WINDOW_START + 59_900);
      const limiter = await makeLimiter(1, clock);
      const ip = uniqueKey('198.51.100.8');

      expect((await limiter.consume(ip)).allowed).toBe(true);
      // 200 ms later is a new window under minute alignment (a window anchored at the first
      // request would still refuse here).
      clock.ms = BASE_WINDOW_START + WINDOW_MS + 100;
      expect(await limiter.consume(ip)).toMatchObject({
        allowed: true,
        remaining: 0,
        resetAt: (BASE_WINDOW_START + 2 * WINDOW_MS) / 1000,
      });
    });

    it.each([
      { offsetMs: 0, retryAfterSeconds: 60 },
      { offsetMs: 500, retryAfterSeconds: 60 }, // 59.5 s left
      { offsetMs: 1_000, retryAfterSeconds: 59 },
      { offsetMs: 30_000, retryAfterSeconds: 30 },
      { offsetMs: 40_700, retryAfterSeconds: 20 }, // 19.3 s left: rounds up, not to nearest
      { offsetMs: 30_001, retryAfterSeconds: 30 }, // 29.999 s left
      { offsetMs: 59_000, retryAfterSeconds: 1 },
      { offsetMs: 59_800, retryAfterSeconds: 1 }, // 0.2 s left
      { offsetMs: 59_999, retryAfterSeconds: 1 },
    ])(
      'retry-after is the whole seconds left in the window, at least 1 (offset $offsetMs ms → $retryAfterSeconds s)',
      async ({ offsetMs, retryAfterSeconds }) => {
        const windowStart = BASE_WINDOW_START + 42 * WINDOW_MS;
        const clock = new ManualClock(windowStart + offsetMs);
        const limiter = await makeLimiter(1, clock);
        const ip = uniqueKey('192.0.2.30');

        expect((await limiter.consume(ip)).allowed).toBe(true);
        expect(await limiter.consume(ip)).toEqual({
          allowed: false,
          limit: 1,
          remaining: 0,
          resetAt: (windowStart + WINDOW_MS) / 1000,
          retryAfterSeconds,
        });
      },
    );

    it('an explicit nowMs takes precedence over the clock', async () => {
      const clock = new ManualClock(BASE_WINDOW_START);
      const limiter = await makeLimiter(1, clock);
      const ip = uniqueKey('192.0.2.40');
      const elsewhere = BASE_WINDOW_START + 100 * WINDOW_MS + 45_000;

      expect(await limiter.consume(ip, elsewhere)).toMatchObject({
        allowed: true,
        resetAt: (BASE_WINDOW_START + 101 * WINDOW_MS) / 1000,
      });
      expect(await limiter.consume(ip, elsewhere + 1_000)).toMatchObject({ allowed: false, retryAfterSeconds: 14 });
      // The clock's own window has its own, untouched counter.
      expect((await limiter.consume(ip)).allowed).toBe(true);
    });

    it('concurrent consume calls for one key allow exactly `limit` (no lost or double counts)', async () => {
      const clock = new ManualClock(BASE_WINDOW_START + 20_000);
      const limiter = await makeLimiter(20, clock);
      const ip = uniqueKey('192.0.2.50');

      const decisions = await Promise.all(Array.from({ length: 50 }, () => limiter.consume(ip)));
      const allowed = decisions.filter((d) => d.allowed);
      expect(allowed).toHaveLength(20);
      // Every allowed request saw a distinct count: remaining 19..0, each exactly once.
      expect(allowed.map((d) => d.remaining).sort((a, b) => b - a)).toEqual(
        Array.from({ length: 20 }, (_, i) => 19 - i),
      );
      expect(decisions.filter((d) => !d.allowed).every((d) => d.remaining === 0)).toBe(true);
      // And the window stays exhausted.
      expect((await limiter.consume(ip)).allowed).toBe(false);
    });
  });
}

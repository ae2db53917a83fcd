/**
 * The one behavioural contract of IdempotencyStore (shared/idempotency/port.ts), run against every
 * adapter by idempotency.test.ts: claim → complete makes a duplicate with the original receivedAt
 * for the window and no longer; release lets the retry through; concurrent claims give one
 * winner; a store opened again (a restart, another Lambda instance) sees the same records.
 *
 * Keys are unique per test, so adapters backed by a shared store need no cleanup between tests.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { IdempotencyStore } from '../../../shared/idempotency/port.js';

export interface StoreUnderTest {
  store: IdempotencyStore;
  /** The same records through a new instance (local: stopped and started again; DynamoDB: a second client object). */
  reopen(): Promise<IdempotencyStore>;
  close(): Promise<void>;
}

export type MakeStore = (windowSeconds: number) => Promise<StoreUnderTest>;

export const T0 = Date.UTC(2026, 10, 24, 8, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString();

export function idempotencyContract(name: string, make: MakeStore): void {
  describe(`IdempotencyStore contract: ${name}`, () => {
    it('rejects a window that is not a positive number of seconds', async () => {
      for (const bad of [0, -1, 1.5, Number.NaN])
        await expect(
          Promise.resolve().then(() => make(bad)),
          `window ${bad}`,
        ).rejects.toThrow(RangeError);
    });

    it('claims a new key once; after complete, a repeat is a duplicate with the first receivedAt', async () => {
      const s = await make(3600);
      try {
        const key = randomUUID();
        expect(await s.store.claim(key, T0)).toEqual({ status: 'claimed' });
        await s.store.complete(key, iso(T0), T0);
        expect(await s.store.claim(key, T0 + 1000)).toEqual({ status: 'duplicate', receivedAt: iso(T0) });
        expect(await s.store.claim(key, T0 + 3_599_000)).toEqual({ status: 'duplicate', receivedAt: iso(T0) });
        // Other keys are unaffected.
        expect(await s.store.claim(randomUUID(), T0 + 1000)).toEqual({ status: 'claimed' });
      } finally {
        await s.close();
      }
    });

    it('forgets a record once the window has passed', async () => {
      const s = await make(60);
      try {
        const key = randomUUID();
        await s.store.claim(key, T0);
        await s.store.complete(key, iso(T0), T0);
        expect((await s.store.claim(key, T0 + 59_000)).status).toBe('duplicate');
        expect(await s.store.claim(key, T0 + 61_000)).toEqual({ status: 'claimed' });
      } finally {
        await s.close();
      }
    });

    it('answers "in progress" to a claim while another holds it, and lets the retry through after release', async () => {
      const s = await make(3600);
      try {
        const key = randomUUID();
        expect(await s.store.claim(key, T0)).toEqual({ status: 'claimed' });
        expect(await s.store.claim(key, T0 + 10)).toEqual({ status: 'in-progress' });
        await s.store.release(key);
        expect(await s.store.claim(key, T0 + 20)).toEqual({ status: 'claimed' });
      } finally {
        await s.close();
      }
    });

    it('gives exactly one of many concurrent claims of a key', async () => {
      const s = await make(3600);
      try {
        const key = randomUUID();
        const claims = await Promise.all(Array.from({ length: 20 }, () => s.store.claim(key, T0)));
        expect(claims.filter((c) => c.status === 'claimed')).toHaveLength(1);
        expect(claims.filter((c) => c.status === 'in-progress')).toHaveLength(19);
      } finally {
        await s.close();
      }
    });

    it('keeps completed records when opened again (a restart, another instance)', async () => {
      const s = await make(3600);
      const keys = Array.from({ length: 5 }, () => randomUUID());
      for (const [i, key] of keys.entries()) {
        await s.store.claim(key, T0 + i);
        await s.store.complete(key, iso(T0 + i), T0 + i);
      }
      const again = await s.reopen();
      try {
        for (const [i, key] of keys.entries())
          expect(await again.claim(key, T0 + 10_000)).toEqual({ status: 'duplicate', receivedAt: iso(T0 + i) });
        expect(await again.claim(randomUUID(), T0 + 10_000)).toEqual({ status: 'claimed' });
      } finally {
        await s.close();
      }
    });
  });
}

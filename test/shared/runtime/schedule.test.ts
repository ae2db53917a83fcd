/**
 * The text-schedule scheduler (platform-formats.md §10.1): UTC, clock boundaries, run at start, no
 * overlap, the timer gone after stop. Schedules of seconds run on the real clock; the 15-minute
 * and hourly boundaries use vitest's fake clock, because on a real one they would take minutes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ScheduledTask, TextSchedule } from '../../../shared/runtime/schedule.js';
import { sleep } from '../../support/ports.js';

const at = (iso: string) => new Date(iso).getTime();

describe('TextSchedule', () => {
  it('gives the next clock boundary, never the moment asked from', () => {
    const quarter = new TextSchedule('every 15 minutes');
    expect(new Date(quarter.nextAfter(at('2026-11-24T09:42:48.538Z')) ?? 0).toISOString()).toBe(
      '2026-11-24T09:45:00.000Z',
    );
    expect(new Date(quarter.nextAfter(at('2026-11-24T09:45:00.000Z')) ?? 0).toISOString()).toBe(
      '2026-11-24T10:00:00.000Z',
    );
    // `later` alone answers the moment itself inside an hour: the scheduler waits for the next hour.
    expect(
      new Date(new TextSchedule('every 1 hour').nextAfter(at('2026-11-24T09:42:48.538Z')) ?? 0).toISOString(),
    ).toBe('2026-11-24T10:00:00.000Z');
    expect(
      new Date(new TextSchedule('every 1 second').nextAfter(at('2026-11-24T09:42:48.538Z')) ?? 0).toISOString(),
    ).toBe('2026-11-24T09:42:49.000Z');
    expect(
      new Date(new TextSchedule('every 30 seconds').nextAfter(at('2026-11-24T09:42:48.538Z')) ?? 0).toISOString(),
    ).toBe('2026-11-24T09:43:00.000Z');
    // UTC: 10:15 is 10:15 UTC whatever the machine's zone.
    expect(new Date(new TextSchedule('at 10:15 am').nextAfter(at('2026-11-24T09:42:48.538Z')) ?? 0).toISOString()).toBe(
      '2026-11-24T10:15:00.000Z',
    );
  });

  it('gives the gap between two occurrences (the producer interval of §8.2)', () => {
    expect(new TextSchedule('every 15 minutes').gapAfter(at('2026-11-24T09:42:48.538Z'))).toBe(900_000);
    expect(new TextSchedule('every 2 seconds').gapAfter(at('2026-11-24T09:42:48.538Z'))).toBe(2_000);
  });

  it('refuses a text that does not parse, saying where', () => {
    expect(() => new TextSchedule('every 5 minuts')).toThrow(/from position 8/);
  });
});

describe('ScheduledTask', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at start, then on the quarter hours, not 15 minutes after the start (fake clock)', async () => {
    vi.useFakeTimers({ now: at('2026-11-24T09:42:48.538Z') });
    const runs: (string | null)[] = [];
    const task = new ScheduledTask({
      name: 't',
      schedule: 'every 15 minutes',
      task: (occurrence) => {
        runs.push(occurrence === null ? null : new Date(occurrence).toISOString());
        return Promise.resolve();
      },
    });
    await task.start();
    await vi.advanceTimersByTimeAsync(35 * 60_000);
    expect(runs).toEqual([null, '2026-11-24T09:45:00.000Z', '2026-11-24T10:00:00.000Z', '2026-11-24T10:15:00.000Z']);
    await task.stop();
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    expect(runs).toHaveLength(4);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('fires on whole seconds of the real clock, and nothing after stop', async () => {
    const runs: { occurrence: number | null; ranAt: number }[] = [];
    const task = new ScheduledTask({
      name: 't',
      schedule: 'every 1 second',
      task: (occurrence) => {
        runs.push({ occurrence, ranAt: Date.now() });
        return Promise.resolve();
      },
    });
    await task.start();
    await expect.poll(() => runs.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    await task.stop();
    const count = runs.length;
    expect(runs[0]?.occurrence).toBeNull();
    for (const run of runs.slice(1)) {
      expect(run.occurrence ?? 1, 'a clock boundary').toBe(Math.floor((run.occurrence ?? 1) / 1000) * 1000);
      expect(run.ranAt).toBeGreaterThanOrEqual(run.occurrence ?? Infinity);
    }
    await sleep(1_500);
    expect(runs).toHaveLength(count);
  });

  it('skips and counts an occurrence while the previous run is still going', async () => {
    const skips: number[] = [];
    let release = (): void => undefined;
    const task = new ScheduledTask({
      name: 't',
      schedule: 'every 1 second',
      task: () => new Promise<void>((resolve) => (release = resolve)),
      onSkip: (n) => skips.push(n),
    });
    await task.start();
    await expect.poll(() => task.skipped, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    expect(skips.slice(0, 2)).toEqual([1, 2]);
    expect(task.completed).toBe(0);
    release();
    await task.stop();
    expect(task.completed).toBe(1);
  });
});

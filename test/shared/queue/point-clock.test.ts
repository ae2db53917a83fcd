/** §0.3 point times as the queue carries them: PointClock.nextText is next() as decimal text, for every event time. */
import { describe, expect, it } from 'vitest';
import { MAX_POINT_MS, PointClock } from '../../../shared/queue/point-clock.js';

describe('PointClock.nextText', () => {
  it('equals next().toString() and takes the same counter values, wrap and edge times included', () => {
    const times = [
      1710233130000,
      1710233130000.9,
      1710233999999,
      1710234000000,
      1710230000001,
      1,
      0.5,
      0,
      -1,
      -1710233130000,
      MAX_POINT_MS,
      MAX_POINT_MS + 1,
      86_400_000,
      999,
      999_999,
      1_000_000,
      1_000_001,
      10_000_000_000,
    ];
    for (const start of [0, 1, 9, 99_999, 100_000, 999_998]) {
      const text = new PointClock(start);
      const big = new PointClock(start);
      for (let i = 0; i < 5; i++) {
        for (const ms of times) expect(text.nextText(ms)).toBe(big.next(ms).toString());
      }
    }
  });

  it('rejects a time that is not finite, as next() does', () => {
    expect(() => new PointClock().nextText(Number.NaN)).toThrow(RangeError);
    expect(() => new PointClock().nextText(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

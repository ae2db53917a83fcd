/** RecentIds: the last `max` ids added, the oldest forgotten first, across many rounds of the ring. */
import { describe, expect, it } from 'vitest';
import { RecentIds } from '../../../shared/util/recent-ids.js';

describe('RecentIds', () => {
  it('remembers the last max ids added and forgets the oldest first, however many times the ring turns', () => {
    const max = 5;
    const recent = new RecentIds(max);
    for (let i = 0; i < 23; i++) recent.add(`id-${i}`);
    const remembered = Array.from({ length: 23 }, (_, i) => recent.has(`id-${i}`));
    expect(remembered).toEqual(Array.from({ length: 23 }, (_, i) => i >= 23 - max));
  });

  it('does not count an id added again: it keeps its place, and no other id is forgotten for it', () => {
    const recent = new RecentIds(3);
    for (const id of ['a', 'b', 'c', 'a', 'b', 'a']) recent.add(id);
    expect(['a', 'b', 'c'].map((id) => recent.has(id))).toEqual([true, true, true]);
    recent.add('d');
    // 'a' was the first added: it goes first, its repeats notwithstanding.
    expect(['a', 'b', 'c', 'd'].map((id) => recent.has(id))).toEqual([false, true, true, true]);
  });

  it('refuses a bound that is not a positive integer', () => {
    for (const max of [0, -1, 1.5, Number.NaN]) expect(() => new RecentIds(max)).toThrow(/positive integer/);
  });
});

/** Fifo: first in, first out across its drops of the passed part, with slots that can be emptied in place. */
import { describe, expect, it } from 'vitest';
import { Fifo } from '../../../shared/util/fifo.js';

describe('Fifo', () => {
  it('gives its items back in the order they came, across many drops of the passed part', () => {
    const fifo = new Fifo<number>();
    const out: number[] = [];
    let next = 0;
    // Push 3, take 2, so the array is dropped both when empty and when half passed.
    for (let round = 0; round < 5000; round++) {
      for (let i = 0; i < 3; i++) fifo.push(next++);
      for (let i = 0; i < 2; i++) out.push(fifo.shift() ?? -1);
    }
    while (fifo.length > 0) out.push(fifo.shift() ?? -1);
    expect(out).toEqual(Array.from({ length: next }, (_, i) => i));
    expect(fifo.shift()).toBeUndefined();
    expect(fifo.peek()).toBeUndefined();
  });

  it('empties a slot in place by its number, not once taken or for another item, and skipEmpty passes emptied slots at the front', () => {
    const fifo = new Fifo<string>();
    for (let i = 0; i < 2000; i++) {
      fifo.shift();
      fifo.push(`x${i}`);
    }
    const slots = ['a', 'b', 'c', 'd'].map((item) => ({ item, slot: fifo.push(item) }));
    // Slot numbers run on across the drops: the 2,000 before, then these four.
    expect(slots.map((s) => s.slot)).toEqual([2000, 2001, 2002, 2003]);
    expect(fifo.shift()).toBe('x1999');
    const [a, b, c] = slots;
    expect(fifo.empty(b?.slot ?? -1, 'c')).toBe(false);
    expect(fifo.empty(b?.slot ?? -1, 'b')).toBe(true);
    expect(fifo.empty(b?.slot ?? -1, 'b')).toBe(false);
    expect(fifo.empty(a?.slot ?? -1, 'a')).toBe(true);
    expect(fifo.length).toBe(4);
    fifo.skipEmpty();
    expect(fifo.length).toBe(2);
    expect(fifo.peek()).toBe('c');
    expect(fifo.shift()).toBe('c');
    expect(fifo.empty(c?.slot ?? -1, 'c')).toBe(false);
    expect(fifo.shift()).toBe('d');
    expect(fifo.length).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { groupDigits } from '../../../shared/util/numbers.js';

describe('groupDigits', () => {
  it('groups integers as en-US does', () => {
    for (const n of [0, 7, 999, 1000, 12_345, 1_234_567, -1_234_567, 1_048_576, Number.MAX_SAFE_INTEGER, -5]) {
      expect(groupDigits(n), String(n)).toBe(n.toLocaleString('en-US'));
    }
  });

  it('leaves other numbers as String() gives them', () => {
    expect(groupDigits(1.5)).toBe('1.5');
    expect(groupDigits(Number.NaN)).toBe('NaN');
    expect(groupDigits(1e21)).toBe('1e+21');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  codePointLength,
  hasNoControl,
  sanitiseField,
  stripControl,
  truncateCodePoints,
} from '../../../../edge-agent/sources/common/sanitise.js';

const GRIN = '\u{1F600}'; // 😀, a surrogate pair
const HIGH = '\uD83D';
const LOW = '\uDE00';

/** Arbitrary UTF-16 text: any code unit, so lone surrogates and control characters are frequent. */
const codeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
  .map((units) => String.fromCharCode(...units));
const mixed = fc.oneof(codeUnits, fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ maxLength: 40 }));

describe('sanitiseField: s(n) of §0.1', () => {
  it('removes every U+0000–U+001F and U+007F, tab, CR and LF included', () => {
    for (let c = 0; c <= 0x1f; c++) {
      expect(sanitiseField(`a${String.fromCharCode(c)}b`, 10)).toBe('ab');
    }
    expect(sanitiseField('a\u007fb', 10)).toBe('ab');
    expect(sanitiseField('\tline 1\r\nline 2\n', 100)).toBe('line 1line 2');
    expect(sanitiseField('\u0000\u0001\u001f\u007f', 100)).toBe('');
  });

  it('keeps everything else: space, C1 controls, non-BMP, U+FFFD, lone surrogates', () => {
    expect(sanitiseField(' \u0080\u009f\u00a0é', 10)).toBe(' \u0080\u009f\u00a0é');
    expect(sanitiseField(`${GRIN}\uFFFD${HIGH}x${LOW}`, 10)).toBe(`${GRIN}\uFFFD${HIGH}x${LOW}`);
  });

  it('truncates to n code points', () => {
    expect(sanitiseField('abcdef', 3)).toBe('abc');
    expect(sanitiseField('abc', 3)).toBe('abc');
    expect(sanitiseField('abc', 4)).toBe('abc');
    expect(sanitiseField('', 4)).toBe('');
  });

  it('never splits a surrogate pair at the cut', () => {
    expect(sanitiseField(`ab${GRIN}c`, 2)).toBe('ab');
    expect(sanitiseField(`ab${GRIN}c`, 3)).toBe(`ab${GRIN}`);
    expect(sanitiseField(`${GRIN}${GRIN}${GRIN}`, 2)).toBe(`${GRIN}${GRIN}`);
    expect(sanitiseField(`${GRIN}`, 1)).toBe(GRIN);
    // 1000 pairs = 2000 code units: the cap counts code points.
    expect(sanitiseField(GRIN.repeat(1001), 1000)).toBe(GRIN.repeat(1000));
    expect(sanitiseField('a' + GRIN.repeat(1000), 1000)).toBe('a' + GRIN.repeat(999));
  });

  it('counts a lone surrogate as one code point', () => {
    expect(sanitiseField(`${HIGH}${HIGH}${LOW}x`, 2)).toBe(`${HIGH}${GRIN}`);
    expect(sanitiseField(`${LOW}${HIGH}x`, 2)).toBe(`${LOW}${HIGH}`);
    expect(sanitiseField(`ab${HIGH}`, 3)).toBe(`ab${HIGH}`);
  });

  it('removes control characters before counting (a pair split by one is joined, then counted once)', () => {
    expect(sanitiseField(`\n\n\nabc`, 2)).toBe('ab');
    expect(sanitiseField(`${HIGH}\u0001${LOW}x`, 1)).toBe(GRIN);
  });

  it('n ≤ 0, NaN, fractional and Infinity caps', () => {
    expect(sanitiseField('abc', 0)).toBe('');
    expect(sanitiseField('abc', -5)).toBe('');
    expect(sanitiseField('abc', Number.NaN)).toBe('');
    expect(sanitiseField('abcdef', 2.9)).toBe('ab');
    expect(sanitiseField('ab\ncd', Number.POSITIVE_INFINITY)).toBe('abcd');
  });

  it('helpers', () => {
    expect(stripControl('a\u0000b')).toBe('ab');
    expect(hasNoControl('a b')).toBe(true);
    expect(hasNoControl('a\u007f')).toBe(false);
    expect(codePointLength(`a${GRIN}${HIGH}`)).toBe(3);
    expect(truncateCodePoints('a\nb', 2)).toBe('a\n');
  });

  it('equals the reference: Array.from (code points) of the stripped text, first n', () => {
    fc.assert(
      fc.property(mixed, fc.integer({ min: 0, max: 45 }), (text, n) => {
        const reference = Array.from(text.replace(/[\u0000-\u001f\u007f]/g, ''))
          .slice(0, n)
          .join('');
        const out = sanitiseField(text, n);
        expect(out).toBe(reference);
        expect(hasNoControl(out)).toBe(true);
        expect(codePointLength(out)).toBeLessThanOrEqual(n);
      }),
      { numRuns: 5000 },
    );
  });
});

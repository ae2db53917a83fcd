/**
 * Field sanitising, `s(n)` of platform-formats.md §0.1: every text field taken from a datagram (the
 * UDP source) or from a platform API's answer (the pollers) goes through it. Pure, never throws.
 */

/** True for the characters §0.1 removes: U+0000–U+001F and U+007F. */
function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

const CONTROL_CHARS = /[\u0000-\u001f\u007f]/g;

/** Removes every U+0000–U+001F and U+007F (tab, CR and LF included); everything else is kept. */
export function stripControl(text: string): string {
  for (let i = 0; i < text.length; i++) {
    if (isControl(text.charCodeAt(i))) return text.replace(CONTROL_CHARS, '');
  }
  return text;
}

// Written as the complement (everything else): V8 scans this form faster.
const CONTROL_CHAR = /[^\u0020-\u007e\u0080-\uffff]/;

/**
 * True when the text contains none of the characters §0.1 removes. The parsers ask this once of the
 * whole datagram: when it holds (nearly always), no field needs its own scan.
 */
export function hasNoControl(text: string): boolean {
  return !CONTROL_CHAR.test(text);
}

/**
 * The first `n` Unicode code points of `text`. A surrogate pair counts as one code point and is
 * never split; a lone surrogate counts as one. `n` ≤ 0 or NaN gives `''`, a fractional `n` is
 * rounded down, `Infinity` keeps everything.
 */
export function truncateCodePoints(text: string, n: number): string {
  if (!(n >= 1)) return '';
  // Code points never outnumber UTF-16 code units.
  if (text.length <= n) return text;
  const max = Math.floor(n);
  let i = 0;
  let count = 0;
  while (i < text.length && count < max) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      i += d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
    } else {
      i += 1;
    }
    count++;
  }
  return text.slice(0, i);
}

/** Number of Unicode code points (a lone surrogate counts as one). */
export function codePointLength(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    count++;
  }
  return count;
}

/**
 * `s(n)` of §0.1, with `n` as `maxCodePoints`: remove the control characters, then truncate to
 * `maxCodePoints` code points without splitting a surrogate pair. Removing first means that a pair
 * separated only by a control character is joined and counted as one code point, exactly as it ends
 * up in the output.
 */
export function sanitiseField(text: string, maxCodePoints: number): string {
  return truncateCodePoints(stripControl(text), maxCodePoints);
}

/**
 * Numbers as people read them, without `toLocaleString`: its first call loads the ICU locale data,
 * which costs a running Svc about 7 MB of RSS for good (measured with `node --expose-gc`), and a
 * long-running process formats counts in its log lines.
 */

/** An integer with en-US digit grouping: 1234567 → `1,234,567`; other numbers as `String()` gives them. */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return String(n);
  const text = String(Math.abs(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return n < 0 ? `-${text}` : text;
}

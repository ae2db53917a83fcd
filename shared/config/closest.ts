/** The known key a likely typo of a config key was meant to be: the "did you mean …?" of the loader's messages. */

/** The known key a likely typo was meant to be: same letters in another case, or an edit distance of at most 2. */
export function closest(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const sameCase = known.find((k) => k.toLowerCase() === lower);
  if (sameCase) return sameCase;
  let best: { key: string; d: number } | undefined;
  for (const key of known) {
    const limit = Math.max(1, Math.min(2, Math.floor(Math.max(name.length, key.length) / 3)));
    // The distance is at least the difference in length: a long key from the file costs nothing.
    if (Math.abs(name.length - key.length) > limit) continue;
    const d = editDistance(lower, key.toLowerCase(), limit);
    if (d <= limit && (!best || d < best.d)) best = { key, d };
  }
  return best?.key;
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions and swaps of neighbours),
 * or `limit + 1` as soon as it is certain to exceed `limit`. Three rolling rows: a file of thousands
 * of unknown keys compares each with every known key of similar length.
 */
function editDistance(a: string, b: string, limit: number): number {
  let before = new Int32Array(b.length + 1);
  let previous = Int32Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Int32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (before[j - 2] ?? 0) + 1);
      current[j] = best;
      rowMin = Math.min(rowMin, best);
    }
    // Row minima never decrease further down, so the distance is at least this one.
    if (rowMin > limit) return limit + 1;
    [before, previous, current] = [previous, current, before];
  }
  return Math.min(previous[b.length] ?? limit + 1, limit + 1);
}

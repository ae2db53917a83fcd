/**
 * What the benchmarks share: command-line/environment options, number formatting, statistics and
 * clean-up at exit.
 */
import { rmSync } from 'node:fs';

/** `--name=value`, `--name` (true), else the environment variable, else the fallback. */
export function option(name, envName, fallback) {
  const arg = process.argv.find((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (arg !== undefined) return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : 'true';
  return process.env[envName] ?? fallback;
}

export function positive(name, envName, fallback) {
  const value = Number(option(name, envName, String(fallback)));
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number`);
  return value;
}

export function nonNegative(name, envName, fallback) {
  const value = Number(option(name, envName, String(fallback)));
  if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number >= 0`);
  return value;
}

export const fmt = (n, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const pct = (n) => (Number.isFinite(n) ? `${Math.round(n * 100)} %` : 'n/a');
export const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');

/** The p-th percentile of an ascending array (nearest rank). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function median(xs) {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/**
 * Removes `dirs` (a Set the bench fills) when the process exits or is interrupted; `before` runs
 * first (e.g. to kill a server the bench started).
 */
export function removeOnExit(dirs, before = () => {}) {
  const cleanup = () => {
    before();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    dirs.clear();
  };
  process.on('exit', cleanup);
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
    process.once(signal, () => {
      cleanup();
      process.exit(code);
    });
  }
}

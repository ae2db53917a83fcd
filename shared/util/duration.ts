/** Durations as the config writes them (`30s`, `2m`, `1h`, `1d`, `0`; config/builders.ts Duration). */

const UNIT_MS = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** Milliseconds of a duration the config schema accepted; throws naming the text for any other. */
export function parseDuration(text: string): number {
  if (text === '0') return 0;
  const match = /^([0-9]{1,6})([smhd])$/.exec(text);
  if (!match) throw new Error(`${JSON.stringify(text)} is not a duration such as 30s, 2m, 1h or 1d`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** A duration in the largest whole unit that writes it exactly (`90000` → `90s`, `7200000` → `2h`). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0';
  for (const unit of ['d', 'h', 'm', 's'] as const) if (ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  return `${ms / 1000}s`;
}

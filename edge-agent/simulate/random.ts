/**
 * Seeded randomness shared by the simulators (the UDP datagram generator, the platform model): one
 * PRNG and one set of draw helpers, so the same seed gives the same stream everywhere and a change
 * to a helper changes every simulator alike.
 */

/** A small, fast, seeded PRNG (mulberry32): uniform numbers in [0, 1). The seed is taken modulo 2^32. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seed for the stream number `index` of a run seeded `seed`: the streams of one run are
 * independent of each other (mixing by the golden-ratio constant, as splitmix does), so a part
 * of a simulation draws the same numbers whatever the other parts do.
 */
export function deriveSeed(seed: number, index: number): number {
  let x = (seed ^ Math.imul(index + 1, 0x9e3779b9)) >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b) >>> 0;
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35) >>> 0;
  return (x ^ (x >>> 16)) >>> 0;
}

/** Draw helpers over one mulberry32 stream. Each helper's number of draws is fixed, so streams stay reproducible. */
export class SeededRandom {
  protected readonly rng: () => number;

  constructor(seed: number) {
    this.rng = mulberry32(seed);
  }

  /** Uniform in [0, 1). */
  fraction(): number {
    return this.rng();
  }

  /** Integer 0 … n−1. */
  int(n: number): number {
    return Math.floor(this.rng() * n);
  }

  /** Integer min … max, both included. */
  between(min: number, max: number): number {
    return min + this.int(max - min + 1);
  }

  chance(p: number): boolean {
    return this.rng() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)] as T;
  }

  /** `digits` lower-case hex digits. */
  hex(digits: number): string {
    let out = '';
    while (out.length < digits)
      out += Math.floor(this.rng() * 0x1_0000_0000)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, digits);
  }

  /** A random version-4 uuid, lower-case. */
  uuid(): string {
    const h = this.hex(32);
    const variant = '89ab'[this.int(4)] ?? '8';
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/**
 * Splitting a datagram into its fields, with surplus `;` assigned to the free-text fields
 * (platform-formats.md §0.4 steps 1–5). Pure, never throws.
 */
import { EXCEPTION_FIELD, type LogSource, SCHEDULER_USER_TRIPLE } from './layouts.js';

export interface SplitSpec {
  /** Field count `N` of the source. */
  n: number;
  /** Indices of the free-text fields, which may contain `;`. */
  freeText: readonly number[];
  /** The source's checks (§0.4 step 5); without one the first candidate `(k,0,…)` is used. */
  check?: (fields: string[]) => boolean;
}

/** Svc choice of §0.4 step 4: at most this many candidates are tried. */
export const MAX_CANDIDATES = 10_000;

export type SplitOutcome =
  | { ok: true; fields: string[]; parts: number }
  /** `too_few`: k < 0; `surplus`: k > 0 and the source has no free-text field. */
  | { ok: false; error: 'too_few' | 'surplus'; parts: number };

/** Number of parts of a split on every `;`. */
export function countParts(text: string): number {
  let parts = 1;
  for (let i = text.indexOf(';'); i !== -1; i = text.indexOf(';', i + 1)) parts++;
  return parts;
}

/** `text.split(';')`, the same parts. */
export function partsOf(text: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (let i = text.indexOf(';'); i !== -1; i = text.indexOf(';', i + 1)) {
    parts.push(text.slice(from, i));
    from = i + 1;
  }
  parts.push(text.slice(from));
  return parts;
}

/** The next composition in descending lexicographic order, in place; `false` after the last one. */
export function nextComposition(c: number[]): boolean {
  let i = c.length - 2;
  while (i >= 0 && (c[i] ?? 0) === 0) i--;
  if (i < 0) return false;
  let rest = 1;
  for (let j = i + 1; j < c.length; j++) {
    rest += c[j] ?? 0;
    c[j] = 0;
  }
  c[i] = (c[i] ?? 0) - 1;
  c[i + 1] = rest;
  return true;
}

function passes(check: (fields: string[]) => boolean, fields: string[]): boolean {
  try {
    return check(fields);
  } catch {
    return false;
  }
}

/** The valid free-text field indices of each spec, ascending, once per spec: a datagram with a surplus `;` is common. */
const FREE_FIELDS = new WeakMap<SplitSpec, readonly number[]>();

function freeFields(spec: SplitSpec): readonly number[] {
  let free = FREE_FIELDS.get(spec);
  if (free === undefined) {
    free = [...new Set(spec.freeText)].filter((i) => Number.isInteger(i) && i >= 0 && i < spec.n).sort((a, b) => a - b);
    FREE_FIELDS.set(spec, free);
  }
  return free;
}

/** §0.4 steps 1–5 with the reason of a failure. `text` is the decoded datagram. */
export function splitDatagram(text: string, spec: SplitSpec): SplitOutcome {
  const n = spec.n;
  // The usual case, no surplus `;`: the parts are the fields. An indexOf loop, not text.split(';'):
  // split goes through V8's runtime for every datagram (bench/udp-steps.mjs, its handler step).
  const split = partsOf(text);
  const parts = split.length;
  if (!Number.isInteger(n) || n < 1) return { ok: false, error: 'too_few', parts };
  const k = parts - n;
  if (k < 0) return { ok: false, error: 'too_few', parts };
  if (k === 0) return { ok: true, fields: split, parts };
  // Part boundaries: part p is text.slice(starts[p], ends[p]); parts p..q re-joined with `;` are
  // text.slice(starts[p], ends[q]), so a candidate costs O(N) whatever the surplus.
  const starts = [0];
  const ends: number[] = [];
  for (let i = text.indexOf(';'); i !== -1; i = text.indexOf(';', i + 1)) {
    ends.push(i);
    starts.push(i + 1);
  }
  ends.push(text.length);
  const free = freeFields(spec);
  if (free.length === 0) return { ok: false, error: 'surplus', parts };

  const build = (extra: readonly number[]): string[] => {
    const fields = new Array<string>(n);
    let p = 0;
    let j = 0;
    for (let i = 0; i < n; i++) {
      let last = p;
      if (free[j] === i) {
        last = p + (extra[j] ?? 0);
        j++;
      }
      fields[i] = text.slice(starts[p] ?? 0, ends[last] ?? text.length);
      p = last + 1;
    }
    return fields;
  };

  const candidate = free.map((_, j) => (j === 0 ? k : 0));
  const first = build(candidate);
  const check = spec.check;
  if (check === undefined || passes(check, first)) return { ok: true, fields: first, parts };
  for (let tried = 1; tried < MAX_CANDIDATES && nextComposition(candidate); tried++) {
    const fields = build(candidate);
    if (passes(check, fields)) return { ok: true, fields, parts };
  }
  return { ok: true, fields: first, parts };
}

/**
 * §0.4 steps 1–5 on a decoded datagram: exactly `spec.n` fields (not sanitised), or `null` when the
 * datagram is malformed (k < 0, or k > 0 without a free-text field).
 */
export function splitFields(text: string, spec: SplitSpec): string[] | null {
  const outcome = splitDatagram(text, spec);
  return outcome.ok ? outcome.fields : null;
}

// ---------------------------------------------------------------------------------------------
// §0.4 step 5: the source checks (Svc choice). They look at the assigned fields before sanitising.

const EXCEPTION_TEXT = /^[A-Za-z_][\w.`+]*(Exception|Error)\b/;

/** *exception*: `''`, or a text starting with a .NET exception type name. */
export function exceptionCheck(exception: string): boolean {
  return exception === '' || EXCEPTION_TEXT.test(exception);
}

const DOMAIN_USER = /^[^\\]+\\[^\\]+$/;

/**
 * *user triple* (scheduler fields 10, 11, 12): (a) all three `''`; (b) `user` is `DIR\id` and dir and
 * id are both `''` or both equal (case-insensitive) to its two halves; (c) `user` is `''` and dir and
 * id are both non-empty without `\`.
 */
export function userTripleCheck(dir: string, id: string, user: string): boolean {
  if (user === '') {
    if (dir === '' && id === '') return true;
    return dir !== '' && id !== '' && !dir.includes('\\') && !id.includes('\\');
  }
  if (!DOMAIN_USER.test(user)) return false;
  if (dir === '' && id === '') return true;
  const cut = user.indexOf('\\');
  return (
    dir.toLowerCase() === user.slice(0, cut).toLowerCase() && id.toLowerCase() === user.slice(cut + 1).toLowerCase()
  );
}

/** Proxy and repository: the exception check on field 9. */
export function exceptionFieldCheck(fields: string[]): boolean {
  return exceptionCheck(fields[EXCEPTION_FIELD] ?? '');
}

/** Scheduler: the user triple on fields 10–12 and the exception check on field 9. */
export function schedulerCheck(fields: string[]): boolean {
  const { dir, id, user } = SCHEDULER_USER_TRIPLE;
  return (
    userTripleCheck(fields[dir] ?? '', fields[id] ?? '', fields[user] ?? '') &&
    exceptionCheck(fields[EXCEPTION_FIELD] ?? '')
  );
}

/** The checks of each log source (user events and engine have no check: one free-text field). */
export const SOURCE_CHECKS: Readonly<Record<LogSource, ((fields: string[]) => boolean) | undefined>> = {
  'qseow-engine': undefined,
  'qseow-proxy': exceptionFieldCheck,
  'qseow-repository': exceptionFieldCheck,
  'qseow-scheduler': schedulerCheck,
  'qseow-qix-perf': undefined,
};

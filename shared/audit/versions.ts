/**
 * Audit client ↔ service version compatibility (audit-event-api.md, Versioning). A new range is
 * one line of COMPATIBILITY_MATRIX.
 */
// The three functions by their own files, not the package's index: the index loads all of semver
// (47 modules) into every process that checks a client version; these three need 22.
import clean from 'semver/functions/clean.js';
import satisfies from 'semver/functions/satisfies.js';
import valid from 'semver/functions/valid.js';
import { SVC_VERSION } from '../version.js';

export const COMPATIBILITY_MATRIX: readonly { service: string; client: string }[] = [
  { service: '>=15.0.0 <16.0.0', client: '>=0.3.0 <0.4.0' },
];

/** `X-Audit-Client-Version` may arrive several times (joined by commas): the first value counts. */
export function normaliseVersionHeader(value: string | undefined): string | undefined {
  const first = value?.split(',')[0]?.trim();
  return first ? first : undefined;
}

export interface VersionVerdict {
  /** The version evaluated, or null when the client sent none. */
  clientVersion: string | null;
  /** Where it came from. */
  from: 'header' | 'envelope' | 'none';
  compatible: boolean;
  /** Why not, for the 422 body. */
  reason?: string;
}

/** The client ranges this service version accepts. */
export function compatibleClientRanges(serviceVersion: string = SVC_VERSION): string[] {
  return COMPATIBILITY_MATRIX.filter((row) => satisfies(serviceVersion, row.service, { includePrerelease: true })).map(
    (row) => row.client,
  );
}

/**
 * Verdicts by (where from, service version, raw version). Clients send the same few versions
 * request after request, and semver parses ranges and versions afresh on every call, a large share
 * of a request's CPU; bench/audit-steps.mjs ("client version") measures the cached call. Frozen,
 * since every caller gets the same object. Bounded: once full it is cleared, so odd versions from
 * outside cannot grow it.
 */
const VERDICT_CACHE_LIMIT = 256;
const verdicts = new Map<string, Readonly<VersionVerdict>>();

function verdictOf(raw: string, from: 'header' | 'envelope', serviceVersion: string): Readonly<VersionVerdict> {
  const ranges = compatibleClientRanges(serviceVersion);
  const parsed = valid(clean(raw) ?? raw);
  if (!parsed)
    return {
      clientVersion: raw,
      from,
      compatible: false,
      reason: `audit client version "${raw.slice(0, 64)}" is not a semantic version`,
    };
  const compatible = ranges.some((range) => satisfies(parsed, range, { includePrerelease: true }));
  return compatible
    ? { clientVersion: raw, from, compatible }
    : {
        clientVersion: raw,
        from,
        compatible,
        reason: `audit client version ${parsed} is not compatible with service ${serviceVersion} (compatible: ${ranges.join(' or ') || 'none'}); upgrade the out-of-range component`,
      };
}

const NO_VERSION: Readonly<VersionVerdict> = Object.freeze({ clientVersion: null, from: 'none', compatible: true });

/** Header first, then the envelope's `source.version`; none → compatible (accepted for backward compatibility). */
export function evaluateClientVersion(
  header: string | undefined,
  envelopeVersion: string | undefined,
  serviceVersion: string = SVC_VERSION,
): Readonly<VersionVerdict> {
  const fromHeader = normaliseVersionHeader(header);
  const raw = fromHeader ?? envelopeVersion?.trim();
  if (!raw) return NO_VERSION;
  const from = fromHeader ? 'header' : 'envelope';
  const key = `${from} ${serviceVersion} ${raw}`;
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    if (verdicts.size >= VERDICT_CACHE_LIMIT) verdicts.clear();
    verdict = Object.freeze(verdictOf(raw, from, serviceVersion));
    verdicts.set(key, verdict);
  }
  return verdict;
}

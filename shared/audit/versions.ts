/**
 * Audit client ↔ service version compatibility (audit-event-api.md, Versioning). A new range is
 * one line of COMPATIBILITY_MATRIX.
 */
import semver from 'semver';
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
  return COMPATIBILITY_MATRIX.filter((row) => semver.satisfies(serviceVersion, row.service, { includePrerelease: true })).map((row) => row.client);
}

/**
 * Verdicts by (raw version, service version). Clients send the same few versions request after
 * request, and semver parses ranges and versions afresh on every call (≈ 4 µs of a request).
 * Bounded: once full it is cleared, so odd versions from outside cannot grow it.
 */
const VERDICT_CACHE_LIMIT = 256;
const verdicts = new Map<string, Omit<VersionVerdict, 'from'>>();

function verdictOf(raw: string, serviceVersion: string): Omit<VersionVerdict, 'from'> {
  const key = `${serviceVersion}\u0000${raw}`;
  const cached = verdicts.get(key);
  if (cached !== undefined) return cached;
  const ranges = compatibleClientRanges(serviceVersion);
  const parsed = semver.valid(semver.clean(raw) ?? raw);
  let verdict: Omit<VersionVerdict, 'from'>;
  if (!parsed) {
    verdict = { clientVersion: raw, compatible: false, reason: `audit client version "${raw.slice(0, 64)}" is not a semantic version` };
  } else {
    const compatible = ranges.some((range) => semver.satisfies(parsed, range, { includePrerelease: true }));
    verdict = compatible
      ? { clientVersion: raw, compatible }
      : { clientVersion: raw, compatible, reason: `audit client version ${parsed} is not compatible with service ${serviceVersion} (compatible: ${ranges.join(' or ') || 'none'}); upgrade the out-of-range component` };
  }
  if (verdicts.size >= VERDICT_CACHE_LIMIT) verdicts.clear();
  verdicts.set(key, verdict);
  return verdict;
}

/** Header first, then the envelope's `source.version`; none → compatible (accepted for backward compatibility). */
export function evaluateClientVersion(header: string | undefined, envelopeVersion: string | undefined, serviceVersion: string = SVC_VERSION): VersionVerdict {
  const fromHeader = normaliseVersionHeader(header);
  const raw = fromHeader ?? envelopeVersion?.trim();
  if (!raw) return { clientVersion: null, from: 'none', compatible: true };
  return { ...verdictOf(raw, serviceVersion), from: fromHeader ? 'header' : 'envelope' };
}

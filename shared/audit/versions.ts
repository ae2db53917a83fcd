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

/** Header first, then the envelope's `source.version`; none → compatible (accepted for backward compatibility). */
export function evaluateClientVersion(header: string | undefined, envelopeVersion: string | undefined, serviceVersion: string = SVC_VERSION): VersionVerdict {
  const fromHeader = normaliseVersionHeader(header);
  const raw = fromHeader ?? envelopeVersion?.trim();
  const from = fromHeader ? 'header' : raw ? 'envelope' : 'none';
  if (!raw) return { clientVersion: null, from: 'none', compatible: true };
  const ranges = compatibleClientRanges(serviceVersion);
  const parsed = semver.valid(semver.clean(raw) ?? raw);
  if (!parsed) {
    return { clientVersion: raw, from, compatible: false, reason: `audit client version "${raw.slice(0, 64)}" is not a semantic version` };
  }
  const compatible = ranges.some((range) => semver.satisfies(parsed, range, { includePrerelease: true }));
  return compatible
    ? { clientVersion: raw, from, compatible }
    : { clientVersion: raw, from, compatible, reason: `audit client version ${parsed} is not compatible with service ${serviceVersion} (compatible: ${ranges.join(' or ') || 'none'}); upgrade the out-of-range component` };
}

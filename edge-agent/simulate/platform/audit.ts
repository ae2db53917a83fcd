/**
 * The browser-side audit client of the simulated platform: valid audit events (docs/audit-api.md)
 * about the simulator's users and apps, posted to Svc's audit API at a steady rate, so the demo's
 * audit data names the same people and apps as its user events and app list.
 */
import { request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import semver from 'semver';
import { compatibleClientRanges } from '../../../shared/audit/versions.js';
import type { DatagramPool } from '../messages.js';
import { deriveSeed, SeededRandom } from '../random.js';

export interface AuditDriveOptions {
  pool: Pick<DatagramPool, 'users' | 'apps'>;
  /** The simulator's seed; the audit stream draws from a stream of its own. */
  seed: number;
  /** `http://host:port`: the audit API's origin (local mode's gateway). */
  origin: string;
  /** Bearer token (`auditEvents.apiToken`), when one is required. */
  token?: string;
  /** Events per second, > 0. */
  rate: number;
  /** Ends the run. */
  signal: AbortSignal;
}

/** What the audit API answered, by status; `failed` counts requests that got no answer. */
export interface AuditDriveStats {
  sent: number;
  byStatus: Record<number, number>;
  failed: number;
  /** The last request error or non-202 answer, for the operator. */
  lastProblem?: string;
}

/** Stream number for deriveSeed, clear of the model's and the UDP streams'. */
const AUDIT_STREAM = 0xffff_ffe0;

/** A client version the running Svc accepts: the lowest of its first compatible range. */
export function simulatedClientVersion(): string {
  const range = compatibleClientRanges()[0];
  return (range === undefined ? null : semver.minVersion(range)?.version) ?? '0.0.0';
}

const SHEETS = ['Overview', 'Trends', 'Details', 'Top customers', 'Map'] as const;
const FIELDS = ['Region', 'Product', 'Year', 'Customer'] as const;
const CHARTS = ['barchart', 'linechart', 'table', 'kpi', 'map'] as const;

/** One valid envelope: a sheet loaded, a selection changed or an object shown, by one of the pool's users in one of its apps. */
export function auditEnvelope(
  random: SeededRandom,
  pool: AuditDriveOptions['pool'],
  version: string,
  nowMs: number,
): Record<string, unknown> {
  const user = random.pick(pool.users);
  const app = random.pick(pool.apps);
  const sheetIndex = random.int(SHEETS.length);
  const hex = (n: number) => Array.from({ length: n }, () => random.int(16).toString(16)).join('');
  // A version-4 UUID from the seeded stream, so a seed gives the same events.
  const eventId = `${hex(8)}-${hex(4)}-4${hex(3)}-${(8 + random.int(4)).toString(16)}${hex(3)}-${hex(12)}`;
  const context = {
    appId: app.id,
    appName: app.name.slice(0, 64),
    sheetId: `sheet-${sheetIndex}`,
    sheetName: SHEETS[sheetIndex],
    user: `UserDirectory=${user.dir}; UserId=${user.id}`,
  };
  const kind = random.int(3);
  const common = {
    schemaVersion: 1,
    eventId,
    timestamp: new Date(nowMs).toISOString(),
    source: { kind: 'qlik-sense-extension', name: 'audit-qs', version },
  };
  const objectId = `obj${random.between(1, 40)}`;
  switch (kind) {
    case 0:
      return {
        ...common,
        type: 'navigation.sheet.loaded',
        payload: { context, event: { sheetTitle: SHEETS[sheetIndex] } },
      };
    case 1:
      return {
        ...common,
        type: 'selection.state.changed',
        payload: {
          context,
          event: {
            selectionTxnId: eventId,
            details: [{ field: random.pick(FIELDS), values: [`value ${random.between(1, 20)}`] }],
          },
        },
      };
    default:
      // Carries objectData, which the per-event JSON writer stores (docs/audit-api.md).
      return {
        ...common,
        type: 'object.visibility.changed',
        payload: { context, event: { objectId, objectData: { qId: objectId, qType: random.pick(CHARTS) } } },
      };
  }
}

function post(url: URL, body: string, headers: Record<string, string>, signal: AbortSignal): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, signal, timeout: 5000 },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Posts events one after the other at `rate` per second until `signal` aborts; resolves with what
 * the API answered. A refused or failed request is counted and the run goes on (the demo's Svc may
 * still be starting).
 */
export async function driveAudit(
  options: AuditDriveOptions,
  stats: AuditDriveStats = { sent: 0, byStatus: {}, failed: 0 },
): Promise<AuditDriveStats> {
  const { pool, rate, signal } = options;
  const random = new SeededRandom(deriveSeed(options.seed, AUDIT_STREAM));
  const version = simulatedClientVersion();
  const url = new URL('/api/v1/audit-event', options.origin);
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-audit-client-version': version };
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  const periodMs = 1000 / rate;
  let next = Date.now();
  while (!signal.aborted) {
    const body = JSON.stringify(auditEnvelope(random, pool, version, Date.now()));
    try {
      const status = await post(url, body, headers, signal);
      stats.sent += 1;
      stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
      if (status !== 202) stats.lastProblem = `answered ${status}`;
    } catch (err) {
      if (signal.aborted) break;
      stats.failed += 1;
      stats.lastProblem = err instanceof Error ? err.message : String(err);
    }
    next += periodMs;
    const wait = next - Date.now();
    // An abort ends the wait early (the loop then ends).
    if (wait > 0) await sleep(wait, undefined, { signal }).catch(() => undefined);
    else next = Date.now();
  }
  return stats;
}

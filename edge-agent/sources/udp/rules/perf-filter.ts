/**
 * Engine-performance filter (platform-formats.md §2.4, `Svc.logEvents.enginePerformanceMonitor.monitorFilter`)
 * and the rejected-event counter (§6.6, written by the counter writer of §6.7). Pure: no I/O.
 */
import type { SvcConfig } from '../../../../shared/config/schema.js';

export type MonitorFilter = SvcConfig['logEvents']['enginePerformanceMonitor']['monitorFilter'];
export type AppSpecificEntry = MonitorFilter['appSpecific']['app'][number];
/** An `include[]` / `appExclude[]` item: `{appId and/or appName}`. */
export type AppMatch = AppSpecificEntry['include'][number];

/** The parts of an engine-performance event (§2.2) that the filter looks at. */
export interface PerfEvent {
  /** `app_id` (DocId), lower-case uuid or `''`. */
  appId: string;
  /** `app_name` from the app list, or `''`. */
  appName: string;
  objectType: string;
  objectId: string;
  method: string;
}

/**
 * An app item matches when every key it gives equals the event's. `appId` is compared
 * case-insensitively (ids are uuids, which the parser stores lower-case, §0.2), `appName` exactly.
 * An item that gives no key at all (the schema forbids it) never matches.
 */
export function appMatches(item: AppMatch, event: Pick<PerfEvent, 'appId' | 'appName'>): boolean {
  const { appId, appName } = item;
  if (appId === undefined && appName === undefined) return false;
  if (appId !== undefined && appId.toLowerCase() !== event.appId.toLowerCase()) return false;
  if (appName !== undefined && appName !== event.appName) return false;
  return true;
}

/** Rule shape of §2.4: `all` → accept unless excluded; not `all` → accept only if included. */
function ruleAccepts<T>(
  all: boolean,
  exclude: readonly T[],
  include: readonly T[],
  hit: (item: T) => boolean,
): boolean {
  return all ? !exclude.some(hit) : include.some(hit);
}

function objectTypeAccepts(rule: AppSpecificEntry['objectType'], objectType: string): boolean {
  return ruleAccepts(
    rule.allObjectTypes,
    rule.allObjectTypesExclude,
    rule.someObjectTypesInclude,
    (t) => t === objectType,
  );
}

function methodAccepts(rule: AppSpecificEntry['method'], method: string): boolean {
  return ruleAccepts(rule.allMethods, rule.allMethodsExclude, rule.someMethodsInclude, (m) => m === method);
}

function appObjectAccepts(rule: AppSpecificEntry['appObject'], objectId: string): boolean {
  return ruleAccepts(
    rule.allAppObjects,
    rule.allAppObjectsExclude,
    rule.someAppObjectsInclude,
    (o) => o.objectId === objectId,
  );
}

/** The appSpecific block: some `app[]` entry whose include matches passes all three of its rules. */
export function appSpecificAccepts(block: MonitorFilter['appSpecific'], event: PerfEvent): boolean {
  if (!block.enable) return false;
  return block.app.some(
    (entry) =>
      entry.include.some((item) => appMatches(item, event)) &&
      objectTypeAccepts(entry.objectType, event.objectType) &&
      appObjectAccepts(entry.appObject, event.objectId) &&
      methodAccepts(entry.method, event.method),
  );
}

/** The allApps block: not excluded, then the object-type and method rules (no object-id rule). */
export function allAppsAccepts(block: MonitorFilter['allApps'], event: PerfEvent): boolean {
  if (!block.enable) return false;
  if (block.appExclude.some((item) => appMatches(item, event))) return false;
  return objectTypeAccepts(block.objectType, event.objectType) && methodAccepts(block.method, event.method);
}

/**
 * §2.4: accepted when appSpecific accepts, or else allApps accepts. An app excluded in allApps can
 * still be accepted by appSpecific. Both blocks disabled → everything rejected.
 */
export function acceptPerfEvent(event: PerfEvent, filter: MonitorFilter): boolean {
  return appSpecificAccepts(filter.appSpecific, event) || allAppsAccepts(filter.allApps, event);
}

// ---------------------------------------------------------------------------------------------
// Rejected-event counter (§6.6)

/** `source` of every engine-performance event (§2.2). */
export const PERF_SOURCE = 'qseow-qix-perf';

/** A rejected engine-performance event, as the handler sees it. */
export interface PerfRejection {
  appId: string;
  appName: string;
  method: string;
  objectType: string;
  /** `process_time` in ms; `null` (failed validator) adds nothing to the sum. */
  processTime: number | null;
}

/** A log event dropped by a categorise `drop` rule. */
export interface CategoryDropRejection {
  source: string;
  host: string;
  subsystem: string;
  level: string;
}

/** One counter entry of a snapshot: one point of the rejected-event measurement. */
export type RejectedEventEntry =
  | {
      reason: 'perf_filter';
      source: typeof PERF_SOURCE;
      appId: string;
      appName: string;
      method: string;
      objectType: string;
      counter: number;
      /** Sum of `process_time` (ms) in the window. */
      processTime: number;
    }
  | {
      reason: 'category_drop';
      source: string;
      host: string;
      subsystem: string;
      level: string;
      counter: number;
    };

export type RejectedEventSnapshot = RejectedEventEntry[];

function entryKey(entry: RejectedEventEntry): string {
  return entry.reason === 'perf_filter'
    ? JSON.stringify([entry.reason, entry.appId, entry.appName, entry.method, entry.objectType])
    : JSON.stringify([entry.reason, entry.source, entry.host, entry.subsystem, entry.level]);
}

/**
 * Counts rejected events between two counter-writer ticks (§6.7): `perf_filter` keyed by
 * `(appId, appName, method, objectType)` with the sum of `process_time`, `category_drop` keyed by
 * `(source, host, subsystem, level)`. Whether counting is enabled is the caller's decision (§6.6).
 */
export class RejectedEventCounter {
  readonly #entries = new Map<string, RejectedEventEntry>();

  /** A perf-filter rejection (§2.4). */
  countPerfFilter(event: PerfRejection): void {
    const processTime = event.processTime !== null && Number.isFinite(event.processTime) ? event.processTime : 0;
    this.#add({
      reason: 'perf_filter',
      source: PERF_SOURCE,
      appId: event.appId,
      appName: event.appName,
      method: event.method,
      objectType: event.objectType,
      counter: 1,
      processTime,
    });
  }

  /** A `drop` by a categorise rule (§2.5). */
  countCategoryDrop(event: CategoryDropRejection): void {
    this.#add({
      reason: 'category_drop',
      source: event.source,
      host: event.host,
      subsystem: event.subsystem,
      level: event.level,
      counter: 1,
    });
  }

  /** Number of distinct keys counted since the last snapshot. */
  get size(): number {
    return this.#entries.size;
  }

  /** The entries counted so far, in first-counted order (the counter keeps no reference); it starts empty again. */
  snapshotAndReset(): RejectedEventSnapshot {
    const snapshot = [...this.#entries.values()];
    this.#entries.clear();
    return snapshot;
  }

  /**
   * Adds a snapshot back (its write failed, §6.7): counters and sums merge with whatever was
   * counted since, so the next tick carries both.
   */
  restore(snapshot: readonly RejectedEventEntry[]): void {
    for (const entry of snapshot) this.#add({ ...entry });
  }

  #add(entry: RejectedEventEntry): void {
    const key = entryKey(entry);
    const live = this.#entries.get(key);
    if (live === undefined) {
      this.#entries.set(key, entry);
      return;
    }
    live.counter += entry.counter;
    if (live.reason === 'perf_filter' && entry.reason === 'perf_filter') live.processTime += entry.processTime;
  }
}

/**
 * The tags §6.6 gives an entry, before `trackRejectedEvents.tags[]` (perf_filter only): `reason`,
 * then the key tags. `app_name` is omitted when empty and `app_name_set` says whether it was set;
 * other empty values stay `''` here (the line-protocol writer omits empty tag values, §6.0).
 */
export function rejectedEventTags(entry: RejectedEventEntry): Record<string, string> {
  if (entry.reason === 'category_drop') {
    return {
      reason: entry.reason,
      source: entry.source,
      host: entry.host,
      subsystem: entry.subsystem,
      level: entry.level,
    };
  }
  return {
    reason: entry.reason,
    source: entry.source,
    app_id: entry.appId,
    ...(entry.appName === '' ? {} : { app_name: entry.appName }),
    app_name_set: entry.appName === '' ? 'false' : 'true',
    method: entry.method,
    object_type: entry.objectType,
  };
}

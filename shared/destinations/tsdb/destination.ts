/**
 * Events to the tsdb, whatever their kind (platform-formats.md §6): audit events as points of
 * `auditEvents.destination.tsdb.measurementName`, health samples as the eight §6.1 measurements,
 * session samples as `user_session_summary` and `user_session_details` (§6.2), user events as
 * `user_events` (§6.3), log events as `log_event` (§6.4), and `points` events (event counts, rejected
 * counts, queue metrics, §6.5–6.8) as the edge computed them. Which kinds it takes is the config's (§0.6 gating, in the registry). Every
 * point carries its §0.3 time decided when the event was queued, so a redelivered event overwrites
 * itself.
 *
 * The database is prepared before the first write and again before each batch until that succeeds
 * (BaseDestination). A tsdb that cannot take anything now — unreachable (a TLS failure included) or
 * refusing the credentials, met by the setup or by a write — is DestinationWaitError: the events not
 * written wait for it (the local queue pauses instead of counting attempts towards the dead-letter
 * folder), and are written once it accepts again. Points the tsdb refuses for good (dropped at
 * chunk size 1, beyond retention) are not returned: the writer has logged and tracked them.
 *
 * One `write()` call per producing module (`AUDIT_EVENTS`, `HEALTH_METRICS`, `PROXY_SESSIONS`,
 * `USER_EVENTS`, `LOG_EVENTS`, each `points` event's own module), so failures are tracked with the right module (§6.0 step 5). Once one call
 * fails whole, the remaining groups are not sent (each would wait through its retries against the
 * same down tsdb) and come back for redelivery.
 *
 * The error tracker's own points (module ERROR_TRACKING, §6.10) are written `untracked` and last: a
 * failure to write them is logged at DEBUG and never tracked (no recursion), and an outage met by a
 * batch with other points is tracked with the module of those.
 */
import { ERROR_TRACKING_MODULE } from '../../errors/points.js';
import type { Log } from '../../logging/log.js';
import type { TagItem } from '../../platform/tags.js';
import type { QueuedEvent } from '../../queue/events.js';
import type { PointClock } from '../../queue/point-clock.js';
import { BaseDestination, DestinationWaitError } from '../port.js';
import { TsdbSetupError } from './http.js';
import type { Point } from './line-protocol.js';
import {
  auditPoint,
  healthPoints,
  type IncludeFields,
  jsonPointToPoint,
  logEventPoint,
  sessionPoints,
  userEventPoint,
} from './mappers.js';
import type { TsdbWriter } from './writer.js';

export const AUDIT_TSDB_MODULE = 'AUDIT_EVENTS';
export const USER_EVENTS_TSDB_MODULE = 'USER_EVENTS';
export const LOG_EVENTS_TSDB_MODULE = 'LOG_EVENTS';
/** §10.9 modules of polled data. */
export const HEALTH_TSDB_MODULE = 'HEALTH_METRICS';
export const SESSIONS_TSDB_MODULE = 'PROXY_SESSIONS';

export interface TsdbDestinationOptions {
  writer: Pick<TsdbWriter, 'ensureDatabase' | 'write'>;
  /** Audit events (`auditEvents.destination.tsdb`), else null: audit events are not taken. */
  audit: { measurement: string; staticTags: readonly TagItem[]; clock: PointClock } | null;
  /** `userEvents.tags[]` when user events go to the tsdb (§0.6), else null. */
  userEvents: { tags: readonly TagItem[] } | null;
  /** `logEvents.tags[]` when log events go to the tsdb (§0.6), else null. */
  logEvents: { tags: readonly TagItem[] } | null;
  /** Whether the edge's own points (kind `points`) are taken. */
  points: boolean;
  /** `tsdbConfig.includeFields` when health samples go to the tsdb (§0.6), else null or absent. */
  health?: { includeFields: IncludeFields } | null;
  /** Whether session samples go to the tsdb (§0.6). */
  sessions?: boolean;
  log: Log;
}

interface Item {
  id: string;
  points: Point[];
}

export class TsdbDestination extends BaseDestination {
  readonly name = 'tsdb';

  constructor(private readonly options: TsdbDestinationOptions) {
    super(options.log);
  }

  takes(q: QueuedEvent): boolean {
    const o = this.options;
    return (
      (q.kind === 'audit' && o.audit !== null) ||
      (q.kind === 'user-event' && o.userEvents !== null) ||
      (q.kind === 'log-event' && o.logEvents !== null) ||
      (q.kind === 'points' && o.points && q.points.length > 0) ||
      (q.kind === 'health' && (o.health ?? null) !== null) ||
      (q.kind === 'user-sessions' && o.sessions === true)
    );
  }

  /**
   * Creates the database (bucket) at first start. A tsdb that cannot be reached then is tracked like
   * a failed write (§10.9), with the module of the batch's first group; a batch of the error
   * tracker's own points alone tracks nothing (no recursion).
   */
  protected override async prepare(events: readonly QueuedEvent[]): Promise<void> {
    const tracked = [...this.group(events).keys()].find((module) => module !== ERROR_TRACKING_MODULE);
    try {
      await this.options.writer.ensureDatabase(tracked);
    } catch (err) {
      // BaseDestination fills in the events; the writer has logged the refusal.
      if (err instanceof TsdbSetupError && err.refusal !== undefined)
        throw new DestinationWaitError(err.message, new Set());
      throw err;
    }
  }

  protected async writeEvents(queued: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const failed = new Set<string>();
    let aborted: string | undefined;
    const untrackedLast = [...this.group(queued)].sort(
      ([a], [b]) => Number(a === ERROR_TRACKING_MODULE) - Number(b === ERROR_TRACKING_MODULE),
    );
    for (const [module, group] of untrackedLast) {
      if (aborted !== undefined) {
        for (const item of group) failed.add(item.id);
        continue;
      }
      const report = await this.options.writer.write(
        group.flatMap((i) => i.points),
        module,
        { untracked: module === ERROR_TRACKING_MODULE },
      );
      if (report.failedWhole.length === 0) continue;
      aborted = report.refusal ?? 'the tsdb cannot be written';
      const failedPoints = new Set(report.failedWhole);
      for (const item of group) if (item.points.some((p) => failedPoints.has(p))) failed.add(item.id);
    }
    if (aborted !== undefined) throw new DestinationWaitError(aborted, failed);
    return failed;
  }

  /** The points of the events, grouped by module in arrival order. */
  private group(queued: readonly QueuedEvent[]): Map<string, Item[]> {
    const groups = new Map<string, Item[]>();
    const add = (module: string, item: Item): void => {
      const group = groups.get(module);
      if (group === undefined) groups.set(module, [item]);
      else group.push(item);
    };
    const { audit, userEvents, logEvents, health, sessions } = this.options;
    for (const q of queued) {
      try {
        if (q.kind === 'audit' && audit !== null)
          add(AUDIT_TSDB_MODULE, {
            id: q.id,
            points: [auditPoint(q, audit.measurement, audit.staticTags, audit.clock)],
          });
        else if (q.kind === 'user-event' && userEvents !== null)
          add(USER_EVENTS_TSDB_MODULE, { id: q.id, points: [userEventPoint(q, userEvents.tags)] });
        else if (q.kind === 'log-event' && logEvents !== null)
          add(LOG_EVENTS_TSDB_MODULE, { id: q.id, points: [logEventPoint(q, logEvents.tags)] });
        else if (q.kind === 'points') add(q.module, { id: q.id, points: q.points.map(jsonPointToPoint) });
        else if (q.kind === 'health' && health !== undefined && health !== null)
          add(HEALTH_TSDB_MODULE, { id: q.id, points: healthPoints(q, health.includeFields) });
        else if (q.kind === 'user-sessions' && sessions === true)
          add(SESSIONS_TSDB_MODULE, { id: q.id, points: sessionPoints(q) });
      } catch (err) {
        // Only a malformed queued event gets here (a time that is not a decimal, an unsafe integer):
        // a redelivery would fail the same way, so it is dropped, not returned.
        this.log.error({ err, id: q.id, kind: q.kind }, 'queued event cannot be turned into tsdb points; dropped');
      }
    }
    return groups;
  }
}

/**
 * The platform's UDP events and the edge's own points to the tsdb (platform-formats.md §6.3, §6.4,
 * §6.5–6.8): user events as `user_events` points, log events as `log_event` points, and `points`
 * events (event counts, rejected counts, queue metrics) as they were computed at the edge. Every
 * point carries the §0.3 time decided at the edge, so a redelivered event overwrites itself.
 *
 * Modelled on `AuditTsdbDestination`: the database is prepared before the first write and again
 * before each batch until that succeeds; the events whose points the writer reports as failed whole
 * (tsdb unreachable, credentials refused) are returned for redelivery. Points the tsdb refuses for
 * good (dropped at chunk size 1, beyond retention) are not redelivered: the writer has logged and
 * tracked them.
 *
 * One `write()` call per producing module (`USER_EVENTS`, `LOG_EVENTS`, each `points` event's own
 * module), so failures are tracked with the right module (§6.0 step 5). Once one call fails whole,
 * the remaining groups are not sent (each would wait through its retries against the same down
 * tsdb) and come back for redelivery.
 */
import { jsonPointToPoint, logEventPoint, userEventPoint, type TagItem } from './platform-points.js';
import type { QueuedEvent } from '../../queue/events.js';
import type { Point } from './line-protocol.js';
import type { TsdbWriter } from './writer.js';
import type { Log } from '../../logging/log.js';

export const USER_EVENTS_TSDB_MODULE = 'USER_EVENTS';
export const LOG_EVENTS_TSDB_MODULE = 'LOG_EVENTS';

export interface PlatformTsdbOptions {
  writer: Pick<TsdbWriter, 'ensureDatabase' | 'write'>;
  /** `userEvents.tags[]` when user events go to the tsdb (§0.6), else null: user events are ignored. */
  userEvents: { tags: readonly TagItem[] } | null;
  /** `logEvents.tags[]` when log events go to the tsdb (§0.6), else null: log events are ignored. */
  logEvents: { tags: readonly TagItem[] } | null;
  log: Log;
}

interface Item {
  id: string;
  points: Point[];
}

export class PlatformTsdbDestination {
  readonly name = 'tsdb';
  private ready = false;

  constructor(private readonly options: PlatformTsdbOptions) {}

  async write(queued: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const groups = this.group(queued);
    const items = [...groups.values()].flat();
    if (items.length === 0) return new Set();
    if (!this.ready) {
      try {
        // Creates the database at first start; retried before each batch until the tsdb answers.
        await this.options.writer.ensureDatabase();
        this.ready = true;
      } catch (err) {
        this.options.log.warn({ err }, 'the tsdb cannot be prepared (database/bucket); platform events will be retried');
        return new Set(items.map((i) => i.id));
      }
    }
    const failed = new Set<string>();
    let aborted = false;
    for (const [module, group] of groups) {
      if (aborted) {
        for (const item of group) failed.add(item.id);
        continue;
      }
      const report = await this.options.writer.write(group.flatMap((i) => i.points), module);
      if (report.failedWhole.length === 0) continue;
      aborted = true;
      const failedPoints = new Set(report.failedWhole);
      for (const item of group) if (item.points.some((p) => failedPoints.has(p))) failed.add(item.id);
    }
    return failed;
  }

  /** The points of the events this destination serves, grouped by module in arrival order. */
  private group(queued: readonly QueuedEvent[]): Map<string, Item[]> {
    const groups = new Map<string, Item[]>();
    const add = (module: string, item: Item): void => {
      const group = groups.get(module);
      if (group === undefined) groups.set(module, [item]);
      else group.push(item);
    };
    const { userEvents, logEvents } = this.options;
    for (const q of queued) {
      try {
        if (q.kind === 'user-event' && userEvents !== null) add(USER_EVENTS_TSDB_MODULE, { id: q.id, points: [userEventPoint(q, userEvents.tags)] });
        else if (q.kind === 'log-event' && logEvents !== null) add(LOG_EVENTS_TSDB_MODULE, { id: q.id, points: [logEventPoint(q, logEvents.tags)] });
        else if (q.kind === 'points' && q.points.length > 0) add(q.module, { id: q.id, points: q.points.map(jsonPointToPoint) });
      } catch (err) {
        // Only a malformed queued event gets here (a time that is not a decimal, an unsafe integer):
        // a redelivery would fail the same way, so it is dropped, not returned.
        this.options.log.error({ err, id: q.id, kind: q.kind }, 'queued event cannot be turned into tsdb points; dropped');
      }
    }
    return groups;
  }
}

/**
 * Audit events to the tsdb: one point per event in `destination.tsdb.measurementName`, built from the
 * audit data model table (tags, fields, time). The point time is the event's own time plus the
 * process-wide point counter of platform-formats.md §0.3, so two events of the same millisecond
 * and tags never overwrite each other. It is decided once, when the audit API queues the event
 * (`timeNs`), so a redelivered point overwrites itself; only events queued by an older Svc get
 * theirs here. (A discriminator hashed from the event id would make redeliveries overwrite
 * themselves too, but two of 600 same-millisecond events already collide with a probability of
 * about 16 %: a silent loss, which the outage test caught.)
 */
import { AUDIT_COLUMNS, auditTimeMs, type AuditColumn } from '../../audit/datamodel.js';
import { eventsOfKind, type AuditQueuedEvent, type QueuedEvent } from '../../queue/events.js';
import { float, int, str, type FieldValue, type Point, type PointClock } from './line-protocol.js';
import type { TsdbWriter } from './writer.js';
import type { Log } from '../../logging/log.js';

export const AUDIT_TSDB_MODULE = 'AUDIT_EVENTS';

function fieldValue(column: AuditColumn, value: string | number): FieldValue {
  if (column.type === 'int' && typeof value === 'number') return int(value);
  if (column.type === 'float' && typeof value === 'number') return float(value);
  return str(String(value));
}

export function auditPoint(q: AuditQueuedEvent, measurement: string, staticTags: readonly { name: string; value: string }[], clock: PointClock): Point {
  const tags: Record<string, string | null> = {};
  const fields: Record<string, FieldValue | null> = {};
  for (const column of AUDIT_COLUMNS) {
    const value = column.get(q);
    if (column.tsdb === 'tag') tags[column.name] = value === null ? null : String(value);
    else if (column.tsdb === 'field') fields[column.name] = value === null ? null : fieldValue(column, value);
  }
  for (const tag of staticTags) tags[tag.name] = tag.value;
  return { measurement, tags, fields, timeNs: q.timeNs === undefined ? clock.next(auditTimeMs(q)) : BigInt(q.timeNs) };
}

export class AuditTsdbDestination {
  readonly name = 'tsdb';
  private ready = false;

  constructor(
    private readonly options: {
      writer: TsdbWriter;
      /** The process's point clock (§0.3), shared by everything that builds points. */
      clock: PointClock;
      measurement: string;
      staticTags: readonly { name: string; value: string }[];
      log: Log;
    },
  ) {}

  async write(queued: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const events = eventsOfKind(queued, 'audit');
    const all = new Set(events.map((e) => e.id));
    if (!this.ready) {
      try {
        // Creates the database at first start; retried before each batch until the tsdb answers.
        await this.options.writer.ensureDatabase();
        this.ready = true;
      } catch (err) {
        this.options.log.warn({ err }, 'the tsdb cannot be prepared (database/bucket); audit events will be retried');
        return all;
      }
    }
    const points = events.map((e) => auditPoint(e, this.options.measurement, this.options.staticTags, this.options.clock));
    const report = await this.options.writer.write(points, AUDIT_TSDB_MODULE);
    const failedPoints = new Set(report.failedWhole);
    return new Set(events.filter((_, i) => failedPoints.has(points[i] as Point)).map((e) => e.id));
  }
}

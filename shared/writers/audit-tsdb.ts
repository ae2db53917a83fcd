/**
 * Audit events to the tsdb: one point per event in `destination.tsdb.measurementName`, built from the
 * audit data model table (tags, fields, time). The point time is the event's own time plus a
 * discriminator derived from the event id, so a redelivered event overwrites its own point instead of
 * adding a second one (idempotent by event id).
 */
import { createHash } from 'node:crypto';
import { AUDIT_COLUMNS, type AuditColumn } from '../datamodel/audit.js';
import type { QueuedEvent } from '../queue/events.js';
import { float, int, pointTime, str, type FieldValue, type Point } from '../tsdb/line-protocol.js';
import type { TsdbWriter } from '../tsdb/writer.js';

export const AUDIT_TSDB_MODULE = 'AUDIT_EVENTS';

export interface AuditTsdbLog {
  warn(obj: object, msg: string): void;
}

function fieldValue(column: AuditColumn, value: string | number): FieldValue {
  if (column.type === 'int' && typeof value === 'number') return int(value);
  if (column.type === 'float' && typeof value === 'number') return float(value);
  return str(String(value));
}

/** A stable number in [0, 1,000,000) from the event id. */
export function idDiscriminator(id: string): number {
  return createHash('sha256').update(id).digest().readUInt32BE(0) % 1_000_000;
}

export function auditPoint(q: QueuedEvent, measurement: string, staticTags: readonly { name: string; value: string }[]): Point {
  const tags: Record<string, string | null> = {};
  const fields: Record<string, FieldValue | null> = {};
  let timeMs = Date.parse(q.receivedAt);
  for (const column of AUDIT_COLUMNS) {
    const value = column.get(q);
    if (column.tsdb === 'time' && typeof value === 'number') timeMs = value;
    else if (column.tsdb === 'tag') tags[column.name] = value === null ? null : String(value);
    else if (column.tsdb === 'field') fields[column.name] = value === null ? null : fieldValue(column, value);
  }
  for (const tag of staticTags) tags[tag.name] = tag.value;
  return { measurement, tags, fields, timeNs: pointTime(timeMs, idDiscriminator(q.id)) };
}

export class AuditTsdbDestination {
  readonly name = 'tsdb';
  private ready = false;

  constructor(
    private readonly options: {
      writer: TsdbWriter;
      measurement: string;
      staticTags: readonly { name: string; value: string }[];
      log: AuditTsdbLog;
    },
  ) {}

  async write(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
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
    const points = events.map((e) => auditPoint(e, this.options.measurement, this.options.staticTags));
    const report = await this.options.writer.write(points, AUDIT_TSDB_MODULE);
    const failedPoints = new Set(report.failedWhole);
    return new Set(events.filter((_, i) => failedPoints.has(points[i] as Point)).map((e) => e.id));
  }
}

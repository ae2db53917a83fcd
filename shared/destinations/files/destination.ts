/**
 * File destinations of audit events (parquet, table file): each delivered batch becomes one file per
 * event date, written to a local directory or to S3. The queue's batching (maxBatchSize messages or
 * writeFrequency ms, whichever comes first) decides when a file is closed, so no acknowledged event
 * ever waits in a memory buffer.
 */
import { createHash } from 'node:crypto';
import type { CellValue, ColumnType } from '../../audit/datamodel.js';
import type { Log } from '../../logging/log.js';
import type { TagItem } from '../../platform/tags.js';
import { type AuditQueuedEvent, eventsOfKind, type QueuedEvent } from '../../queue/events.js';
import { BaseDestination } from '../port.js';
import { auditFileColumns, auditRow } from './mappers.js';
import type { FileData, FileSink } from './sink.js';

/**
 * Encodes a file's rows, at once or in chunks the sink writes as they are made; may be async, so an
 * encoder can load its library at the first file.
 */
export type TableEncoder = (
  columns: readonly { name: string; type: ColumnType }[],
  rows: readonly Record<string, CellValue>[],
) => FileData | Promise<FileData>;

export interface AuditFileDestinationOptions {
  name: string;
  extension: string;
  encode: TableEncoder;
  sink: FileSink;
  staticTags: readonly TagItem[];
  log: Log;
  /** Error tracking of a failed file (the events are retried). */
  onError?: (err: unknown) => void;
  /**
   * Most rows per file (maxBatchSize). The queue delivers whole messages, and one message can pack
   * more events than this (the audit API's group commit), so a larger batch is written as several
   * files, in order; only one file's rows are built at a time.
   */
  maxRows?: number;
}

/**
 * The name of the file of one batch's events of one date: derived from their ids, so a batch that
 * is delivered again (a crash between the write and its acknowledgement) replaces its file instead
 * of adding a second one with the same rows.
 */
export function batchFileName(date: string, ids: readonly string[], extension: string): string {
  const digest = createHash('sha256')
    .update([...ids].sort().join('\n'))
    .digest('hex')
    .slice(0, 16);
  return `${date}/audit_events_${date.replace(/-/g, '')}_${digest}.${extension}`;
}

/** `audit_events_<date>_<digest of the event ids>.<ext>` under `<date>/`, per event date (UTC). */
export class AuditFileDestination extends BaseDestination {
  readonly name: string;

  constructor(private readonly options: AuditFileDestinationOptions) {
    super(options.log);
    this.name = options.name;
  }

  takes(q: QueuedEvent): boolean {
    return q.kind === 'audit';
  }

  protected async writeEvents(events: readonly QueuedEvent[]): Promise<ReadonlySet<string>> {
    const byDate = new Map<string, AuditQueuedEvent[]>();
    for (const e of eventsOfKind(events, 'audit')) {
      const date = new Date(Date.parse(e.event.timestamp)).toISOString().slice(0, 10);
      // Pushed, not spread into a new array per event: that copied the group once per event
      // (quadratic: ≈ 4 MB of garbage per 1,000-event batch, 1.6 GB at 20,000).
      const group = byDate.get(date);
      if (group) group.push(e);
      else byDate.set(date, [e]);
    }
    const failed = new Set<string>();
    const columns = auditFileColumns(this.options.staticTags);
    const maxRows = this.options.maxRows ?? Number.POSITIVE_INFINITY;
    for (const [date, all] of byDate)
      for (let at = 0; at < all.length; at += maxRows)
        await this.writeFile(columns, date, all.length > maxRows ? all.slice(at, at + maxRows) : all, failed);
    return failed;
  }

  /** One file of one date's events (its name from their ids: a batch delivered again makes the same files); a failure adds them to `failed`. */
  private async writeFile(
    columns: readonly { name: string; type: ColumnType }[],
    date: string,
    group: readonly AuditQueuedEvent[],
    failed: Set<string>,
  ): Promise<void> {
    const path = batchFileName(
      date,
      group.map((e) => e.id),
      this.options.extension,
    );
    try {
      const data = await this.options.encode(
        columns,
        group.map((e) => auditRow(e, this.options.staticTags)),
      );
      const where = await this.options.sink.put(path, data);
      this.options.log.info(
        { destination: this.name, file: where, rows: group.length },
        `wrote ${group.length} audit event(s) to ${where}`,
      );
    } catch (err) {
      for (const e of group) failed.add(e.id);
      this.options.onError?.(err);
      this.options.log.error(
        { destination: this.name, err, rows: group.length, sink: this.options.sink.description },
        `cannot write ${this.name} file ${path}; the events will be retried`,
      );
    }
  }
}

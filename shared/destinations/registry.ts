/**
 * The audit destinations a config asks for, each with its batching: the one place that maps
 * `Svc.auditEvents.destination` to writers, used by local mode and by the writer Lambdas.
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { SvcConfig } from '../config/schema.js';
import { auditDestinationTypes } from '../config/rules.js';
import type { Logger } from '../logging/logger.js';
import { AuditFileDestination, DirectorySink, S3Sink, type FileSink } from './files/destination.js';
import { JsonObjectDataDestination } from './json/destination.js';
import { JsonObjectDataWriter } from './json/writer.js';
import { encodeParquet } from './files/parquet.js';
import { encodeQvd } from './files/tablefile/qvd.js';
import type { PointClock } from './tsdb/line-protocol.js';
import { TsdbWriter } from './tsdb/writer.js';
import type { ErrorTracker } from '../errors/tracker.js';
import { AuditTsdbDestination } from './tsdb/audit.js';
import type { Destination } from './handler.js';

/**
 * Destinations a writer Lambda can serve: tsdb, and parquet when it writes to S3. The table-file and
 * JSON writers write to a local directory, so they run in local mode (or on the edge) only.
 */
export const CLOUD_DESTINATIONS = ['tsdb', 'parquet'] as const;

export interface ConfiguredDestination {
  destination: Destination;
  /** Messages per delivery and the longest wait for a fuller batch (maxBatchSize / writeFrequency). */
  batchSize: number;
  batchWindowMs: number;
  /** The destination names its output after the batch: a batch must come again exactly as it was (local queue). */
  stableBatches?: boolean;
}

/** What the destinations share with the rest of the process. */
export interface DestinationDeps {
  /** The process's point clock (platform-formats.md §0.3). */
  clock: PointClock;
  errors: ErrorTracker;
}

export function auditDestinations(config: SvcConfig, log: Logger, deps: DestinationDeps): ConfiguredDestination[] {
  const settings = config.auditEvents.destination;
  if (!config.auditEvents.enable || !settings.enable) return [];
  const out: ConfiguredDestination[] = [];
  for (const type of auditDestinationTypes(settings.type)) {
    if (type === 'tsdb') {
      const t = settings.tsdb;
      out.push({
        destination: new AuditTsdbDestination({ writer: new TsdbWriter({ config: config.tsdbConfig, log, onError: (type, module, err) => deps.errors.track(type, err, { module }) }), clock: deps.clock, measurement: t.measurementName, staticTags: t.staticTags, log }),
        batchSize: t.maxBatchSize,
        batchWindowMs: t.writeFrequency,
      });
    } else if (type === 'parquet') {
      const p = settings.parquet;
      const sink: FileSink = p.s3.enable ? new S3Sink({ client: new S3Client({ region: p.s3.region, ...(p.s3.endpoint ? { endpoint: p.s3.endpoint, forcePathStyle: true } : {}) }), bucket: p.s3.bucket, prefix: p.s3.prefix }) : new DirectorySink(p.exportDirectory);
      out.push({
        destination: new AuditFileDestination({ name: 'parquet', extension: 'parquet', encode: (columns, rows) => encodeParquet(columns, rows), sink, staticTags: p.staticTags, log, onError: (err) => deps.errors.track('AUDIT_FILE_WRITE', err, { module: 'PARQUET' }) }),
        batchSize: p.maxBatchSize,
        batchWindowMs: p.writeFrequency,
        stableBatches: true,
      });
    } else if (type === 'tablefile') {
      const t = settings.tablefile;
      out.push({
        destination: new AuditFileDestination({ name: 'tablefile', extension: 'qvd', encode: (columns, rows) => encodeQvd({ name: 'audit_events', columns, rows }), sink: new DirectorySink(t.exportDirectory), staticTags: t.staticTags, log, onError: (err) => deps.errors.track('AUDIT_FILE_WRITE', err, { module: 'TABLEFILE' }) }),
        batchSize: t.maxBatchSize,
        batchWindowMs: t.writeFrequency,
        stableBatches: true,
      });
    } else if (type === 'json') {
      if (!settings.json.objectdata.enable) continue;
      out.push({ destination: new JsonObjectDataDestination(new JsonObjectDataWriter(settings.json.objectdata), log), batchSize: 100, batchWindowMs: 0 });
    }
  }
  return out;
}

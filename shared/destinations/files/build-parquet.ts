/** The parquet audit destination (`auditEvents.destination.parquet`): files in a directory or on S3. */
import { sdkProxyOptions } from '../../runtime/proxy.js';
import { auditTypesOn, type ConfiguredDestination, type DestinationContext } from '../build.js';
import type { BaseDestination } from '../port.js';
import { AuditFileDestination, type TableEncoder } from './destination.js';
import type { parquetChunks } from './parquet.js';
import { DirectorySink, type FileSink, S3Sink } from './sink.js';

/**
 * The parquet encoder, loaded at the first file: hyparquet-writer and hyparquet (≈ 50 modules) stay
 * out of a `svc local` that writes no parquet, and out of the parquet writer Lambda's cold start.
 */
let parquetEncoder: Promise<typeof parquetChunks> | undefined;
/** In chunks, one row group at a time: the sink writes each before the next is encoded (parquet.ts). */
const encodeParquetLazily: TableEncoder = async (columns, rows) =>
  (await (parquetEncoder ??= import('./parquet.js').then((m) => m.parquetChunks)))(columns, rows);

export function parquetDestination({ config, logger: log, errors }: DestinationContext): ConfiguredDestination {
  const p = config.auditEvents.destination.parquet;
  const sink: FileSink = p.s3.enable
    ? new S3Sink({
        client: async () =>
          new (await import('@aws-sdk/client-s3')).S3Client({
            region: p.s3.region,
            ...(p.s3.endpoint ? { endpoint: p.s3.endpoint, forcePathStyle: true } : {}),
            // svc local's proxy (shared/runtime/proxy.ts); none in the parquet writer Lambda.
            ...sdkProxyOptions(),
          }),
        bucket: p.s3.bucket,
        prefix: p.s3.prefix,
      })
    : new DirectorySink(p.exportDirectory);
  return {
    destination: new AuditFileDestination({
      name: 'parquet',
      extension: 'parquet',
      encode: encodeParquetLazily,
      sink,
      staticTags: p.staticTags,
      maxRows: p.maxBatchSize,
      log,
      onError: (err) => errors.track('AUDIT_FILE_WRITE', err, { module: 'PARQUET' }),
    }),
    batchSize: p.maxBatchSize,
    // maxBatchSize is rows per file: count the events, not the messages that pack them.
    maxBatchEvents: p.maxBatchSize,
    batchWindowMs: p.writeFrequency,
    stableBatches: true,
  };
}

/** The parquet writer Lambda's destination: audit events, when `auditEvents.destination.type` lists parquet; else null. */
export function parquetWriterDestination(ctx: DestinationContext): BaseDestination | null {
  return auditTypesOn(ctx.config).includes('parquet') ? parquetDestination(ctx).destination : null;
}

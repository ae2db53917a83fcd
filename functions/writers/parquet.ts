/** Lambda entry of the parquet writer: audit events to parquet files on S3 (writer.ts). */
import { parquetWriterDestination } from '../../shared/destinations/files/build-parquet.js';
import { writerHandler } from './writer.js';

export const handler = await writerHandler({
  name: 'parquet',
  build: parquetWriterDestination,
  needs: 'Svc.auditEvents.destination.type listing parquet',
});

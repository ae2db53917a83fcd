/** The table-file (QVD) audit destination (`auditEvents.destination.tablefile`): files in a local directory. */
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { AuditFileDestination } from './destination.js';
import { DirectorySink } from './sink.js';
import { encodeQvd } from './tablefile/qvd.js';

export function tablefileDestination({ config, logger: log, errors }: DestinationContext): ConfiguredDestination {
  const t = config.auditEvents.destination.tablefile;
  return {
    destination: new AuditFileDestination({
      name: 'tablefile',
      extension: 'qvd',
      encode: (columns, rows) => encodeQvd({ name: 'audit_events', columns, rows }),
      sink: new DirectorySink(t.exportDirectory),
      staticTags: t.staticTags,
      maxRows: t.maxBatchSize,
      log,
      onError: (err) => errors.track('AUDIT_FILE_WRITE', err, { module: 'TABLEFILE' }),
    }),
    batchSize: t.maxBatchSize,
    // maxBatchSize is rows per file: count the events, not the messages that pack them.
    maxBatchEvents: t.maxBatchSize,
    batchWindowMs: t.writeFrequency,
    stableBatches: true,
  };
}

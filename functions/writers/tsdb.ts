/** Lambda entry of the tsdb writer: audit events and the platform kinds routed to the tsdb (writer.ts). */
import { tsdbWriterDestination } from '../../shared/destinations/tsdb/build.js';
import { writerHandler } from './writer.js';

export const handler = await writerHandler({
  name: 'tsdb',
  build: tsdbWriterDestination,
  needs: 'Svc.auditEvents.destination.type listing tsdb, or Svc.tsdbConfig with platform data routed to it',
});

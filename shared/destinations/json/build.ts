/** The JSON object-data audit destination (`auditEvents.destination.json.objectdata`), or null when it is off. */
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { JsonObjectDataDestination } from './destination.js';
import { JsonObjectDataWriter } from './writer.js';

/**
 * Events per delivery. The writer writes and fsyncs each event's file on the main thread, and the
 * audit API packs the requests of one event-loop turn into one queue message (10–30 events under
 * load), so 100 messages could be thousands of events: all decoded at once, and the event loop held
 * for as many synced writes. Counted in events, a delivery holds at most 100 (a larger message goes
 * alone, as with the file writers' maxBatchSize). The files are the same either way: one per event.
 */
const JSON_BATCH_EVENTS = 100;

export function jsonDestination({ config, logger }: DestinationContext): ConfiguredDestination | null {
  const json = config.auditEvents.destination.json;
  if (!json.objectdata.enable) return null;
  return {
    destination: new JsonObjectDataDestination(new JsonObjectDataWriter(json.objectdata), logger),
    batchSize: 100,
    maxBatchEvents: JSON_BATCH_EVENTS,
    batchWindowMs: 0,
  };
}

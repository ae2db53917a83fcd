/** The JSON object-data audit destination (`auditEvents.destination.json.objectdata`), or null when it is off. */
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { JsonObjectDataDestination } from './destination.js';
import { JsonObjectDataWriter } from './writer.js';

export function jsonDestination({ config, logger }: DestinationContext): ConfiguredDestination | null {
  const json = config.auditEvents.destination.json;
  if (!json.objectdata.enable) return null;
  return { destination: new JsonObjectDataDestination(new JsonObjectDataWriter(json.objectdata), logger), batchSize: 100, batchWindowMs: 0 };
}

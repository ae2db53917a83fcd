/**
 * What every destination builder shares (tsdb/build.ts, files/build-parquet.ts, monsaas/build.ts, …):
 * the context it builds from, what it answers, and the audit destination types that are on. Each
 * destination has its own builder module, importing only its own client, so a writer Lambda's
 * bundle holds only the destination it serves; registry.ts composes them for local mode and the
 * edge agent.
 */
import { auditDestinationTypes } from '../config/rules.js';
import type { SvcConfig } from '../config/schema.js';
import type { AppContext } from '../runtime/context.js';
import type { BaseDestination } from './port.js';

/** What the builders build destinations from: the process's context (the Lambdas make one too). */
export type DestinationContext = Pick<AppContext, 'config' | 'logger' | 'errors' | 'clock'>;

export interface ConfiguredDestination {
  /** A BaseDestination, so what it failed to write can be read (the metrics endpoint). */
  destination: BaseDestination;
  /** Messages per delivery and the longest wait for a fuller batch (maxBatchSize / writeFrequency). */
  batchSize: number;
  batchWindowMs: number;
  /** The destination names its output after the batch: a batch must come again exactly as it was (local queue). */
  stableBatches?: boolean;
  /** Deliveries at a time on the local queue (ConsumerGroup.maxInFlight); default 1. */
  maxInFlight?: number;
  /** Most events per delivery on the local queue (ConsumerGroup.maxBatchEvents): maxBatchSize of a writer that counts rows; the JSON writer's 100. */
  maxBatchEvents?: number;
}

/** The audit destination types that are on (`Svc.auditEvents.enable`, `.destination.enable`, `.type`). */
export function auditTypesOn(config: SvcConfig): string[] {
  const settings = config.auditEvents.destination;
  return config.auditEvents.enable && settings.enable ? auditDestinationTypes(settings.type) : [];
}

/**
 * Events the edge packs in one queue message. The MQTT and monsaas destinations send the events of
 * a delivery concurrently, so their batch sizes (messages per delivery, no waiting) bound what is in
 * flight: 100 messages bound MQTT to 2,000 events (a UDP event is one to five publishes, a health
 * sample 22: the pollers make at most one per server and interval), 1 message bounds the monitoring
 * SaaS to 20 POSTs per account.
 */
export const EDGE_EVENTS_PER_MESSAGE = 20;

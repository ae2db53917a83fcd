/**
 * The one place that maps the config to destinations, each with its batching, used by local mode,
 * the edge agent and the writer Lambdas:
 * - `auditDestinations`: `Svc.auditEvents.destination` (tsdb, parquet, table file, JSON files), and
 *   the embedded store whatever that says (when the process has one: `store/build.ts`);
 * - `platformDestinations`: the platform's UDP events, polled data (health and session samples) and
 *   the edge's own points, by the gating of platform-formats.md §0.6 (`platformOutputs`), which the
 *   sources use too (`wantsUserEvent`, `wantsLogEvent`, `anyOutput(outputs.health)`) so they do not
 *   enqueue an event no destination takes. A destination is created when any kind goes to it.
 * - `cloudWriterDestination`: the destination a writer Lambda serves, taking the audit and the
 *   platform kinds routed to it (the tsdb: one destination for both).
 *
 * Each destination is built by its own module (`tsdb/build.ts`, `files/build-parquet.ts`,
 * `files/build-tablefile.ts`, `json/build.ts`, `mqtt/build.ts`, `monsaas/build.ts`): a writer
 * Lambda's entry imports only its destination's builder, so its bundle holds no other destination's
 * code; this module composes them for local mode and the edge agent.
 *
 * Gating (§0.6): a feature writes to a destination only when the destination's master switch and the
 * feature's own flag are both on; user events also need `userEvents.enable`, log events at least one
 * `logEvents.source.*.enable`. Beyond the spec's switches (Svc choice), a destination that could not
 * send anything is not created: MQTT needs at least one enabled topic, monsaas at least one
 * destination account (and for log events one source that is both handled and sendable at some
 * level).
 *
 * Batching: tsdb chunks of `tsdbConfig.maxBatchSize`, sent at the latest 1 s after the first event
 * (§0.6: "a chunk is sent when full or at the latest 1 s after its first point"); MQTT and monsaas
 * send at once (batches of 100 and 10 events only bound the concurrency). Audit destinations batch by
 * their own `maxBatchSize` / `writeFrequency`.
 */

import { anyOutput, type PlatformOutputs, platformOutputs } from '../config/outputs.js';
import type { SvcConfig } from '../config/schema.js';
import type { PlatformLogEvent } from '../platform/events.js';
import type { Component } from '../runtime/lifecycle.js';
import { auditTypesOn, type ConfiguredDestination, type DestinationContext } from './build.js';
import { parquetDestination, parquetWriterDestination } from './files/build-parquet.js';
import { tablefileDestination } from './files/build-tablefile.js';
import { jsonDestination } from './json/build.js';
import { monSaasDestination, monSaasWriterDestination } from './monsaas/build.js';
import { logMonSaasWanted } from './monsaas/mappers.js';
import { mqttDestination } from './mqtt/build.js';
import type { MqttWriter } from './mqtt/client.js';
import type { BaseDestination } from './port.js';
import type { StoreComponent } from './store/build.js';
import { auditTsdbDestination, platformTsdbDestination, tsdbWriterDestination } from './tsdb/build.js';

export type { ConfiguredDestination, DestinationContext } from './build.js';
export { EDGE_EVENTS_PER_MESSAGE } from './build.js';
export { MONSAAS_BATCH } from './monsaas/build.js';
export { MQTT_BATCH } from './mqtt/build.js';
export { TSDB_BATCH_WINDOW_MS } from './tsdb/build.js';

/**
 * The audit destinations of `Svc.auditEvents.destination`, in the order the config lists them, then
 * the embedded store's (`store`: the process's one store writer, or null), which keeps every audit
 * event whatever the destination settings say.
 */
export function auditDestinations(
  ctx: DestinationContext,
  store: StoreComponent | null = null,
): ConfiguredDestination[] {
  const out: ConfiguredDestination[] = [];
  for (const type of auditTypesOn(ctx.config)) {
    if (type === 'tsdb') out.push(auditTsdbDestination(ctx));
    else if (type === 'parquet') out.push(parquetDestination(ctx));
    else if (type === 'tablefile') out.push(tablefileDestination(ctx));
    else if (type === 'json') {
      const json = jsonDestination(ctx);
      if (json) out.push(json);
    }
  }
  if (store) out.push(store.destination());
  return out;
}

/** Whether a user event should be enqueued at all: some destination takes user events. */
export function wantsUserEvent(outputs: PlatformOutputs): boolean {
  return anyOutput(outputs.userEvents);
}

/**
 * Whether a log event should be enqueued at all: the store, tsdb or MQTT take log events, or monsaas
 * takes this one (its source and level, §8.3).
 */
export function wantsLogEvent(
  config: SvcConfig,
  outputs: PlatformOutputs,
  event: Pick<PlatformLogEvent, 'source' | 'level'>,
): boolean {
  const o = outputs.logEvents;
  return o.store || o.tsdb || o.mqtt || (o.monsaas && logMonSaasWanted(event, config.logEvents.sendToMonSaas.source));
}

export interface PlatformDestinations {
  destinations: ConfiguredDestination[];
  /** Lifecycle components the destinations need (the MQTT client): start before, stop after the queue. */
  components: Component[];
}

/**
 * The platform destinations of `platformOutputs(config)`, in the order tsdb, mqtt, monsaas, each
 * built with its own writer, then the embedded store (sharing `store`'s writer) when it takes a kind.
 * The MQTT destination publishes through `mqtt`, the process's client (boot.ts; shared with the
 * alerts), or through a client of its own (in `components`) when none is given.
 */
export function platformDestinations(
  ctx: DestinationContext,
  store: StoreComponent | null = null,
  mqtt: MqttWriter | null = null,
): PlatformDestinations {
  const outputs = platformOutputs(ctx.config);
  const destinations: ConfiguredDestination[] = [];
  const components: Component[] = [];
  const tsdb = platformTsdbDestination(ctx, outputs);
  if (tsdb) destinations.push(tsdb);
  const mqttOut = mqttDestination(ctx, outputs, mqtt);
  if (mqttOut) {
    destinations.push(mqttOut.configured);
    if (mqttOut.component) components.push(mqttOut.component);
  }
  const monsaas = monSaasDestination(ctx, outputs);
  if (monsaas) destinations.push(monsaas);
  const kinds = [outputs.userEvents, outputs.logEvents, outputs.health, outputs.sessions];
  if (store && kinds.some((k) => k.store)) destinations.push(store.destination());
  return { destinations, components };
}

/**
 * The destination a writer Lambda serves (`name`, one of CLOUD_DESTINATIONS in functions/contract.ts),
 * taking every kind the config routes to it, built by the same builders as local mode: tsdb takes
 * audit events and the platform kinds in one destination (tsdb/build.ts), parquet audit events,
 * monsaas the platform kinds routed to it. null when the config routes nothing to `name`, or `name`
 * is not a cloud destination. (The writer entries call their builder directly, so each bundle holds
 * one destination.)
 */
export function cloudWriterDestination(ctx: DestinationContext, name: string): BaseDestination | null {
  switch (name) {
    case 'tsdb':
      return tsdbWriterDestination(ctx);
    case 'parquet':
      return parquetWriterDestination(ctx);
    case 'monsaas':
      return monSaasWriterDestination(ctx);
    default:
      return null;
  }
}

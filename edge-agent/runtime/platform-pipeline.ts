/**
 * The edge's way to its destinations for everything its sources collect (UDP events, poll results,
 * its own points): one durable local queue under `<localQueue.directory>/platform`, with one
 * consumer group per platform destination, each running the same writer handler a writer Lambda
 * runs. Sources hand their events to `queue`; `outputs` says which destination takes which kind
 * (§0.6), so a source does not enqueue what no destination takes.
 *
 * Start order: destination clients (MQTT) → queue; the lifecycle stops them in reverse, so the queue
 * delivers what is pending (or keeps it on disk) before the clients disconnect.
 */
import { join } from 'node:path';
import { logListenerEnabled } from '../../shared/config/outputs.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';
import { errorPointsWanted, platformOutputs, uptimePointsWanted, type PlatformOutputs } from '../../shared/config/outputs.js';
import type { BaseDestination } from '../../shared/destinations/port.js';
import { platformDestinations } from '../../shared/destinations/registry.js';
import { LocalEventQueue } from '../../shared/queue/local.js';
import type { AppContext } from '../../shared/runtime/context.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { anyPollerOn } from '../sources/platform/startup.js';

/** The directory of the platform data's queue, below the audit queue's. */
export function platformQueueDirectory(queueDirectory: string): string {
  return join(queueDirectory, 'platform');
}

/** Whether any platform source is switched on: a UDP listener or a poller (only then is there a pipeline). */
export function platformSourcesOn(config: SvcConfig): boolean {
  return config.userEvents.enable || logListenerEnabled(config) || anyPollerOn(config);
}

/**
 * Whether the process has a pipeline: a platform source is on, or Svc's own points go to the tsdb
 * (the uptime monitor's §6.9, the tracked errors' §6.10), which reach it through this pipeline also
 * in `svc local` without a platform source.
 */
export function platformPipelineWanted(config: SvcConfig): boolean {
  return platformSourcesOn(config) || uptimePointsWanted(config) || errorPointsWanted(config);
}

export interface PlatformPipeline {
  /** null when no destination takes platform data: sources count what they receive and keep nothing. */
  queue: LocalEventQueue | null;
  outputs: PlatformOutputs;
  /** The queue's destinations (one consumer group each), for the metrics endpoint. */
  destinations: BaseDestination[];
  /** In start order: the destinations' clients, then the queue. */
  components: Component[];
}

export function platformPipeline(ctx: AppContext): PlatformPipeline {
  const { config, logger: log } = ctx;
  const outputs = platformOutputs(config);
  const { destinations, components: clients } = platformDestinations(ctx);
  const queue =
    destinations.length === 0
      ? null
      : new LocalEventQueue({
          directory: platformQueueDirectory(config.localQueue.directory),
          capacity: config.localQueue.udpEventCapacity,
          maxReceiveCount: config.localQueue.maxReceiveCount,
          groups: destinations.map(({ destination, batchSize, batchWindowMs }) => ({
            name: destination.name,
            handler: makeWriterHandler({ destination, claimCheck: null, log }),
            batchSize,
            batchWindowMs,
          })),
          log,
        });
  return { queue, outputs, destinations: destinations.map((d) => d.destination), components: [...clients, ...(queue ? [queue] : [])] };
}

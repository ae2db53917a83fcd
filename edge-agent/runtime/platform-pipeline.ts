/**
 * The edge's way to its destinations for everything its sources collect (UDP events, poll results,
 * its own points): one durable local queue under `<localQueue.directory>/platform`, with one
 * consumer group per platform destination, each running the same writer handler a writer Lambda
 * runs. Sources hand their events to `queue`; `outputs` says which destination takes which kind
 * (§0.6), so a source does not enqueue what no destination takes.
 *
 * In `svc edge` with `Svc.cloud.enable`, a destination placed in the cloud (shared/config/placement.ts)
 * is not written here: its consumer group is a forwarder to its SQS queue (forwarding.ts). That
 * module (and the AWS SDK's SQS, S3 and credential clients it imports, ≈ 13 MB of RSS) is imported
 * only then: `svc local` and an edge without a cloud destination never load it.
 *
 * Start order: destination clients (MQTT) → queue; the lifecycle stops them in reverse, so the queue
 * delivers what is pending (or keeps it on disk) before the clients disconnect.
 */
import { join } from 'node:path';
import {
  errorPointsWanted,
  logListenerEnabled,
  type PlatformOutputs,
  platformOutputs,
  uptimePointsWanted,
} from '../../shared/config/outputs.js';
import { platformPlacement } from '../../shared/config/placement.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';
import type { MqttWriter } from '../../shared/destinations/mqtt/client.js';
import type { BaseDestination } from '../../shared/destinations/port.js';
import { platformDestinations } from '../../shared/destinations/registry.js';
import type { StoreComponent } from '../../shared/destinations/store/build.js';
import type { QueuedEvent } from '../../shared/queue/events.js';
import type { Forwarder } from '../../shared/queue/forwarder.js';
import { LocalEventQueue } from '../../shared/queue/local/index.js';
import type { AppContext } from '../../shared/runtime/context.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { anyPollerOn } from '../sources/platform/startup.js';
import type { CloudClients } from './forwarding.js';

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
  /** The queue's consumer groups, for the metrics endpoint: a destination, or the forwarder of one placed in the cloud. */
  destinations: (BaseDestination | Forwarder)[];
  /** In start order: the destinations' clients, then the queue. */
  components: Component[];
}

export interface PipelineOptions {
  /** Forward the destinations placed in the cloud (`svc edge`); `svc local` writes every destination itself. */
  forward: boolean;
  /** The SQS and S3 clients (tests give their own); default those of `Svc.cloud`. */
  clients?: () => CloudClients;
  /** The process's embedded store (boot.ts), whose writer the pipeline's store destination shares; null or absent = none. */
  store?: StoreComponent | null;
  /** The process's MQTT client (boot.ts), which the MQTT destination shares with the alerts' mqtt channels; null or absent = the destination makes its own when a kind goes to MQTT. */
  mqtt?: MqttWriter | null;
}

/** Whether the pipeline forwards some destination to the cloud (only then is forwarding.ts loaded). */
export function forwardsToCloud(config: SvcConfig, options: PipelineOptions): boolean {
  return options.forward && config.cloud.enable && platformPlacement(config).some((p) => p.place === 'cloud');
}

export async function platformPipeline(
  ctx: AppContext,
  options: PipelineOptions = { forward: false },
): Promise<PlatformPipeline> {
  const { config, logger: log } = ctx;
  const outputs = platformOutputs(config);
  const { destinations, components: clients } = platformDestinations(ctx, options.store ?? null, options.mqtt ?? null);
  const takes = new Map(
    destinations.map(({ destination }) => [destination.name, (e: QueuedEvent) => destination.takes(e)]),
  );
  let forwarded = new Map<string, Forwarder>();
  if (forwardsToCloud(config, options)) {
    const { cloudClients, forwarders } = await import('./forwarding.js');
    forwarded = forwarders(config, log, takes, options.clients ?? (() => cloudClients(config.cloud)));
  }
  const groups = destinations.map(({ destination, batchSize, batchWindowMs, maxInFlight }) => {
    const forwarder = forwarded.get(destination.name);
    return forwarder
      ? { consumer: forwarder, group: { name: destination.name, handler: forwarder.handler, ...FORWARD_BATCH } }
      : {
          consumer: destination,
          group: {
            name: destination.name,
            handler: makeWriterHandler({ destination, claimCheck: null, log }),
            batchSize,
            batchWindowMs,
            maxInFlight: maxInFlight ?? 1,
          },
        };
  });
  const queue =
    groups.length === 0
      ? null
      : new LocalEventQueue({
          directory: platformQueueDirectory(config.localQueue.directory),
          capacity: config.localQueue.udpEventCapacity,
          maxReceiveCount: config.localQueue.maxReceiveCount,
          groups: groups.map((g) => g.group),
          log,
        });
  // The MQTT client is not needed by a forwarded destination, but MQTT always runs on the edge.
  return {
    queue,
    outputs,
    destinations: groups.map((g) => g.consumer),
    components: [...clients, ...(queue ? [queue] : [])],
  };
}

/**
 * Local messages per forwarding delivery and its batching window: up to 50 messages (1,000 UDP
 * events of 20 per message) are sent together, so they pack into few SQS messages and requests (SQS
 * is billed per request); waiting up to 0.5 s for a fuller delivery costs less latency than the
 * tsdb's own 1 s chunking.
 */
export const FORWARD_BATCH = { batchSize: 50, batchWindowMs: 500 } as const;

/**
 * Which writers the stack deploys, from the validated config: one queue and writer per destination
 * that something is routed to and that can run on Lambda —
 *
 * - tsdb: audit events go to it (`auditEvents.destination.type` lists tsdb) or any platform data does
 *   (§0.6 gating: `platformDestinationNames`); one queue and writer for both;
 * - parquet: audit events go to parquet on S3;
 * - monsaas: platform data goes to the monitoring SaaS.
 *
 * The audit API sends to the queues of the destinations that take audit events; the edge agent
 * forwards platform data to the others' (the EdgeConfig output names them). Every enabled destination
 * that cannot run in the cloud gets a synth note with the reason (`edgeOnlyDestinations`).
 */
import { Duration } from 'aws-cdk-lib';
import { CLOUD_DESTINATIONS, type CloudDestinationName } from '../functions/contract.js';
import { edgeOnlyDestinations, platformDestinationNames } from '../shared/config/placement.js';
import { auditDestinationTypes } from '../shared/config/rules.js';
import type { SvcConfig } from '../shared/config/schema.js';
import { type DestinationOptions, MAX_BATCH_SIZE, MAX_BATCHING_WINDOW } from './constructs/event-pipeline.js';

export interface CloudDestination extends Required<DestinationOptions> {
  name: CloudDestinationName;
  /** The audit API sends audit events to this destination's queue. */
  audit: boolean;
  /** The edge agent forwards platform data (user and log events, samples, points) to its queue. */
  platform: boolean;
  /**
   * From `auditEvents.queue.rateLimit` (undefined while it is off, and for writers that take no
   * audit events): the writer's event source maxConcurrency and its reserved concurrency.
   */
  concurrency: number | undefined;
}

/** Limits of an SQS event source's maximum concurrency. */
export const MIN_MAX_CONCURRENCY = 2;
export const MAX_MAX_CONCURRENCY = 1000;

/**
 * Batching of the tsdb writer for platform data: §0.6 sends a chunk "when full or at the latest 1 s
 * after its first point", so the event source waits at most 1 s for a batch of
 * `tsdbConfig.maxBatchSize` messages.
 */
export const PLATFORM_TSDB_WINDOW = Duration.seconds(1);

/**
 * Batching of the monsaas writer (Svc choice: the config has no batching keys for it). Local mode
 * sends monsaas events at once, so the event source does not wait either (no batching window), and
 * takes at most 10 messages per invocation, the most SQS allows without a window. Each message the
 * edge forwards is already packed with many events, so 10 is plenty.
 */
export const MONSAAS_BATCH_SIZE = 10;
export const MONSAAS_WINDOW = Duration.seconds(0);

/**
 * The concurrency of a writer that holds it to `maxPerMinute` events: with c writers each taking
 * one batch of `batchSize` per batching window, the queue drains at c × batchSize / window events
 * per second, so c = ⌈(maxPerMinute / 60) × windowSeconds / batchSize⌉, within the 2 to 1000 an
 * SQS event source allows. docs/deployment.md has the arithmetic and what it does not promise.
 */
export function writerConcurrency(maxPerMinute: number, batchSize: number, windowSeconds: number): number {
  const needed = Math.ceil(((maxPerMinute / 60) * windowSeconds) / batchSize);
  return Math.min(MAX_MAX_CONCURRENCY, Math.max(MIN_MAX_CONCURRENCY, needed));
}

/** The kinds of synth note, each its own warning id (`svc:<kind>`), so one can be acknowledged alone. */
export type DestinationNoteKind = 'edge-only-destination' | 'batching' | 'rate-limit';

export interface DestinationNote {
  kind: DestinationNoteKind;
  message: string;
}

export interface DestinationPlan {
  deployed: CloudDestination[];
  /** Why a configured destination is not deployed, or deployed with other batching; for synth warnings. */
  notes: DestinationNote[];
}

/** The audit destination types the config turns on (none while the audit API or its destination is off). */
function auditTypesOn(config: SvcConfig): string[] {
  const audit = config.auditEvents;
  return audit.enable && audit.destination.enable ? auditDestinationTypes(audit.destination.type) : [];
}

/** The destinations of `config` that the stack deploys, and notes on the others. */
export function planDestinations(config: SvcConfig): DestinationPlan {
  const audit = config.auditEvents;
  const auditTypes = auditTypesOn(config);
  const platformNames: readonly string[] = platformDestinationNames(config);
  const plan: DestinationPlan = { deployed: [], notes: [] };
  const edgeOnly = edgeOnlyDestinations(config, auditTypes);
  for (const { name, reason } of edgeOnly) {
    plan.notes.push({
      kind: 'edge-only-destination',
      message: `destination ${name} runs on the edge only: ${reason}; the stack deploys no writer for it`,
    });
  }
  const blocked = new Set(edgeOnly.map((d) => d.name));

  for (const name of CLOUD_DESTINATIONS) {
    if (blocked.has(name)) continue;
    const takesAudit = auditTypes.includes(name);
    const takesPlatform = platformNames.includes(name);
    if (!takesAudit && !takesPlatform) continue;
    const batch = batchingOf(config, name, takesAudit, takesPlatform, plan.notes);
    // The rate limit is the audit queue's (auditEvents.queue): it bounds the writers that take audit events.
    const concurrency = takesAudit ? rateLimited(name, audit.queue.rateLimit, batch, plan.notes) : undefined;
    if (concurrency !== undefined && takesPlatform) {
      plan.notes.push({
        kind: 'rate-limit',
        message: `destination ${name}: Svc.auditEvents.queue.rateLimit also bounds the platform data the edge forwards to it (one queue and writer for both)`,
      });
    }
    plan.deployed.push({ name, audit: takesAudit, platform: takesPlatform, ...batch, concurrency });
  }
  return plan;
}

/**
 * Batching of one writer. Audit destinations batch by their own `maxBatchSize` / `writeFrequency`;
 * platform data by `tsdbConfig.maxBatchSize` within 1 s (tsdb) or at once (monsaas). A tsdb queue
 * carrying both takes the tighter of each, so neither kind waits longer than its settings say.
 */
function batchingOf(
  config: SvcConfig,
  name: CloudDestinationName,
  takesAudit: boolean,
  takesPlatform: boolean,
  notes: DestinationNote[],
): Required<DestinationOptions> {
  const destination = config.auditEvents.destination;
  if (name === 'monsaas') return { batchSize: MONSAAS_BATCH_SIZE, maxBatchingWindow: MONSAAS_WINDOW };
  if (name === 'parquet')
    return batching(name, destination.parquet.maxBatchSize, destination.parquet.writeFrequency, notes);
  const platform = {
    maxBatchSize: config.tsdbConfig.maxBatchSize,
    writeFrequency: PLATFORM_TSDB_WINDOW.toMilliseconds(),
  };
  const audit = destination.tsdb;
  const size =
    takesAudit && takesPlatform
      ? Math.min(audit.maxBatchSize, platform.maxBatchSize)
      : takesAudit
        ? audit.maxBatchSize
        : platform.maxBatchSize;
  const frequency =
    takesAudit && takesPlatform
      ? Math.min(audit.writeFrequency, platform.writeFrequency)
      : takesAudit
        ? audit.writeFrequency
        : platform.writeFrequency;
  return batching(name, size, frequency, notes);
}

/**
 * The limit is per writer, as local mode's throttle is per consumer group: every destination takes
 * every event, so each of them is held to maxPerMinute.
 */
function rateLimited(
  name: string,
  rateLimit: { enable: boolean; maxPerMinute: number },
  batch: Required<DestinationOptions>,
  notes: DestinationNote[],
): number | undefined {
  if (!rateLimit.enable) return undefined;
  const window = batch.maxBatchingWindow.toSeconds();
  const concurrency = writerConcurrency(rateLimit.maxPerMinute, batch.batchSize, window);
  const exact = ((rateLimit.maxPerMinute / 60) * window) / batch.batchSize;
  if (exact > MAX_MAX_CONCURRENCY)
    notes.push({
      kind: 'rate-limit',
      message: `destination ${name}: queue.rateLimit.maxPerMinute ${rateLimit.maxPerMinute} needs ${Math.ceil(exact)} concurrent writers; an SQS event source allows ${MAX_MAX_CONCURRENCY}`,
    });
  return concurrency;
}

function batching(
  name: string,
  maxBatchSize: number,
  writeFrequencyMs: number,
  notes: DestinationNote[],
): Required<DestinationOptions> {
  const batchSize = Math.min(maxBatchSize, MAX_BATCH_SIZE);
  if (batchSize < maxBatchSize)
    notes.push({
      kind: 'batching',
      message: `destination ${name}: maxBatchSize ${maxBatchSize} exceeds the ${MAX_BATCH_SIZE} messages an SQS event source delivers at once; batches hold ${batchSize}`,
    });
  const maxSeconds = MAX_BATCHING_WINDOW.toSeconds();
  const seconds = Math.min(Math.max(1, Math.ceil(writeFrequencyMs / 1000)), maxSeconds);
  if (writeFrequencyMs > maxSeconds * 1000)
    notes.push({
      kind: 'batching',
      message: `destination ${name}: writeFrequency ${writeFrequencyMs} ms exceeds the ${maxSeconds} s batching window of an SQS event source; batches wait at most ${maxSeconds} s`,
    });
  return { batchSize, maxBatchingWindow: Duration.seconds(seconds) };
}

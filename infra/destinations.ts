/**
 * Which destinations the stack deploys, from the validated config: one queue and writer per
 * enabled destination that can run on Lambda, batched as the config's maxBatchSize / writeFrequency
 * say (within what an SQS event source allows).
 */
import { Duration } from 'aws-cdk-lib';
import { CLOUD_DESTINATIONS, type CloudDestinationName } from '../functions/contract.js';
import { auditDestinationTypes } from '../shared/config/rules.js';
import type { SvcConfig } from '../shared/config/schema.js';
import { MAX_BATCH_SIZE, MAX_BATCHING_WINDOW, type DestinationOptions } from './constructs/event-pipeline.js';

export interface CloudDestination extends Required<DestinationOptions> {
  name: CloudDestinationName;
  /**
   * From `auditEvents.queue.rateLimit` (undefined while it is off): the writer's event source
   * maxConcurrency and its reserved concurrency (see writerConcurrency).
   */
  concurrency: number | undefined;
}

/** Limits of an SQS event source's maximum concurrency. */
export const MIN_MAX_CONCURRENCY = 2;
export const MAX_MAX_CONCURRENCY = 1000;

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

export interface DestinationPlan {
  deployed: CloudDestination[];
  /** Why a configured destination is not deployed, or deployed with other batching; for synth warnings. */
  notes: string[];
}

/** The destinations of `config` that the stack deploys, and notes on the others. */
export function planDestinations(config: SvcConfig): DestinationPlan {
  const audit = config.auditEvents;
  const plan: DestinationPlan = { deployed: [], notes: [] };
  if (!audit.enable || !audit.destination.enable) return plan;
  for (const name of auditDestinationTypes(audit.destination.type)) {
    if (!isCloudDestination(name)) {
      plan.notes.push(`destination ${name} writes to a local directory, so it runs in local mode or on the edge only; the stack does not deploy it`);
      continue;
    }
    if (name === 'parquet' && !audit.destination.parquet.s3.enable) {
      plan.notes.push('destination parquet writes to a local directory (Svc.auditEvents.destination.parquet.s3.enable is false); the stack does not deploy it');
      continue;
    }
    const settings = name === 'tsdb' ? audit.destination.tsdb : audit.destination.parquet;
    const batch = batching(name, settings.maxBatchSize, settings.writeFrequency, plan.notes);
    plan.deployed.push({ name, ...batch, concurrency: rateLimited(name, audit.queue.rateLimit, batch, plan.notes) });
  }
  return plan;
}

/**
 * The limit is per writer, as local mode's throttle is per consumer group: every destination takes
 * every event, so each of them is held to maxPerMinute.
 */
function rateLimited(name: string, rateLimit: { enable: boolean; maxPerMinute: number }, batch: Required<DestinationOptions>, notes: string[]): number | undefined {
  if (!rateLimit.enable) return undefined;
  const window = batch.maxBatchingWindow.toSeconds();
  const concurrency = writerConcurrency(rateLimit.maxPerMinute, batch.batchSize, window);
  const exact = ((rateLimit.maxPerMinute / 60) * window) / batch.batchSize;
  if (exact > MAX_MAX_CONCURRENCY) notes.push(`destination ${name}: queue.rateLimit.maxPerMinute ${rateLimit.maxPerMinute} needs ${Math.ceil(exact)} concurrent writers; an SQS event source allows ${MAX_MAX_CONCURRENCY}`);
  return concurrency;
}

function batching(name: string, maxBatchSize: number, writeFrequencyMs: number, notes: string[]): Required<DestinationOptions> {
  const batchSize = Math.min(maxBatchSize, MAX_BATCH_SIZE);
  if (batchSize < maxBatchSize) notes.push(`destination ${name}: maxBatchSize ${maxBatchSize} exceeds the ${MAX_BATCH_SIZE} messages an SQS event source delivers at once; batches hold ${batchSize}`);
  const maxSeconds = MAX_BATCHING_WINDOW.toSeconds();
  const seconds = Math.min(Math.max(1, Math.ceil(writeFrequencyMs / 1000)), maxSeconds);
  if (writeFrequencyMs > maxSeconds * 1000) notes.push(`destination ${name}: writeFrequency ${writeFrequencyMs} ms exceeds the ${maxSeconds} s batching window of an SQS event source; batches wait at most ${maxSeconds} s`);
  return { batchSize, maxBatchingWindow: Duration.seconds(seconds) };
}

function isCloudDestination(name: string): name is CloudDestinationName {
  return (CLOUD_DESTINATIONS as readonly string[]).includes(name);
}

/**
 * The tsdb destinations: the audit one (`auditEvents.destination.tsdb`), the platform one (the
 * kinds `platformOutputs` routes to the tsdb, §0.6) and the writer Lambda's, which takes both.
 * Each has its own TsdbWriter, its failures tracked with the producing module (§6.0 step 5) and the
 * tsdb's host.
 */

import { type PlatformOutputs, platformOutputs } from '../../config/outputs.js';
import type { SvcConfig } from '../../config/schema.js';
import { auditTypesOn, type ConfiguredDestination, type DestinationContext } from '../build.js';
import { TsdbDestination, type TsdbDestinationOptions } from './destination.js';
import { TsdbWriter } from './writer.js';

/** §0.6: a tsdb chunk is sent at the latest 1 s after its first point. */
export const TSDB_BATCH_WINDOW_MS = 1000;

function tsdbWriter({ config, logger, errors }: DestinationContext): TsdbWriter {
  return new TsdbWriter({
    config: config.tsdbConfig,
    log: logger,
    onError: (type, module, err) => errors.track(type, err, { module, destinationHost: config.tsdbConfig.host }),
  });
}

/** The audit part of a TsdbDestination (`auditEvents.destination.tsdb`). */
function auditTsdbKinds({ config, clock }: DestinationContext): TsdbDestinationOptions['audit'] {
  const t = config.auditEvents.destination.tsdb;
  return { measurement: t.measurementName, staticTags: t.staticTags, clock };
}

/** The platform kinds a TsdbDestination takes (§0.6, `platformOutputs`). */
type PlatformTsdbKinds = Pick<TsdbDestinationOptions, 'userEvents' | 'logEvents' | 'points' | 'health' | 'sessions'>;
const NO_PLATFORM_TSDB_KINDS: PlatformTsdbKinds = {
  userEvents: null,
  logEvents: null,
  points: false,
  health: null,
  sessions: false,
};

function platformTsdbKinds(config: SvcConfig, outputs: PlatformOutputs): PlatformTsdbKinds {
  return {
    userEvents: outputs.userEvents.tsdb ? { tags: config.userEvents.tags } : null,
    logEvents: outputs.logEvents.tsdb ? { tags: config.logEvents.tags } : null,
    points: outputs.points,
    health: outputs.health.tsdb ? { includeFields: config.tsdbConfig.includeFields } : null,
    sessions: outputs.sessions.tsdb,
  };
}

function takesAnyPlatformKind(kinds: PlatformTsdbKinds): boolean {
  return (
    kinds.userEvents !== null ||
    kinds.logEvents !== null ||
    kinds.points ||
    (kinds.health ?? null) !== null ||
    kinds.sessions === true
  );
}

/** One TsdbDestination, with its own writer, for the audit and platform kinds given. */
function tsdbDestination(
  ctx: DestinationContext,
  audit: TsdbDestinationOptions['audit'],
  platform: PlatformTsdbKinds,
): TsdbDestination {
  return new TsdbDestination({ writer: tsdbWriter(ctx), audit, ...platform, log: ctx.logger });
}

/**
 * Two deliveries at a time on a local queue: the next batch's points and line protocol are built
 * while the tsdb writes the previous one (one batch at a time, the process and the tsdb took turns
 * and each idled half the time: bench/pipeline.mjs). Not more: §6.0's one-request-per-chunk rules
 * and the retry ladder stay per batch, and the tsdb is not asked for more than two writes at once.
 */
export const TSDB_MAX_IN_FLIGHT = 2;

/** The audit queue's tsdb destination (batched by `auditEvents.destination.tsdb`). */
export function auditTsdbDestination(ctx: DestinationContext): ConfiguredDestination {
  const t = ctx.config.auditEvents.destination.tsdb;
  return {
    destination: tsdbDestination(ctx, auditTsdbKinds(ctx), NO_PLATFORM_TSDB_KINDS),
    batchSize: t.maxBatchSize,
    batchWindowMs: t.writeFrequency,
    maxInFlight: TSDB_MAX_IN_FLIGHT,
  };
}

/** The platform queue's tsdb destination, or null when no platform kind goes to the tsdb. */
export function platformTsdbDestination(
  ctx: DestinationContext,
  outputs: PlatformOutputs,
): ConfiguredDestination | null {
  const kinds = platformTsdbKinds(ctx.config, outputs);
  if (!takesAnyPlatformKind(kinds)) return null;
  return {
    destination: tsdbDestination(ctx, null, kinds),
    batchSize: ctx.config.tsdbConfig.maxBatchSize,
    batchWindowMs: TSDB_BATCH_WINDOW_MS,
    maxInFlight: TSDB_MAX_IN_FLIGHT,
  };
}

/**
 * The tsdb writer Lambda's destination: audit events (when `auditEvents.destination.type` lists
 * tsdb) and the platform kinds of `platformOutputs` in one TsdbDestination. Where local mode has two
 * (the audit queue's and the platform queue's), the cloud has one queue per destination, so one
 * destination. null when the config routes nothing to the tsdb.
 */
export function tsdbWriterDestination(ctx: DestinationContext): TsdbDestination | null {
  const auditOn = auditTypesOn(ctx.config).includes('tsdb');
  const platform = platformTsdbKinds(ctx.config, platformOutputs(ctx.config));
  return auditOn || takesAnyPlatformKind(platform)
    ? tsdbDestination(ctx, auditOn ? auditTsdbKinds(ctx) : null, platform)
    : null;
}

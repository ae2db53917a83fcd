/**
 * The one place that maps the config to destinations, each with its batching, used by local mode,
 * the edge agent and the writer Lambdas:
 * - `auditDestinations`: `Svc.auditEvents.destination` (tsdb, parquet, table file, JSON files);
 * - `platformDestinations`: the platform's UDP events, polled data (health and session samples) and
 *   the edge's own points, by the gating of platform-formats.md §0.6 (`platformOutputs`), which the
 *   sources use too (`wantsUserEvent`, `wantsLogEvent`, `anyOutput(outputs.health)`) so they do not
 *   enqueue an event no destination takes. A destination is created when any kind goes to it.
 * - `cloudWriterDestination`: the destination a writer Lambda serves, taking the audit and the
 *   platform kinds routed to it (the tsdb: one destination for both).
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
import { S3Client } from '@aws-sdk/client-s3';
import { auditDestinationTypes } from '../config/rules.js';
import type { SvcConfig } from '../config/schema.js';
import { anyOutput, platformOutputs, type PlatformOutputs } from '../config/outputs.js';
import type { PlatformLogEvent } from '../platform/events.js';
import type { AppContext } from '../runtime/context.js';
import type { Component } from '../runtime/lifecycle.js';
import { AuditFileDestination } from './files/destination.js';
import { encodeParquet } from './files/parquet.js';
import { DirectorySink, S3Sink, type FileSink } from './files/sink.js';
import { encodeQvd } from './files/tablefile/qvd.js';
import { JsonObjectDataDestination } from './json/destination.js';
import { JsonObjectDataWriter } from './json/writer.js';
import { MonSaasWriter } from './monsaas/client.js';
import { MonSaasDestination } from './monsaas/destination.js';
import { logMonSaasWanted, monSaasAttributeOptions, monSaasMetricOptions, resolveScrambleKey } from './monsaas/mappers.js';
import { MqttWriter } from './mqtt/client.js';
import { MqttDestination } from './mqtt/destination.js';
import type { BaseDestination } from './port.js';
import { TsdbDestination, type TsdbDestinationOptions } from './tsdb/destination.js';
import { TsdbWriter } from './tsdb/writer.js';

/** What the registries build destinations from: the process's context (the Lambdas make one too). */
export type DestinationContext = Pick<AppContext, 'config' | 'logger' | 'errors' | 'clock'>;

export interface ConfiguredDestination {
  /** A BaseDestination, so what it failed to write can be read (the metrics endpoint). */
  destination: BaseDestination;
  /** Messages per delivery and the longest wait for a fuller batch (maxBatchSize / writeFrequency). */
  batchSize: number;
  batchWindowMs: number;
  /** The destination names its output after the batch: a batch must come again exactly as it was (local queue). */
  stableBatches?: boolean;
}

/** The tsdb writer of `Svc.tsdbConfig`, its failures tracked with the producing module (§6.0 step 5) and the tsdb's host. */
function tsdbWriter({ config, logger, errors }: DestinationContext): TsdbWriter {
  return new TsdbWriter({ config: config.tsdbConfig, log: logger, onError: (type, module, err) => errors.track(type, err, { module, destinationHost: config.tsdbConfig.host }) });
}

/** The audit destination types that are on (`Svc.auditEvents.enable`, `.destination.enable`, `.type`). */
function auditTypesOn(config: SvcConfig): ReturnType<typeof auditDestinationTypes> {
  const settings = config.auditEvents.destination;
  return config.auditEvents.enable && settings.enable ? auditDestinationTypes(settings.type) : [];
}

/** The audit part of a TsdbDestination (`auditEvents.destination.tsdb`). */
function auditTsdbKinds({ config, clock }: DestinationContext): TsdbDestinationOptions['audit'] {
  const t = config.auditEvents.destination.tsdb;
  return { measurement: t.measurementName, staticTags: t.staticTags, clock };
}

/** The platform kinds a TsdbDestination takes (§0.6, `platformOutputs`). */
type PlatformTsdbKinds = Pick<TsdbDestinationOptions, 'userEvents' | 'logEvents' | 'points' | 'health' | 'sessions'>;
const NO_PLATFORM_TSDB_KINDS: PlatformTsdbKinds = { userEvents: null, logEvents: null, points: false, health: null, sessions: false };

function platformTsdbKinds(config: SvcConfig, outputs: PlatformOutputs): PlatformTsdbKinds {
  return {
    userEvents: outputs.userEvents.tsdb ? { tags: config.userEvents.tags } : null,
    logEvents: outputs.logEvents.tsdb ? { tags: config.logEvents.tags } : null,
    points: outputs.points,
    health: outputs.health.tsdb ? { includeFields: config.tsdbConfig.includeFields } : null,
    sessions: outputs.sessions.tsdb,
  };
}

function takesPlatformKind(kinds: PlatformTsdbKinds): boolean {
  return kinds.userEvents !== null || kinds.logEvents !== null || kinds.points || (kinds.health ?? null) !== null || kinds.sessions === true;
}

/** One TsdbDestination, with its own writer, for the audit and platform kinds given. */
function tsdbDestination(ctx: DestinationContext, audit: TsdbDestinationOptions['audit'], platform: PlatformTsdbKinds): TsdbDestination {
  return new TsdbDestination({ writer: tsdbWriter(ctx), audit, ...platform, log: ctx.logger });
}

/** The audit destinations of `Svc.auditEvents.destination`, in the order the config lists them. */
export function auditDestinations(ctx: DestinationContext): ConfiguredDestination[] {
  const { config, logger: log, errors } = ctx;
  const settings = config.auditEvents.destination;
  const out: ConfiguredDestination[] = [];
  for (const type of auditTypesOn(config)) {
    if (type === 'tsdb') {
      out.push({ destination: tsdbDestination(ctx, auditTsdbKinds(ctx), NO_PLATFORM_TSDB_KINDS), batchSize: settings.tsdb.maxBatchSize, batchWindowMs: settings.tsdb.writeFrequency });
    } else if (type === 'parquet') {
      const p = settings.parquet;
      const sink: FileSink = p.s3.enable ? new S3Sink({ client: new S3Client({ region: p.s3.region, ...(p.s3.endpoint ? { endpoint: p.s3.endpoint, forcePathStyle: true } : {}) }), bucket: p.s3.bucket, prefix: p.s3.prefix }) : new DirectorySink(p.exportDirectory);
      out.push({
        destination: new AuditFileDestination({ name: 'parquet', extension: 'parquet', encode: (columns, rows) => encodeParquet(columns, rows), sink, staticTags: p.staticTags, log, onError: (err) => errors.track('AUDIT_FILE_WRITE', err, { module: 'PARQUET' }) }),
        batchSize: p.maxBatchSize,
        batchWindowMs: p.writeFrequency,
        stableBatches: true,
      });
    } else if (type === 'tablefile') {
      const t = settings.tablefile;
      out.push({
        destination: new AuditFileDestination({ name: 'tablefile', extension: 'qvd', encode: (columns, rows) => encodeQvd({ name: 'audit_events', columns, rows }), sink: new DirectorySink(t.exportDirectory), staticTags: t.staticTags, log, onError: (err) => errors.track('AUDIT_FILE_WRITE', err, { module: 'TABLEFILE' }) }),
        batchSize: t.maxBatchSize,
        batchWindowMs: t.writeFrequency,
        stableBatches: true,
      });
    } else if (type === 'json') {
      if (!settings.json.objectdata.enable) continue;
      out.push({ destination: new JsonObjectDataDestination(new JsonObjectDataWriter(settings.json.objectdata), log), batchSize: 100, batchWindowMs: 0 });
    }
  }
  return out;
}

/** Whether a user event should be enqueued at all: some destination takes user events. */
export function wantsUserEvent(outputs: PlatformOutputs): boolean {
  return anyOutput(outputs.userEvents);
}

/**
 * Whether a log event should be enqueued at all: tsdb or MQTT take log events, or monsaas takes this
 * one (its source and level, §8.3).
 */
export function wantsLogEvent(config: SvcConfig, outputs: PlatformOutputs, event: Pick<PlatformLogEvent, 'source' | 'level'>): boolean {
  const o = outputs.logEvents;
  return o.tsdb || o.mqtt || (o.monsaas && logMonSaasWanted(event, config.logEvents.sendToMonSaas.source));
}

export interface PlatformDestinations {
  destinations: ConfiguredDestination[];
  /** Lifecycle components the destinations need (the MQTT client): start before, stop after the queue. */
  components: Component[];
}

/**
 * Batching of the MQTT and monsaas destinations (queue messages per delivery; no waiting). The edge
 * packs up to EDGE_EVENTS_PER_MESSAGE events in a message, and a destination sends the events of a
 * delivery concurrently: 100 messages bound MQTT to 2,000 events in flight (a UDP event is one to five
 * publishes, a health sample 22: the pollers make at most one per server and interval), 1 message
 * bounds the monitoring SaaS to 20 POSTs per account in flight.
 */
export const EDGE_EVENTS_PER_MESSAGE = 20;
export const MQTT_BATCH = { batchSize: 100, batchWindowMs: 0 } as const;
export const MONSAAS_BATCH = { batchSize: 1, batchWindowMs: 0 } as const;
/** §0.6: a tsdb chunk is sent at the latest 1 s after its first point. */
export const TSDB_BATCH_WINDOW_MS = 1000;

/**
 * The platform destinations of `platformOutputs(config)`, in the order tsdb, mqtt, monsaas, each built
 * with its own writer (errors tracked with the producing module). With scrambling on and no `scrambleSecret`, the random key is made here, once
 * per process (§8.4, with its WARN).
 */
export function platformDestinations(ctx: DestinationContext): PlatformDestinations {
  const { config, logger: log, errors } = ctx;
  const outputs = platformOutputs(config);
  const destinations: ConfiguredDestination[] = [];
  const components: Component[] = [];
  const userTags = config.userEvents.tags;
  const logTags = config.logEvents.tags;

  const tsdbKinds = platformTsdbKinds(config, outputs);
  if (takesPlatformKind(tsdbKinds)) {
    destinations.push({ destination: tsdbDestination(ctx, null, tsdbKinds), batchSize: config.tsdbConfig.maxBatchSize, batchWindowMs: TSDB_BATCH_WINDOW_MS });
  }

  if (outputs.userEvents.mqtt || outputs.logEvents.mqtt || outputs.health.mqtt || outputs.sessions.mqtt) {
    const writer = new MqttWriter({ settings: config.mqttConfig, log, errors: errors });
    const baseTopic = { baseTopic: config.mqttConfig.baseTopic };
    components.push(writer);
    destinations.push({
      destination: new MqttDestination({
        writer,
        userEvents: outputs.userEvents.mqtt ? { settings: config.userEvents.sendToMQTT, tags: userTags } : null,
        logEvents: outputs.logEvents.mqtt ? { settings: config.logEvents.sendToMQTT, tags: logTags } : null,
        health: outputs.health.mqtt ? baseTopic : null,
        sessions: outputs.sessions.mqtt ? baseTopic : null,
        log,
      }),
      ...MQTT_BATCH,
    });
  }

  if (outputs.userEvents.monsaas || outputs.logEvents.monsaas || outputs.health.monsaas || outputs.sessions.monsaas) {
    const writer = new MonSaasWriter({ settings: config.monsaas, credentials: config.thirdPartyToolsCredentials.monsaas, log, errors: errors });
    const userSend = config.userEvents.sendToMonSaas;
    const metricAccounts = config.monsaas.metric.destinationAccount;
    destinations.push({
      destination: new MonSaasDestination({
        writer,
        userEvents: outputs.userEvents.monsaas
          ? {
              accounts: userSend.destinationAccount,
              options: { ...monSaasAttributeOptions(config, userTags), scrambleKey: userSend.scramble ? resolveScrambleKey(userSend.scrambleSecret, log) : null },
            }
          : null,
        logEvents: outputs.logEvents.monsaas
          ? {
              accounts: config.logEvents.sendToMonSaas.destinationAccount,
              options: { ...monSaasAttributeOptions(config, logTags), sources: config.logEvents.sendToMonSaas.source },
            }
          : null,
        health: outputs.health.monsaas ? { accounts: metricAccounts, options: { ...monSaasMetricOptions(config, 'health'), flags: config.monsaas.metric.dynamic } } : null,
        sessions: outputs.sessions.monsaas ? { accounts: metricAccounts, options: monSaasMetricOptions(config, 'sessions') } : null,
        log,
      }),
      ...MONSAAS_BATCH,
    });
  }

  return { destinations, components };
}

/**
 * The destination a writer Lambda serves (`name`, one of CLOUD_DESTINATIONS in functions/contract.ts),
 * taking every kind the config routes to it, with the same classes as local mode: the tsdb writer
 * takes audit events (when `auditEvents.destination.type` lists tsdb) and the platform kinds of
 * `platformOutputs` (user and log events, the edge's points, health and session samples) in one
 * TsdbDestination; parquet takes audit events. Where local mode has two tsdb destinations (the audit
 * queue's and the platform queue's), the cloud has one queue per destination, so one destination.
 * null when the config routes nothing to `name`.
 */
export function cloudWriterDestination(ctx: DestinationContext, name: string): BaseDestination | null {
  const auditOn = auditTypesOn(ctx.config).includes('tsdb');
  if (name === 'tsdb') {
    const platform = platformTsdbKinds(ctx.config, platformOutputs(ctx.config));
    return auditOn || takesPlatformKind(platform) ? tsdbDestination(ctx, auditOn ? auditTsdbKinds(ctx) : null, platform) : null;
  }
  return auditDestinations(ctx).find((d) => d.destination.name === name)?.destination ?? null;
}

/**
 * The destinations of the platform's UDP events a config asks for, each with its batching: the one
 * place that maps `Svc.userEvents`, `Svc.logEvents`, `Svc.platformEvents` and the listeners' queue
 * metrics to writers (platform-formats.md §0.6), used by local mode and by the writer Lambdas, and —
 * through `platformOutputs` / `wantsUserEvent` / `wantsLogEvent` — by the listeners, which do not
 * enqueue an event no destination takes.
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
 * send at once (batches of 100 and 10 events only bound the concurrency).
 */
import type { SvcConfig } from '../config/schema.js';
import { logListenerEnabled } from '../config/rules.js';
import type { ErrorTracker } from '../errors/tracker.js';
import type { Logger } from '../logging/logger.js';
import type { PlatformLogEvent } from '../platform/events.js';
import { MONSAAS_LOG_SOURCES, logMonSaasWanted, monSaasAttributeOptions, resolveScrambleKey } from './monsaas/events.js';
import type { Component } from '../runtime/lifecycle.js';
import { TsdbWriter } from './tsdb/writer.js';
import { MonSaasWriter } from './monsaas/client.js';
import { MqttWriter } from './mqtt/client.js';
import { PlatformMonSaasDestination } from './monsaas/destination.js';
import { PlatformMqttDestination } from './mqtt/destination.js';
import { PlatformTsdbDestination } from './tsdb/platform.js';
import type { ConfiguredDestination } from './registry.js';

/** Where one kind of platform event goes. */
export interface EventOutputs {
  tsdb: boolean;
  mqtt: boolean;
  monsaas: boolean;
}

/** The gating decisions of §0.6 for the platform's UDP events and the edge's own points. */
export interface PlatformOutputs {
  userEvents: EventOutputs;
  logEvents: EventOutputs;
  /**
   * The edge's own points (kind `points`) go to the tsdb: event/rejected counts (§6.7) or either
   * running listener's queue metrics (§6.8).
   */
  points: boolean;
}

/** Whether any destination takes this kind of event. */
export function anyOutput(outputs: EventOutputs): boolean {
  return outputs.tsdb || outputs.mqtt || outputs.monsaas;
}

/** §0.6 applied to the config: which destinations each kind of platform event goes to. */
export function platformOutputs(config: SvcConfig): PlatformOutputs {
  const tsdb = config.tsdbConfig.enable;
  const mqtt = config.mqttConfig.enable;
  const monsaas = config.monsaas.enable;
  const user = config.userEvents;
  const userOn = user.enable;
  const log = config.logEvents;
  const logOn = logListenerEnabled(config);

  const userTopics = Object.values(user.sendToMQTT.postTo).some((t) => t.enable);
  const logTopics = log.sendToMQTT.postTo.baseTopic || log.sendToMQTT.postTo.subsystemTopics;
  const logMonSaasSource = Object.values(MONSAAS_LOG_SOURCES).some((key) => {
    const send = log.sendToMonSaas.source[key];
    return log.source[key].enable && send.enable && (send.logLevel.error || send.logLevel.warn);
  });

  const counters = config.platformEvents.tsdb.enable && (config.platformEvents.eventCount.enable || config.platformEvents.rejectedEventCount.enable);
  const queueMetrics = (userOn && user.udpServerConfig.queueMetrics.tsdb.enable) || (logOn && log.udpServerConfig.queueMetrics.tsdb.enable);

  return {
    userEvents: {
      tsdb: userOn && tsdb && user.sendToTsdb.enable,
      mqtt: userOn && mqtt && user.sendToMQTT.enable && userTopics,
      monsaas: userOn && monsaas && user.sendToMonSaas.enable && user.sendToMonSaas.destinationAccount.length > 0,
    },
    logEvents: {
      tsdb: logOn && tsdb && log.sendToTsdb.enable,
      mqtt: logOn && mqtt && log.sendToMQTT.enable && logTopics,
      monsaas: logOn && monsaas && log.sendToMonSaas.enable && log.sendToMonSaas.destinationAccount.length > 0 && logMonSaasSource,
    },
    points: tsdb && (counters || queueMetrics),
  };
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

/** What the platform destinations share with the rest of the process. */
export interface PlatformDestinationDeps {
  errors: ErrorTracker;
}

export interface PlatformDestinations {
  destinations: ConfiguredDestination[];
  /** Lifecycle components the destinations need (the MQTT client): start before, stop after the queue. */
  components: Component[];
}

/**
 * Batching of the MQTT and monsaas destinations (queue messages per delivery; no waiting). The edge
 * packs up to EDGE_EVENTS_PER_MESSAGE events in a message, and a destination sends the events of a
 * delivery concurrently: 100 messages bound MQTT to 2,000 publishes in flight, 1 message bounds the
 * monitoring SaaS to 20 POSTs in flight.
 */
export const EDGE_EVENTS_PER_MESSAGE = 20;
export const MQTT_BATCH = { batchSize: 100, batchWindowMs: 0 } as const;
export const MONSAAS_BATCH = { batchSize: 1, batchWindowMs: 0 } as const;
/** §0.6: a tsdb chunk is sent at the latest 1 s after its first point. */
export const TSDB_BATCH_WINDOW_MS = 1000;

/**
 * The platform destinations of `platformOutputs(config)`, in the order tsdb, mqtt, monsaas, each built
 * with its own writer (the tsdb writer as `auditDestinations` builds it; errors tracked with the
 * producing module). With scrambling on and no `scrambleSecret`, the random key is made here, once
 * per process (§8.4, with its WARN).
 */
export function platformDestinations(config: SvcConfig, log: Logger, deps: PlatformDestinationDeps): PlatformDestinations {
  const outputs = platformOutputs(config);
  const destinations: ConfiguredDestination[] = [];
  const components: Component[] = [];
  const userTags = config.userEvents.tags;
  const logTags = config.logEvents.tags;

  if (outputs.userEvents.tsdb || outputs.logEvents.tsdb || outputs.points) {
    const writer = new TsdbWriter({ config: config.tsdbConfig, log, onError: (type, module, err) => deps.errors.track(type, err, { module }) });
    destinations.push({
      destination: new PlatformTsdbDestination({
        writer,
        userEvents: outputs.userEvents.tsdb ? { tags: userTags } : null,
        logEvents: outputs.logEvents.tsdb ? { tags: logTags } : null,
        log,
      }),
      batchSize: config.tsdbConfig.maxBatchSize,
      batchWindowMs: TSDB_BATCH_WINDOW_MS,
    });
  }

  if (outputs.userEvents.mqtt || outputs.logEvents.mqtt) {
    const writer = new MqttWriter({ settings: config.mqttConfig, log, errors: deps.errors });
    components.push(writer);
    destinations.push({
      destination: new PlatformMqttDestination({
        writer,
        userEvents: outputs.userEvents.mqtt ? { settings: config.userEvents.sendToMQTT, tags: userTags } : null,
        logEvents: outputs.logEvents.mqtt ? { settings: config.logEvents.sendToMQTT, tags: logTags } : null,
      }),
      ...MQTT_BATCH,
    });
  }

  if (outputs.userEvents.monsaas || outputs.logEvents.monsaas) {
    const writer = new MonSaasWriter({ settings: config.monsaas, credentials: config.thirdPartyToolsCredentials.monsaas, log, errors: deps.errors });
    const userSend = config.userEvents.sendToMonSaas;
    destinations.push({
      destination: new PlatformMonSaasDestination({
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
      }),
      ...MONSAAS_BATCH,
    });
  }

  return { destinations, components };
}

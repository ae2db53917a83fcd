/**
 * Which destination takes which kind of platform event: the gating of platform-formats.md §0.6
 * applied to the config. Pure config logic (no clients), so the edge agent, the writer Lambdas and
 * the CDK app (which deploys a writer for every cloud destination something is routed to) share it.
 */

import { anyHealthMetric, MONSAAS_LOG_SOURCES } from '../destinations/monsaas/mappers.js';
import type { SvcConfig } from './schema.js';

/** Where one kind of platform event goes. */
export interface EventOutputs {
  tsdb: boolean;
  mqtt: boolean;
  monsaas: boolean;
  /** The embedded store (`Svc.store.enable`): always on this process, never in the cloud. */
  store: boolean;
}

/** The gating decisions of §0.6 for the platform's UDP events and the edge's own points. */
export interface PlatformOutputs {
  userEvents: EventOutputs;
  logEvents: EventOutputs;
  /**
   * Health polls (§4): the destinations' master switches only (§0.6); monsaas also needs a metric group
   * flag (§8.2; the app-list flags only add attributes to those metrics) and an account.
   */
  health: EventOutputs;
  /** Session polls (§5.1): as health; monsaas needs `metric.dynamic.proxy.sessions.enable`. */
  sessions: EventOutputs;
  /**
   * The edge's own points (kind `points`) go to the tsdb: event/rejected counts (§6.7), either
   * running listener's queue metrics (§6.8), Svc's memory use (§6.9) or the tracked errors (§6.10).
   */
  points: boolean;
}

/** §6.9 gating (§0.6): the uptime monitor's `svc_memory_usage` points go to the tsdb. */
export function uptimePointsWanted(config: SvcConfig): boolean {
  return config.uptimeMonitor.enable && config.uptimeMonitor.storeInTsdb.svcMemoryUsage && config.tsdbConfig.enable;
}

/** Whether any destination takes this kind of event. */
export function anyOutput(outputs: EventOutputs): boolean {
  return outputs.tsdb || outputs.mqtt || outputs.monsaas || outputs.store;
}

/** §0.6 applied to the config: which destinations each kind of platform event goes to. */
export function platformOutputs(config: SvcConfig): PlatformOutputs {
  const tsdb = config.tsdbConfig.enable;
  const mqtt = config.mqttConfig.enable;
  const monsaas = config.monsaas.enable;
  const store = config.store.enable;
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

  const counters =
    config.platformEvents.tsdb.enable &&
    (config.platformEvents.eventCount.enable || config.platformEvents.rejectedEventCount.enable);
  const healthOn = config.serversToMonitor.servers.length > 0;
  const sessionsOn =
    config.userSessions.enableSessionExtract &&
    config.serversToMonitor.servers.some((s) => s.userSessions.enable && s.userSessions.virtualProxies.length > 0);
  const metric = config.monsaas.metric;
  const metricAccounts = metric.destinationAccount.length > 0;
  // The app lists (apps.activeDocs …) are attributes of the health metrics: alone they send nothing.
  const healthMetric = anyHealthMetric(metric.dynamic);
  const queueMetrics =
    (userOn && user.udpServerConfig.queueMetrics.tsdb.enable) ||
    (logOn && log.udpServerConfig.queueMetrics.tsdb.enable);

  return {
    userEvents: {
      tsdb: userOn && tsdb && user.sendToTsdb.enable,
      mqtt: userOn && mqtt && user.sendToMQTT.enable && userTopics,
      monsaas: userOn && monsaas && user.sendToMonSaas.enable && user.sendToMonSaas.destinationAccount.length > 0,
      store: userOn && store,
    },
    logEvents: {
      tsdb: logOn && tsdb && log.sendToTsdb.enable,
      mqtt: logOn && mqtt && log.sendToMQTT.enable && logTopics,
      monsaas:
        logOn &&
        monsaas &&
        log.sendToMonSaas.enable &&
        log.sendToMonSaas.destinationAccount.length > 0 &&
        logMonSaasSource,
      store: logOn && store,
    },
    health: {
      tsdb: healthOn && tsdb,
      mqtt: healthOn && mqtt,
      monsaas: healthOn && monsaas && metricAccounts && healthMetric,
      store: healthOn && store,
    },
    sessions: {
      tsdb: sessionsOn && tsdb,
      mqtt: sessionsOn && mqtt,
      monsaas: sessionsOn && monsaas && metricAccounts && metric.dynamic.proxy.sessions.enable,
      store: sessionsOn && store,
    },
    points: tsdb && (counters || queueMetrics || uptimePointsWanted(config) || errorPointsWanted(config)),
  };
}

/** §6.10 gating: error tracking on, its tsdb switch on, and the tsdb on (§0.6). */
export function errorPointsWanted(config: SvcConfig): boolean {
  return config.errorTracking.enable && config.errorTracking.tsdb.enable && config.tsdbConfig.enable;
}

/** The log-event listener runs when any log source is enabled (platform-formats.md §2.3). */
export function logListenerEnabled(c: SvcConfig): boolean {
  return Object.values(c.logEvents.source).some((s) => s.enable);
}

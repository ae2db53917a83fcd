/**
 * The platform pollers of the edge (platform-formats.md §4, §5): the app-name poller, the health
 * poller and the session poller, handing their results to the PollSinks: the platform pipeline's
 * queue (queue-sink.ts) and whatever the caller adds (the metrics endpoint).
 *
 * Start order (after the pipeline): the queue sink's batchers → the app-name poller (which waits,
 * bounded, for the first app list) → the health and session pollers. The UDP listeners start after
 * them with the poller's app list. The lifecycle stops in reverse: the pollers finish their polls,
 * the batchers write what they hold, then the pipeline's queue.
 */
import { type AppNameLookup, NO_APP_NAMES } from '../../../shared/platform/app-names.js';
import type { AppContext } from '../../../shared/runtime/context.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import type { PlatformPipeline } from '../../runtime/platform-pipeline.js';
import { AppListPoller } from './app-list.js';
import { healthPoller } from './health.js';
import { QueuePollSink } from './queue-sink.js';
import type { PollGroup } from './schedule.js';
import { sessionPoller, sessionTargets } from './sessions.js';
import { fanOut, type PollSink } from './sink.js';
import { type PlatformAccess, pollersOn } from './startup.js';

export interface PlatformPollers {
  /** In start order. */
  components: Component[];
  /** For the UDP listeners: the app-name poller's list, or NO_APP_NAMES when app names are not extracted. */
  appNames: AppNameLookup;
  appList: AppListPoller | null;
  health: PollGroup | null;
  sessions: PollGroup | null;
  /** null when no queued destination takes polled data. */
  queueSink: QueuePollSink | null;
}

export interface PlatformPollerOptions {
  /** From checkPlatformAccess (startup.ts): the checked client certificate. */
  access: PlatformAccess;
  pipeline: PlatformPipeline;
  /** More outputs of polled data (the metrics endpoint), called after the queue. */
  sinks?: readonly PollSink[];
}

/** The pollers a config asks for; null when none is on. */
export function platformPollers(ctx: AppContext, options: PlatformPollerOptions): PlatformPollers | null {
  const { config, logger: log, errors } = ctx;
  const on = pollersOn(config);
  if (!on.health && !on.sessions && !on.appNames) return null;
  const { tls } = options.access;
  if (tls === null)
    throw new Error('platform pollers are on but no client certificate was checked (checkPlatformAccess)');

  const { queue, outputs } = options.pipeline;
  const queueSink = queue === null ? null : new QueuePollSink({ queue, outputs, clock: ctx.clock, errors, log });
  const sinks = [...(queueSink && queueSink.components.length > 0 ? [queueSink] : []), ...(options.sinks ?? [])];
  if ((on.health || on.sessions) && sinks.length === 0)
    log.warn(
      {},
      'no destination takes polled data (tsdb, MQTT, monitoring SaaS, the metrics endpoint or the status page): the platform is polled and failures are logged, nothing is stored',
    );
  const sink = fanOut(sinks);

  const appList = on.appNames ? new AppListPoller({ settings: config.appNames, tls, errors, log }) : null;
  const servers = config.serversToMonitor;
  const health = on.health
    ? healthPoller({ settings: servers, tls, appNames: appList?.list ?? null, sink, errors, log })
    : null;
  const sessions = on.sessions
    ? sessionPoller({ settings: config.userSessions, servers: servers.servers, tls, sink, errors, log })
    : null;

  const polled = [
    health && `the health API of ${servers.servers.length} server(s) every ${servers.pollingInterval} ms`,
    sessions &&
      `the session API of ${sessionTargets(servers.servers).length} server × virtual prox(ies) every ${config.userSessions.pollingInterval} ms`,
    appList && `the app list of ${appList.address} every ${config.appNames.extractInterval} ms`,
  ].filter((p): p is string => typeof p === 'string');
  log.info(
    {
      health: on.health,
      sessions: on.sessions,
      appNames: on.appNames,
      clientCert: tls.files.cert,
      certValidTo: tls.validTo.toISOString(),
      rejectUnauthorized: tls.rejectUnauthorized,
    },
    `platform polling on: ${polled.join('; ')}; client certificate ${tls.files.cert} (valid until ${tls.validTo.toISOString()})`,
  );

  const components: Component[] = [
    ...(queueSink?.components ?? []),
    ...(appList ? [appList] : []),
    ...(health ? [health] : []),
    ...(sessions ? [sessions] : []),
  ];
  return { components, appNames: appList?.list ?? NO_APP_NAMES, appList, health, sessions, queueSink };
}

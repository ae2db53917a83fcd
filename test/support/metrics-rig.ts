/**
 * A metrics endpoint with every part behind Svc's alert counters, all real: a configured server
 * (health and session polls), a UDP log-event listener counting per source and level, the audit
 * queue with its tsdb destination (aimed at a closed port; nothing is sent, so nothing fails), the
 * error tracker and the pollers' client certificate. For the counters-from-0 test and for checking
 * docs/prometheus/ against a real exposition.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type MetricsEndpointParts, metricsEndpoint } from '../../edge-agent/endpoints/metrics/compose.js';
import { Observed, type ObservedDestination } from '../../edge-agent/endpoints/observed.js';
import { logEventHandler } from '../../edge-agent/sources/udp/handlers.js';
import { UdpListener } from '../../edge-agent/sources/udp/listener.js';
import { LogLevelCounts } from '../../edge-agent/sources/udp/log-levels.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';
import { auditDestinations } from '../../shared/destinations/registry.js';
import { ErrorTracker } from '../../shared/errors/tracker.js';
import type { Logger } from '../../shared/logging/logger.js';
import { NO_APP_NAMES } from '../../shared/platform/app-names.js';
import { LocalEventQueue } from '../../shared/queue/local/index.js';
import { PointClock } from '../../shared/queue/point-clock.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { freePort, LOOPBACK } from './ports.js';
import { svcConfig } from './udp.js';

/** The configured server's tags as the pollers give them (no serverTagsDefinition). */
export const RIG_SERVER = { host: 'node1.lab.local', server_name: 'Node1', server_description: 'Central node' };

/** The rig's client certificate file (it only names it: the endpoint reads no file). */
export const RIG_CERTIFICATE_FILE = '/etc/svc/certs/client.pem';

/** Days until the rig's client certificate expires. */
export const RIG_CERTIFICATE_DAYS = 40;

export interface MetricsRig extends MetricsEndpointParts {
  url: string;
  observed: Observed;
  errors: ErrorTracker;
  listener: UdpListener;
  /** Stops what it started and removes its queue directory. */
  stop(): Promise<void>;
}

/** The config lines of an endpoint on `port` (under `Svc:`). */
export const endpointLines = (port: number): string[] => [
  '  metricsEndpoint:',
  '    enable: true',
  `    host: ${LOOPBACK}`,
  `    port: ${port}`,
];

/** The config lines (under `Svc:`) of the audit path's tsdb destination, aimed at `port` on loopback. */
export const auditTsdbLines = (port: number): string[] => [
  '  tsdbConfig:',
  '    enable: true',
  `    host: ${LOOPBACK}`,
  `    port: ${port}`,
  '  auditEvents:',
  '    enable: true',
  '    destination: {enable: true, type: tsdb}',
];

/** A log-event listener on a free loopback port (not started), its events counted in `levels` when given. */
export function logListener(
  config: SvcConfig,
  log: Logger,
  errors: ErrorTracker,
  levels?: LogLevelCounts,
): UdpListener {
  return new UdpListener({
    queueType: 'log_events',
    port: 0,
    settings: config.logEvents.udpServerConfig,
    handler: logEventHandler({
      appNames: NO_APP_NAMES,
      counter: null,
      clock: new PointClock(),
      log,
      settings: config.logEvents,
      rejected: null,
      trackPerfRejections: false,
      queue: null,
      ...(levels ? { levels } : {}),
    }),
    log,
    errors,
    errorType: 'UDP_LOG_EVENT',
    module: 'UDP_LOG_EVENTS',
  });
}

/**
 * The audit path's tsdb destination from the registry (the config aims it at a closed port) and a
 * local queue in `directory` (not started) whose only group writes to it: 50 events, one attempt,
 * a first delivery that waits `batchWindowMs` for a fuller batch.
 */
export function auditTsdbQueue(
  config: SvcConfig,
  log: Logger,
  errors: ErrorTracker,
  directory: string,
  batchWindowMs: number,
): { queue: LocalEventQueue; destination: ObservedDestination } {
  const [tsdb] = auditDestinations({ config, logger: log, errors, clock: new PointClock() });
  if (!tsdb) throw new Error('the audit tsdb destination is configured');
  const queue = new LocalEventQueue({
    directory,
    capacity: 50,
    maxReceiveCount: 1,
    groups: [
      {
        name: tsdb.destination.name,
        handler: makeWriterHandler({ destination: tsdb.destination, claimCheck: null, log }),
        batchSize: 10,
        batchWindowMs,
      },
    ],
    log,
  });
  return { queue, destination: tsdb.destination };
}

/** Starts the rig; call `stop()` when done. */
export async function startMetricsRig(log: Logger): Promise<MetricsRig> {
  const started: Component[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'metrics-rig-'));
  const stop = async (): Promise<void> => {
    for (const component of started.reverse()) await component.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const [port, closed] = [await freePort(), await freePort()];
    const config = svcConfig([
      ...endpointLines(port),
      '  userSessions: {enableSessionExtract: true}',
      '  serversToMonitor:',
      '    servers:',
      `      - host: ${RIG_SERVER.host}`,
      `        serverName: ${RIG_SERVER.server_name}`,
      `        serverDescription: ${RIG_SERVER.server_description}`,
      `        userSessions: {enable: true, host: '${RIG_SERVER.host}:4243', virtualProxies: [{virtualProxy: /}]}`,
      '  logEvents:',
      '    source: {engine: {enable: true}, proxy: {enable: true}}',
      `    udpServerConfig: {serverHost: ${LOOPBACK}}`,
      ...auditTsdbLines(closed),
    ]);
    const errors = new ErrorTracker({ enabled: true, log });
    const observed = new Observed();
    const parts = metricsEndpoint({ config, logger: log, errors }, observed);
    if (parts === null) throw new Error('the rig enables the metrics endpoint');
    await parts.component.start();
    started.push(parts.component);

    const levels = new LogLevelCounts();
    const listener = logListener(config, log, errors, levels);
    await listener.start();
    started.push(listener);
    observed.listener(listener);
    observed.logEvents = levels;

    const { queue, destination } = auditTsdbQueue(config, log, errors, dir, 1000);
    await queue.start();
    started.push(queue);
    observed.queue({ name: 'audit', queue, destinations: [destination] });
    observed.clientCertificate = {
      file: RIG_CERTIFICATE_FILE,
      validTo: new Date(Date.now() + RIG_CERTIFICATE_DAYS * 86_400_000),
    };

    return { ...parts, url: `http://${LOOPBACK}:${port}/metrics`, observed, errors, listener, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * The metrics endpoint of a process (`Svc.metricsEndpoint`, platform-formats.md §9), composed from
 * one registry of its own (no global): the polled values (the PollSink the pollers are given), Svc's
 * own counters (read from what `observed` names) and the runtime's process metrics, all prefixed
 * `svc_`, on one port.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { AppContext } from '../../../shared/runtime/context.js';
import type { PollSink } from '../../sources/platform/sink.js';
import { polledServers } from '../../sources/platform/startup.js';
import type { Observed } from '../observed.js';
import { MetricsEndpoint } from './endpoint.js';
import { PollMetrics } from './poll-metrics.js';
import { registerSvcMetrics } from './svc-metrics.js';

export interface MetricsEndpointParts {
  component: MetricsEndpoint;
  /** For the pollers: every health and session poll (and failure) lands here too. */
  pollSink: PollSink;
}

/** The endpoint, when `metricsEndpoint.enable`; else null. */
export function metricsEndpoint(
  ctx: Pick<AppContext, 'config' | 'logger' | 'errors'>,
  observed: Observed,
): MetricsEndpointParts | null {
  const { config, logger: log, errors } = ctx;
  const settings = config.metricsEndpoint;
  if (!settings.enable) return null;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'svc_' });
  const polled = polledServers(config);
  const own = registerSvcMetrics(registry, observed, errors, polled);
  const pollSink = new PollMetrics({
    registry,
    serverTagsDefinition: config.serversToMonitor.serverTagsDefinition,
    onFailed: own.pollFailed,
  });
  return { component: new MetricsEndpoint({ host: settings.host, port: settings.port, registry, log }), pollSink };
}

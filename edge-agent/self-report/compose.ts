/**
 * What Svc reports about itself (platform-formats.md §10.2, §10.4–§10.6), composed for `svc local`
 * and `svc edge`: the system info (always: its start-up line, and the facts the telemetry needs),
 * the anonymous telemetry, the heartbeat and the uptime monitor, each as a lifecycle component
 * whose timer stops on shutdown. They start after the platform pipeline (the uptime monitor queues
 * its `svc_memory_usage` points there) and so stop before it.
 */
import { uptimePointsWanted } from '../../shared/config/outputs.js';
import { MonSaasWriter } from '../../shared/destinations/monsaas/client.js';
import type { EventQueue } from '../../shared/queue/port.js';
import type { AppContext } from '../../shared/runtime/context.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { maskedUrl } from '../../shared/util/url.js';
import { heartbeatTask } from './heartbeat.js';
import { SystemInfoComponent } from './system-info.js';
import { telemetryTask } from './telemetry.js';
import { UptimeMonitor } from './uptime.js';

/** §8.2 gating: uptime metrics go to monsaas when switched on, to some account, with a metric group on. */
export function uptimeMonSaasWanted(config: AppContext['config']): boolean {
  const u = config.uptimeMonitor;
  const dynamic = u.storeMonSaas.metric.dynamic;
  return (
    u.enable &&
    u.storeMonSaas.enable &&
    u.storeMonSaas.destinationAccount.length > 0 &&
    (dynamic.svcMemoryUsage.enable || dynamic.svcUptime.enable)
  );
}

/**
 * The self-report components in start order. `queue` is the platform pipeline's (null when there is
 * none, or no destination takes points).
 */
export function selfReportComponents(ctx: AppContext, queue: EventQueue | null): Component[] {
  const { config, logger: log } = ctx;
  const out: Component[] = [];
  const systemInfo = new SystemInfoComponent({ enable: config.systemInfo.enable, cert: config.cert, log });
  out.push(systemInfo);
  if (config.anonTelemetry) {
    log.info(
      { url: maskedUrl(config.anonTelemetrySettings.url) },
      `anonymous telemetry is on (Svc.anonTelemetry): host facts, Svc version and feature switches go to ${maskedUrl(config.anonTelemetrySettings.url)} at start and every 12 hours (docs/self-report.md)`,
    );
    out.push(telemetryTask({ config, info: () => systemInfo.info, log }));
  }
  const heartbeat = config.heartbeat;
  if (heartbeat.enable) {
    log.info(
      { url: maskedUrl(heartbeat.remoteURL), frequency: heartbeat.frequency },
      `heartbeat: GET ${maskedUrl(heartbeat.remoteURL)} at start, then ${heartbeat.frequency} (UTC)`,
    );
    out.push(heartbeatTask({ url: heartbeat.remoteURL, frequency: heartbeat.frequency, log }));
  }
  const uptime = config.uptimeMonitor;
  if (uptime.enable) {
    const points = uptimePointsWanted(config) ? queue : null;
    const monsaas = uptimeMonSaasWanted(config)
      ? new MonSaasWriter({
          settings: config.monsaas,
          credentials: config.thirdPartyToolsCredentials.monsaas,
          log,
          errors: ctx.errors,
        })
      : null;
    const to = [
      points ? 'svc_memory_usage points to the tsdb' : '',
      monsaas ? 'uptime metrics to the monitoring SaaS' : '',
    ].filter((s) => s !== '');
    log.info(
      { frequency: uptime.frequency, logLevel: uptime.logLevel },
      `uptime monitor: at start, then ${uptime.frequency} (UTC), logs at ${uptime.logLevel}${to.length > 0 ? ` and writes ${to.join(' and ')}` : ''}`,
    );
    out.push(new UptimeMonitor({ settings: uptime, log, clock: ctx.clock, queue: points, monsaas }));
  }
  return out;
}

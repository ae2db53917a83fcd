/**
 * Anonymous telemetry (platform-formats.md §10.6), off unless `Svc.anonTelemetry` is true (and it
 * refuses to be on while `systemInfo.enable` is false: a rule of shared/config/rules.ts). When on, a
 * JSON POST to `anonTelemetrySettings.url` at start and every 12 hours, holding ONLY:
 *   id (the §10.5 host id, an HMAC: the MAC, IP and uuid cannot be read back from it), service name
 *   `svc`, version, arch, platform, release, distro, codename, virtualised, container flag, runtime
 *   version, and one boolean per feature (TELEMETRY_FEATURES: whether it is switched on).
 * Never host names, IP addresses, paths, config values or user data: the payload is built from the
 * fixed list below, never from a copy of the config or of the system info.
 *
 * The answer is only logged: DEBUG on success (2xx), WARN on failure (Svc choice: telemetry failing
 * is no fault of the operator's service), never retried before the next 12-hour run; timeout 10 s.
 */
import { logListenerEnabled } from '../../shared/config/outputs.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import type { Log } from '../../shared/logging/log.js';
import { IntervalTask } from '../../shared/runtime/interval.js';
import { maskedUrl } from '../../shared/util/url.js';
import { SVC_NAME, SVC_VERSION } from '../../shared/version.js';
import type { SystemInfo } from './system-info.js';

/** §10.6: start, then every 12 h. */
export const TELEMETRY_INTERVAL_MS = 12 * 60 * 60 * 1000;
export const TELEMETRY_TIMEOUT_MS = 10_000;

/** The features whose switch is reported, each as one boolean (whether it is on), in payload order. */
export function featureSwitches(c: SvcConfig) {
  return {
    userEvents: c.userEvents.enable,
    logEvents: logListenerEnabled(c),
    healthMonitoring: c.serversToMonitor.servers.length > 0,
    userSessions: c.userSessions.enableSessionExtract,
    appNames: c.appNames.enableAppNameExtract,
    auditEvents: c.auditEvents.enable,
    tsdb: c.tsdbConfig.enable,
    mqtt: c.mqttConfig.enable,
    monsaas: c.monsaas.enable,
    metricsEndpoint: c.metricsEndpoint.enable,
    heartbeat: c.heartbeat.enable,
    uptimeMonitor: c.uptimeMonitor.enable,
    containerHealthCheck: c.containerHealthCheck.enable,
    configVisualisation: c.configVisualisation.enable,
    errorTracking: c.errorTracking.enable,
    crashFile: c.crashFile.enable,
  };
}

export type TelemetryFeatures = ReturnType<typeof featureSwitches>;

/** §10.6: exactly these facts: the host's as system info has them, and Svc's own. */
export type TelemetryPayload = Pick<
  SystemInfo,
  'arch' | 'platform' | 'release' | 'distro' | 'codename' | 'virtual' | 'isContainer'
> & {
  id: string;
  service: typeof SVC_NAME;
  version: string;
  runtimeVersion: string;
  features: TelemetryFeatures;
};

/** The payload of this process: facts of the host and runtime, and the feature switches. */
export function telemetryPayload(info: SystemInfo, config: SvcConfig): TelemetryPayload {
  return {
    id: info.hostId,
    service: SVC_NAME,
    version: SVC_VERSION,
    arch: info.arch,
    platform: info.platform,
    release: info.release,
    distro: info.distro,
    codename: info.codename,
    virtual: info.virtual,
    isContainer: info.isContainer,
    runtimeVersion: process.version,
    features: featureSwitches(config),
  };
}

/** POSTs the payload once and logs the outcome; never rejects. Resolves true on a 2xx. */
export async function sendTelemetry(
  url: string,
  payload: TelemetryPayload,
  log: Log,
  timeoutMs = TELEMETRY_TIMEOUT_MS,
): Promise<boolean> {
  const shown = maskedUrl(url);
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await res.body?.cancel().catch(() => undefined);
    if (res.ok) {
      log.debug({ url: shown, status: res.status }, `anonymous telemetry sent to ${shown}: HTTP ${res.status}`);
      return true;
    }
    log.warn(
      { url: shown, status: res.status },
      `anonymous telemetry to ${shown} not accepted: HTTP ${res.status}; next try in 12 hours`,
    );
  } catch (err) {
    const timedOut = err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError');
    const cause: unknown = err instanceof Error ? err.cause : undefined;
    const reason = timedOut
      ? `no answer within ${timeoutMs} ms`
      : cause instanceof Error
        ? cause.message
        : err instanceof Error
          ? err.message
          : String(err);
    log.warn({ url: shown, reason }, `anonymous telemetry to ${shown} failed: ${reason}; next try in 12 hours`);
  }
  return false;
}

export interface TelemetryOptions {
  config: SvcConfig;
  /** The system info, collected before this starts (SystemInfoComponent.info). */
  info: () => SystemInfo;
  log: Log;
  intervalMs?: number;
}

/** The telemetry as a component: at start (after the system info), then every 12 hours. */
export function telemetryTask(options: TelemetryOptions): IntervalTask {
  const url = options.config.anonTelemetrySettings.url;
  return new IntervalTask({
    name: 'anonymous telemetry',
    intervalMs: options.intervalMs ?? TELEMETRY_INTERVAL_MS,
    task: async () => {
      await sendTelemetry(url, telemetryPayload(options.info(), options.config), options.log);
    },
    onSkip: () => options.log.debug({}, 'anonymous telemetry: the previous send is still running; this one is skipped'),
  });
}

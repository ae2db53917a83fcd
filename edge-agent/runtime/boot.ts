/**
 * Starting a service process (`svc local`, `svc edge`): logger, crash handlers, the components of the
 * mode in one lifecycle, and the signal handling that stops them.
 */
import { localAuditComponents } from '../../functions/local/audit.js';
import type { LoadedConfig } from '../../shared/config/load.js';
import { platformOutputs } from '../../shared/config/outputs.js';
import { secretValues } from '../../shared/config/secrets.js';
import { crashConfigSummary, installCrashHandlers } from '../../shared/crash/crash-dump.js';
import { platformMqttWanted, processMqttWriter } from '../../shared/destinations/mqtt/build.js';
import { type StoreComponent, storeComponent } from '../../shared/destinations/store/build.js';
import { errorTrackingComponents } from '../../shared/errors/points.js';
import { ErrorTracker } from '../../shared/errors/tracker.js';
import { createLogger, LogDirectoryError, type LoggerHandle } from '../../shared/logging/logger.js';
import { NO_APP_NAMES } from '../../shared/platform/app-names.js';
import { PointClock } from '../../shared/queue/point-clock.js';
import type { AppContext } from '../../shared/runtime/context.js';
import { EXIT_ERROR } from '../../shared/runtime/exit-codes.js';
import { type Component, exitOnSignals, Lifecycle } from '../../shared/runtime/lifecycle.js';
import { installProxy, resolveProxy } from '../../shared/runtime/proxy.js';
import { INSTALL_DIR } from '../../shared/runtime/single-executable.js';
import { SVC_VERSION } from '../../shared/version.js';
import { alertComponents, alertsUseMqtt } from '../alerts/compose.js';
import type { AlertEngine } from '../alerts/engine.js';
import { healthEndpoint } from '../endpoints/health/compose.js';
import { Observed } from '../endpoints/observed.js';
import { webView } from '../endpoints/web/compose.js';
import { selfReportComponents } from '../self-report/compose.js';
import { platformPollers } from '../sources/platform/compose.js';
import { accessConfigError, accessWarning, type PlatformAccess } from '../sources/platform/startup.js';
import { udpComponents } from '../sources/udp/compose.js';
import { platformPipeline, platformPipelineWanted, platformSourcesOn } from './platform-pipeline.js';
import { collectAfterStart } from './settle.js';
import { checkStartFiles } from './start-checks.js';
import { StoreCounters } from './store-counters.js';

export type Mode = 'local' | 'edge';

/** The install directory (the checkout or package root, the single executable's folder): crash dumps show paths relative to it. */
export { INSTALL_DIR };

/**
 * The components each mode runs, in start order; later parts of Svc plug in here. `access` is the
 * pollers' checked client certificate (checkPlatformAccess). What the parts count is registered with
 * `observed`, which the metrics endpoint reads at each scrape and the health endpoint at each probe.
 * A part whose libraries are large is imported only when the config switches it on (the metrics
 * endpoint's prom-client here; the cloud forwarding in platform-pipeline.ts): a process carries only
 * the code of what it runs (docs/architecture.md "Memory").
 */
export async function composeComponents(
  ctx: AppContext,
  mode: Mode,
  access: PlatformAccess,
  observed = new Observed(),
): Promise<Component[]> {
  const components: Component[] = [];
  observed.clientCertificate = access.tls ? { file: access.tls.files.cert, validTo: access.tls.validTo } : null;
  // First to start, last to stop: Svc can be scraped while the others start and stop. Its pollSink
  // goes to the pollers, whose schedules are registered with `observed.pollGroup`.
  const metrics = ctx.config.metricsEndpoint.enable
    ? (await import('../endpoints/metrics/compose.js')).metricsEndpoint(ctx, observed)
    : null;
  if (metrics) components.push(metrics.component);
  // Also first: while the others start (and stop) it answers 503 naming the listeners not bound yet.
  const health = healthEndpoint(ctx, observed);
  if (health) components.push(health);
  // The config view and the status page: it reads what `observed` names, and its pollSink keeps the servers' last hour.
  const web = webView(ctx, { observed, mode, installDir: INSTALL_DIR });
  if (web) components.push(web.component);
  const pollSinks = [...(metrics ? [metrics.pollSink] : []), ...(web ? [web.pollSink] : [])];
  // The embedded store: opened here (a file it cannot use stops the start with a line naming it),
  // started before the queues that write to it and stopped after them.
  const store = await openStore(ctx);
  if (store) components.push(store);
  // The alert engine: after the store (it keeps its state in the same file, and stops before it);
  // its facts' PollSink joins the pollers' sinks before the pollers are built.
  // The process's one MQTT client, which the MQTT destination and the alerts' mqtt channels share:
  // started before both, stopped after both.
  const pipelineWanted = platformPipelineWanted(ctx.config);
  const mqtt = processMqttWriter(ctx, {
    destination: pipelineWanted && platformMqttWanted(platformOutputs(ctx.config)),
    alertChannel: alertsUseMqtt(ctx.config, store !== null),
  });
  if (mqtt) components.push(mqtt);
  const alerts = alertComponents(ctx, { observed, storeOn: store !== null, mqtt });
  if (alerts) {
    openAlertStore(ctx, alerts.engine);
    pollSinks.push(alerts.pollSink);
    components.push(...alerts.components);
  }
  if (mode === 'local') {
    const audit = localAuditComponents(ctx, store);
    if (audit) observed.queue({ name: 'audit', queue: audit.queue, destinations: audit.destinations });
    components.push(...(audit?.components ?? []));
  }
  // Every platform source writes through one pipeline, which starts before them and stops after;
  // so does the error tracking (its svc_errors points), which stops after the sources.
  // Only `svc edge` forwards to the cloud (Svc.cloud); `svc local` runs every destination itself.
  if (mode === 'local' && ctx.config.cloud.enable)
    ctx.logger.warn(
      { config: 'Svc.cloud.enable' },
      'Svc.cloud.enable is true, but svc local does not forward to the cloud: it writes every destination itself (forwarding is for svc edge)',
    );
  const pipeline = pipelineWanted ? await platformPipeline(ctx, { forward: mode === 'edge', store, mqtt }) : null;
  if (pipeline?.queue) observed.queue({ name: 'platform', queue: pipeline.queue, destinations: pipeline.destinations });
  components.push(...(pipeline?.components ?? []), ...errorTrackingComponents(ctx, pipeline?.queue ?? null));
  // System info, telemetry, heartbeat, uptime monitor: after the pipeline, which takes Svc's memory points.
  components.push(...selfReportComponents(ctx, pipeline?.queue ?? null));
  if (pipeline && platformSourcesOn(ctx.config)) {
    // The pollers start before the listeners, so that user and log events find the app list (§1.4, §2.4).
    const pollers = platformPollers(ctx, { access, pipeline, sinks: pollSinks });
    if (pollers?.health) observed.pollGroup('health', pollers.health);
    if (pollers?.sessions) observed.pollGroup('sessions', pollers.sessions);
    components.push(...(pollers?.components ?? []));
    const udp = udpComponents(ctx, { appNames: pollers?.appNames ?? NO_APP_NAMES, pipeline });
    for (const listener of Object.values(udp?.listeners ?? {})) observed.listener(listener);
    observed.logEvents = udp?.logLevels ?? null;
    components.push(...(udp?.components ?? []));
  }
  // Last to start, first to stop: its last sample is written while the store is still open.
  if (store) components.push(new StoreCounters(store, observed, ctx.logger));
  return components;
}

/** The process's embedded store, open; null when `Svc.store.enable` is off. A file it cannot open is a StartupError naming the key. */
async function openStore(ctx: AppContext): Promise<StoreComponent | null> {
  const store = storeComponent(ctx);
  try {
    await store?.open();
  } catch (err) {
    throw new StartupError(`${ctx.configFile} Svc.store.path: ${err instanceof Error ? err.message : String(err)}`);
  }
  return store;
}

/** Opens the alert engine's store; a file it cannot use is a StartupError naming the key. */
function openAlertStore(ctx: AppContext, engine: AlertEngine): void {
  try {
    engine.open();
  } catch (err) {
    throw new StartupError(
      `${ctx.configFile} Svc.store.path (alerts): ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/**
 * A start-up problem the operator fixes in the environment or the config (not a bug): printed as one
 * line naming the key, without a stack, and the process exits 1.
 */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** The logger of the config; an unusable log directory is a StartupError naming the key and the path. */
async function startLogging(loaded: LoadedConfig, secrets: string[]): Promise<LoggerHandle> {
  const { config } = loaded;
  try {
    return await createLogger({
      level: config.logLevel,
      fileLogging: config.fileLogging,
      logDirectory: config.logDirectory,
      secrets,
    });
  } catch (err) {
    if (!(err instanceof LogDirectoryError)) throw err;
    throw new StartupError(`${loaded.file} Svc.logDirectory: ${err.message} (Svc.fileLogging is true)`);
  }
}

export interface BootOptions {
  /** Started after the mode's components and stopped before them (`svc demo`: the simulated traffic). */
  after?: readonly Component[];
}

/**
 * Runs the service until a signal stops it; resolves to the process exit code. Rejects before
 * anything runs: with ConfigError when a poller's certificate or host cannot be used (as
 * `svc validate-config` reports it), with StartupError for the log directory.
 */
export async function boot(loaded: LoadedConfig, mode: Mode, options: BootOptions = {}): Promise<number> {
  const { config } = loaded;
  const checked = await checkStartFiles(config);
  if (checked.access === null) throw accessConfigError(loaded.file, checked.problems);
  const access = checked.access;
  const secrets = secretValues(config);
  const logging = await startLogging(loaded, secrets);
  const { logger } = logging;
  const exit = (code: number) => {
    logging.flush();
    process.exit(code);
  };
  installCrashHandlers({
    getInput: () => ({
      settings: config.crashFile,
      summary: crashConfigSummary(config),
      installDir: INSTALL_DIR,
      secrets,
    }),
    log: logger,
    exit,
  });
  const how = { option: '--config', SVC_CONFIG: 'the SVC_CONFIG variable', default: 'the default location' }[
    loaded.source
  ];
  logger.info(
    { file: loaded.absoluteFile, chosenBy: loaded.source },
    `loaded configuration from ${loaded.absoluteFile} (chosen by ${how})`,
  );
  for (const warning of loaded.warnings) logger.warn({ config: loaded.file }, warning);
  for (const warning of loaded.notBuilt) logger.warn({ config: loaded.file, notBuilt: true }, warning);
  for (const warning of checked.warnings) logger.warn({ config: loaded.file }, accessWarning(warning));
  // Before any component is built: every outbound call and agent goes through it (docs/deployment.md).
  try {
    installProxy(resolveProxy(config.proxy, process.env), logger);
  } catch (err) {
    throw new StartupError(`${loaded.file} Svc.proxy: ${err instanceof Error ? err.message : String(err)}`);
  }

  const errors = new ErrorTracker({
    enabled: config.errorTracking.enable,
    logSummary: config.errorTracking.logSummary.enable,
    log: logger,
  });
  const ctx: AppContext = { config, configFile: loaded.absoluteFile, logger, errors, clock: new PointClock() };
  const lifecycle = new Lifecycle({ log: logger });
  for (const component of [...(await composeComponents(ctx, mode, access)), ...(options.after ?? [])])
    lifecycle.add(component);

  return new Promise<number>((resolve) => {
    exitOnSignals(lifecycle, {
      log: logger,
      exit: (code) => {
        logging.flush();
        resolve(code);
      },
    });
    lifecycle.start().then(
      () => {
        logger.info(
          { mode, version: SVC_VERSION, components: lifecycle.names, pid: process.pid },
          `svc ${mode} ${SVC_VERSION} running (${lifecycle.names.length} component${lifecycle.names.length === 1 ? '' : 's'}: ${lifecycle.names.join(', ') || 'none yet'})`,
        );
        collectAfterStart(logger);
      },
      (err: unknown) => {
        logger.error({ err }, `svc ${mode} failed to start`);
        logging.flush();
        resolve(EXIT_ERROR);
      },
    );
  });
}

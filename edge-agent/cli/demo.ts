/**
 * `svc demo`: the whole product on one machine with nothing else installed. It starts the platform
 * simulator (simulated servers' health, session and app-list APIs over mutual TLS), writes a config
 * that is `config/demo.yaml` (or `--config`) plus the sections that poll the simulator, and runs
 * `svc local` on it, with the simulator's log appenders sending user and log events over UDP and its
 * browser audit client posting audit events. Stops on Ctrl-C or SIGTERM like `svc local`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Command } from 'commander';
import { Document, parse } from 'yaml';
import { logListenerEnabled } from '../../shared/config/outputs.js';
import { auditDestinationTypes } from '../../shared/config/rules.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { EXIT_ERROR, EXIT_USAGE } from '../../shared/runtime/exit-codes.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { INSTALL_DIR, isSingleExecutable, readAsset } from '../../shared/runtime/single-executable.js';
import { numberArg } from '../simulate/cli-common.js';
import { LOG_KINDS, type SimulateKind, USER_KINDS } from '../simulate/messages.js';
import { type AuditDriveStats, driveAudit } from '../simulate/platform/audit.js';
import { failArg } from '../simulate/platform/command.js';
import type { FailureMode } from '../simulate/platform/failures.js';
import { MAX_SERVERS, simulatorOptionProblems } from '../simulate/platform/options.js';
import { type PlatformSimulator, startPlatformSimulator } from '../simulate/platform/server.js';
import { driveUdp } from '../simulate/platform/udp.js';
import { MAX_RATE, type UdpSendStats } from '../simulate/udp-sender.js';
import type { CliIo } from './io.js';
import { loadForCli, runService } from './run.js';

interface DemoCliOptions {
  config: string;
  dir: string;
  servers: number;
  udpRate: number;
  auditRate: number;
  report: number;
  fail: Record<string, FailureMode>;
  seed?: number;
}

/** The base config shipped with Svc. */
export const DEMO_CONFIG = join(INSTALL_DIR, 'config', 'demo.yaml');
/** The single executable's asset key of that file (scripts/release/executables.mjs). */
export const DEMO_CONFIG_ASSET = 'config/demo.yaml';
/** The config the demo writes (the base plus the simulator's sections), in `--dir`. */
export const DEMO_CONFIG_NAME = 'svc-demo.yaml';

const count = (max: number) => numberArg(`must be an integer 1–${max}`, 1, max, false, true);
const rate = numberArg(`must be a number ≥ 0 and ≤ ${MAX_RATE} (0 = none)`, 0, MAX_RATE, false);

export function registerDemoCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  program
    .command('demo')
    .description(
      'run Svc locally against the platform simulator: it polls simulated servers over mutual TLS, receives their user and log events over UDP and their audit events over HTTP, and serves the metrics endpoint; no external server needed',
    )
    .option('-c, --config <file>', 'base config; the demo adds the sections that poll the simulator', DEMO_CONFIG)
    .option(
      '--dir <dir>',
      "folder for the simulator's certificates and the config the demo writes",
      join('data', 'demo'),
    )
    .option('--servers <n>', `simulated servers, 1–${MAX_SERVERS}`, count(MAX_SERVERS), 3)
    .option('--udp-rate <n>', 'datagrams per second to each UDP listener that is on (0 = none)', rate, 10)
    .option('--audit-rate <n>', 'audit events per second to the audit API when it is on (0 = none)', rate, 1)
    .option(
      '--report <s>',
      'seconds between progress lines (0 = none)',
      numberArg('must be an integer 0–3600', 0, 3600, false, true),
      15,
    )
    .option(
      '--fail <target=mode>',
      'fail a simulated server (or "apps", "all") from the start: http-500, timeout, bad-body, cert-reject',
      failArg,
      {},
    )
    .option(
      '--seed <n>',
      'seed of the simulated platform and traffic; default random',
      numberArg('must be an integer between 0 and 4294967295', 0, 4_294_967_295, false, true),
    )
    .addHelpText(
      'after',
      `
Within a minute of the start:
  http://127.0.0.1:3100/status (in a browser)                   the live status page
  http://127.0.0.1:3100/servers, /logs, /performance              the history pages (from the embedded store)
  http://127.0.0.1:3100/alerts                                    the alerts firing, their history and silences
  curl -s http://127.0.0.1:9842/metrics | grep svc_cpu_total     every simulated server's gauges
  ls data/demo/audit-events/parquet data/demo/audit-events/json   the audit events
The config it runs is written to <dir>/${DEMO_CONFIG_NAME}; the certificates to <dir>/certs.`,
    )
    .action(async (opts: DemoCliOptions) => {
      setExitCode(await runDemo(opts, io));
    });
}

/** Where a listener bound to `host` is reached from this machine: the wildcard addresses by loopback. */
function reachable(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '::1';
  return host;
}

/**
 * What the demo turns on once the simulator's app list is there (its `appNames` section): engine
 * performance events carry their app's name, so the store's costliest apps are named.
 */
const WITH_APP_NAMES = { Svc: { logEvents: { enginePerformanceMonitor: { appNameLookup: { enable: true } } } } };

/** The base config with the simulator's sections merged in (the simulator's values win), and WITH_APP_NAMES. */
export function demoConfig(base: unknown, sim: PlatformSimulator): Record<string, unknown> {
  const merge = (into: unknown, from: unknown): unknown => {
    if (!isRecord(into) || !isRecord(from)) return from;
    const out: Record<string, unknown> = { ...into };
    for (const [key, value] of Object.entries(from)) out[key] = merge(into[key], value);
    return out;
  };
  const merged = merge(merge(base, sim.config), WITH_APP_NAMES);
  if (!isRecord(merged)) throw new Error('unreachable: the simulator config is an object');
  return merged;
}

/** The web view's pages: the status page, and the history pages when the store keeps history. */
function webLines(config: SvcConfig): string[] {
  const base = `http://${reachable(config.configVisualisation.host)}:${config.configVisualisation.port}`;
  return [
    `  status page: ${base}/status`,
    ...(config.store.enable
      ? [`  history: ${base}/servers, /logs, /users, /performance, /audit (kept in ${config.store.path})`]
      : []),
    ...(config.store.enable && config.alerts.enable
      ? [
          `  alerts: ${base}/alerts (the built-in rules${config.alerts.channels.length === 0 ? '; no channel: add Svc.alerts.channels to send them' : ''})`,
        ]
      : []),
  ];
}

/** Where the config keeps what Svc receives: the queue, and the audit files when those writers are on. */
function dataFolders(config: SvcConfig): [string, string][] {
  const folders: [string, string][] = [['queue', config.localQueue.directory]];
  const destination = config.auditEvents.destination;
  if (!config.auditEvents.enable || !destination.enable) return folders;
  const types = auditDestinationTypes(destination.type);
  if (types.includes('parquet')) folders.push(['audit events (parquet)', destination.parquet.exportDirectory]);
  if (types.includes('json') && destination.json.objectdata.enable)
    folders.push(['audit events (json)', destination.json.objectdata.exportDirectory]);
  return folders;
}

/**
 * The base config's text. The single executable has no `config/` folder beside it: unless `--config`
 * names another file, it uses the copy of `config/demo.yaml` it carries.
 */
function readBaseConfig(file: string): string {
  if (file === DEMO_CONFIG && isSingleExecutable()) return readAsset(DEMO_CONFIG_ASSET).toString('utf8');
  return readFileSync(file, 'utf8');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

async function runDemo(opts: DemoCliOptions, io: CliIo): Promise<number> {
  const problems = simulatorOptionProblems(
    { servers: opts.servers, failures: opts.fail, ...(opts.seed === undefined ? {} : { seed: opts.seed }) },
    (key) => `--${key}`,
  );
  if (problems.length > 0) {
    for (const problem of problems) io.err(`error: ${problem}\n`);
    return EXIT_USAGE;
  }
  let base: unknown;
  try {
    base = parse(readBaseConfig(opts.config));
  } catch (err) {
    io.err(
      `svc: demo: cannot read the base config ${opts.config}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    return EXIT_ERROR;
  }
  if (!isRecord(base) || !isRecord(base['Svc'])) {
    io.err(`svc: demo: the base config ${opts.config} must be a YAML mapping with the root key Svc\n`);
    return EXIT_ERROR;
  }

  const dir = resolve(opts.dir);
  io.err(`svc demo: starting ${opts.servers} simulated platform server(s); certificates in ${join(dir, 'certs')}\n`);
  let sim: PlatformSimulator;
  try {
    mkdirSync(dir, { recursive: true });
    sim = await startPlatformSimulator({
      servers: opts.servers,
      certDir: join(dir, 'certs'),
      failures: opts.fail,
      ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    });
  } catch (err) {
    io.err(`svc: demo: cannot start the platform simulator: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_ERROR;
  }
  try {
    const file = join(dir, DEMO_CONFIG_NAME);
    const doc = new Document(demoConfig(base, sim));
    doc.commentBefore = ` Written by \`svc demo\` (seed ${sim.seed}): ${opts.config} plus the sections that poll the simulator.\n Rewritten at every start, as the simulator's ports change.`;
    writeFileSync(file, doc.toString({ lineWidth: 0 }));
    io.err(`svc demo: wrote the config to ${file}\n`);
    const loaded = loadForCli(file, io);
    if (!loaded) return EXIT_ERROR;
    const traffic = new SimulatedTraffic(sim, loaded.config, opts, io);
    return await runService(loaded, 'local', io, { after: [traffic] });
  } finally {
    await sim.stop();
    const { stats } = sim.status();
    io.err(
      `svc demo: stopped; the simulator answered ${stats.health.ok} health, ${stats.sessions.ok} session and ${stats.apps.ok} app-list requests\n`,
    );
  }
}

/**
 * The simulator's clients, as one component that starts after Svc's and stops before them: UDP
 * user and log events to the listeners that are on, audit events to the audit API, and a progress
 * line every `--report` seconds.
 */
class SimulatedTraffic implements Component {
  readonly name = 'simulated traffic';
  private readonly controller = new AbortController();
  private runs: Promise<unknown>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly audit: AuditDriveStats = { sent: 0, byStatus: {}, failed: 0 };
  private readonly udp: { label: string; stats?: UdpSendStats; error?: string }[] = [];

  constructor(
    private readonly sim: PlatformSimulator,
    private readonly config: SvcConfig,
    private readonly opts: DemoCliOptions,
    private readonly io: CliIo,
  ) {}

  start(): Promise<void> {
    const { config, sim, opts, controller } = this;
    const signal = controller.signal;
    const targets: [boolean, string, number, readonly SimulateKind[], string][] = [
      [
        config.userEvents.enable,
        config.userEvents.udpServerConfig.serverHost,
        config.userEvents.udpServerConfig.portUserActivityEvents,
        USER_KINDS,
        'user events',
      ],
      [
        logListenerEnabled(config),
        config.logEvents.udpServerConfig.serverHost,
        config.logEvents.udpServerConfig.portLogEvents,
        LOG_KINDS,
        'log events',
      ],
    ];
    const lines: string[] = [];
    for (const [on, host, port, kinds, label] of targets) {
      if (!on || opts.udpRate === 0) continue;
      const entry: (typeof this.udp)[number] = { label };
      this.udp.push(entry);
      const to = reachable(host);
      lines.push(`  ${label}: ${opts.udpRate}/s over UDP to ${to}:${port}`);
      this.runs.push(
        driveUdp({ pool: sim.pool, seed: sim.seed, host: to, port, rate: opts.udpRate, kinds, signal }).then(
          (stats) => (entry.stats = stats),
          (err: unknown) => (entry.error = err instanceof Error ? err.message : String(err)),
        ),
      );
    }
    const audit = config.auditEvents;
    if (audit.enable && opts.auditRate > 0) {
      const origin = `http://${reachable(audit.host).includes(':') ? `[${reachable(audit.host)}]` : reachable(audit.host)}:${audit.port}`;
      lines.push(`  audit events: ${opts.auditRate}/s to ${origin}/api/v1/audit-event`);
      this.runs.push(
        driveAudit(
          {
            pool: sim.pool,
            seed: sim.seed,
            origin,
            rate: opts.auditRate,
            signal,
            ...(audit.apiToken ? { token: audit.apiToken } : {}),
          },
          this.audit,
        ),
      );
    }
    const metrics = config.metricsEndpoint;
    const out = [
      `svc demo: running: ${sim.servers.length} simulated server(s) polled over mutual TLS (health every ${config.serversToMonitor.pollingInterval / 1000} s)`,
      ...lines,
      metrics.enable
        ? `  metrics: curl -s http://${reachable(metrics.host)}:${metrics.port}/metrics`
        : '  metrics endpoint: off in this config',
      ...(config.configVisualisation.enable ? webLines(config) : []),
      ...dataFolders(config).map(([what, folder]) => `  ${what}: ${folder}`),
      '  Ctrl-C stops',
    ];
    this.io.err(`${out.join('\n')}\n`);
    if (opts.report > 0)
      this.timer = setInterval(() => this.io.err(`${this.progress()}\n`), opts.report * 1000).unref();
    return Promise.resolve();
  }

  /** One line: what the simulator served, what was sent, what the audit API answered. */
  progress(): string {
    const { stats } = this.sim.status();
    const api = (name: string, s: { ok: number; failed: number; rejected: number }) =>
      `${name} ${s.ok} ok${s.failed + s.rejected > 0 ? ` (${s.failed} failed on purpose, ${s.rejected} refused)` : ''}`;
    const udp = this.udp.map((u) => (u.error === undefined ? `${u.label} sending` : `${u.label} stopped: ${u.error}`));
    const answered =
      Object.entries(this.audit.byStatus)
        .map(([status, n]) => `${n}×${status}`)
        .join(', ') || 'none yet';
    return (
      `svc demo: polls answered: ${api('health', stats.health)}, ${api('sessions', stats.sessions)}, ${api('app list', stats.apps)}; ` +
      `${udp.join(', ') || 'no UDP'}; audit events ${this.audit.sent} posted (${answered})${this.audit.failed > 0 ? `, ${this.audit.failed} without answer (${this.audit.lastProblem ?? ''})` : ''}`
    );
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.controller.abort();
    await Promise.all(this.runs);
    const sent = this.udp.map((u) => `${u.stats?.sent ?? 0} ${u.label}`).join(', ');
    this.io.err(`svc demo: sent ${sent || 'no UDP datagrams'} and ${this.audit.sent} audit events\n`);
  }
}

/**
 * `svc simulate platform`: runs the platform simulator (server.ts) until Ctrl-C, SIGTERM or
 * `--duration`, prints the Svc config that polls it on stdout (so `> sim.yaml` captures exactly
 * the config) and everything else on stderr, and can send matching user and log events over UDP.
 * Exit codes: 0 after a run, 1 when a port cannot be bound, the certificate folder cannot be
 * written or a UDP target cannot be reached, 2 on an invalid option.
 */
import { performance } from 'node:perf_hooks';
import { type Command, InvalidArgumentError } from 'commander';
import { EXIT_ERROR, EXIT_OK, EXIT_USAGE } from '../../../shared/runtime/exit-codes.js';
import type { CliIo } from '../../cli/io.js';
import { numberArg, summaryLine, type Target, targetArg } from '../cli-common.js';
import { DEFAULT_PORTS, LOG_KINDS, type SimulateKind, USER_KINDS } from '../messages.js';
import { MAX_RATE, type UdpSendStats } from '../udp-sender.js';
import { APP_LIST_DEFAULT_PORT } from './config.js';
import { ALL_TARGETS, APP_LIST_TARGET, FAILURE_MODES, type FailureMode, isFailureMode } from './failures.js';
import {
  CLI_PORTS,
  MAX_APPS,
  MAX_SERVERS,
  MAX_STEP_MS,
  MAX_USERS,
  type OptionLabel,
  type PlatformSimulatorOptions,
  SIMULATOR_DEFAULTS,
  simulatorOptionProblems,
} from './options.js';
import { type PlatformSimulator, startPlatformSimulator } from './server.js';
import type { ApiStats } from './status.js';
import { driveUdp } from './udp.js';

/** Largest `--duration`, s: Node's timers hold about 24.8 days. */
const MAX_DURATION_S = 2_000_000;

interface PlatformCliOptions {
  servers: number;
  host: string;
  basePort: number;
  proxyBasePort: number;
  appPort: number;
  virtualProxies: string[];
  users: number;
  apps: number;
  certDir?: string;
  passphrase?: string;
  fail: Record<string, FailureMode>;
  controlPort?: number;
  seed?: number;
  step: number;
  duration?: number;
  udpTarget?: Target;
  udpLogTarget?: Target;
  udpRate: number;
}

/** The CLI's name of each programmatic option, for the problems simulatorOptionProblems finds. */
const CLI_LABELS: Record<keyof PlatformSimulatorOptions, string> = {
  servers: '--servers',
  host: '--host',
  basePort: '--base-port',
  proxyBasePort: '--proxy-base-port',
  appPort: '--app-port',
  virtualProxies: '--virtual-proxies',
  users: '--users',
  apps: '--apps',
  seed: '--seed',
  stepMs: '--step',
  startMs: 'the start time',
  certDir: '--cert-dir',
  passphrase: '--passphrase',
  failures: '--fail',
  controlPort: '--control-port',
};
const cliLabel: OptionLabel = (key) => CLI_LABELS[key];

const port = (what: string) =>
  numberArg(`must be a port 0–65535 (0 = a free port the OS picks) for ${what}`, 0, 65535, false, true);
const count = (max: number) => numberArg(`must be an integer 1–${max}`, 1, max, false, true);

function listArg(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

/** `--fail node2=timeout,apps=http-500`, repeatable: the target is checked once the server count is known. */
export function failArg(value: string, previous: Record<string, FailureMode>): Record<string, FailureMode> {
  const next = { ...previous };
  for (const item of listArg(value)) {
    const [, target, mode] = /^([^=\s]+)\s*=\s*(\S+)$/.exec(item) ?? [];
    if (target === undefined || mode === undefined)
      throw new InvalidArgumentError(`expected <target>=<mode>, e.g. node2=timeout (got ${JSON.stringify(item)})`);
    if (!isFailureMode(mode))
      throw new InvalidArgumentError(`mode ${JSON.stringify(mode)} is not one of ${FAILURE_MODES.join(', ')}`);
    next[target] = mode;
  }
  return next;
}

const HELP_AFTER = `
Each simulated server (node1, node2, …) answers the health API GET /engine/healthcheck on
--base-port + i and the session API GET /qps<vp>/session?Xrfkey=<key> on --proxy-base-port + i;
the app list GET /qrs/app?xrfkey=<key> is on --app-port. All over HTTPS with client certificates
(mutual TLS) from --cert-dir. Port 0 gives every listener a free port the OS picks.

The Svc config that polls the simulator is printed on stdout; everything else goes to stderr:
  svc simulate platform --seed 42 > sim.yaml
Svc calls the app list on port ${APP_LIST_DEFAULT_PORT} unless appNames.hostIP names another (127.0.0.1:<port>).

Failure modes (--fail <target>=<mode>, and the control endpoint while running):
  http-500     answers 500
  timeout      never answers (the request is held until the client gives up)
  bad-body     answers 200 with JSON that is not the API's shape
  cert-reject  requires a client certificate from another CA (Svc's is refused in the handshake)
A target is a server name, "${APP_LIST_TARGET}" (the app list) or "${ALL_TARGETS}".
With --control-port: curl -X POST http://127.0.0.1:<port>/fail/node2/timeout, …/heal/node2, …/heal

Examples:
  svc simulate platform --servers 3 --seed 42 --cert-dir ./sim-certs > sim.yaml
  svc simulate platform --base-port 0 --proxy-base-port 0 --app-port 0 --control-port 4799 --fail node2=timeout
  svc simulate platform --udp-target 127.0.0.1:${DEFAULT_PORTS.user} --udp-log-target 127.0.0.1:${DEFAULT_PORTS.log} --udp-rate 20
`;

/** Registers `platform` under the `simulate` command. */
export function registerSimulatePlatformCommand(
  simulate: Command,
  io: CliIo,
  setExitCode: (code: number) => void,
): void {
  simulate
    .command('platform')
    .description(
      'serve the platform APIs Svc polls (health, sessions, app list) over mutual TLS for simulated servers, and print the Svc config that polls them',
    )
    .option('--servers <n>', `simulated servers, 1–${MAX_SERVERS}`, count(MAX_SERVERS), SIMULATOR_DEFAULTS.servers)
    .option('--host <address>', 'IPv4 address to listen on and to name in the config', SIMULATOR_DEFAULTS.host)
    .option(
      '--base-port <port>',
      'health API of server i on base-port + i (0 = free ports)',
      port('--base-port'),
      CLI_PORTS.basePort,
    )
    .option(
      '--proxy-base-port <port>',
      'session API of server i on proxy-base-port + i (0 = free ports)',
      port('--proxy-base-port'),
      CLI_PORTS.proxyBasePort,
    )
    .option('--app-port <port>', 'app-list API (0 = a free port)', port('--app-port'), CLI_PORTS.appPort)
    .option('--virtual-proxies <list>', 'comma list of virtual proxies of every server', listArg, [
      ...SIMULATOR_DEFAULTS.virtualProxies,
    ])
    .option('--users <n>', `people in the user directories, 1–${MAX_USERS}`, count(MAX_USERS), SIMULATOR_DEFAULTS.users)
    .option('--apps <n>', `apps in the repository, 1–${MAX_APPS}`, count(MAX_APPS), SIMULATOR_DEFAULTS.apps)
    .option(
      '--cert-dir <dir>',
      'folder for the CA, server and client certificates (a valid set there is reused); default a temporary folder removed at exit',
    )
    .option('--passphrase <text>', 'encrypt the client key with this passphrase (cert.clientCertPassphrase)')
    .option('--fail <target=mode>', 'fail a target from the start (repeatable, or a comma list)', failArg, {})
    .option(
      '--control-port <port>',
      'control endpoint on 127.0.0.1 to fail and heal targets while running (0 = a free port)',
      port('--control-port'),
    )
    .option(
      '--seed <n>',
      'seed 0–4294967295: the same seed and options give the same platform, step by step; default random',
      numberArg('must be an integer between 0 and 4294967295', 0, 4_294_967_295, false, true),
    )
    .option(
      '--step <ms>',
      `the platform moves one step per step ms (0 = never by itself; 10–${MAX_STEP_MS})`,
      numberArg(`must be 0 or an integer 10–${MAX_STEP_MS}`, 0, MAX_STEP_MS, false, true),
      SIMULATOR_DEFAULTS.stepMs,
    )
    .option(
      '--duration <s>',
      `stop after this many seconds (> 0, ≤ ${MAX_DURATION_S}); default: run until Ctrl-C`,
      numberArg(`must be a number of seconds > 0 and ≤ ${MAX_DURATION_S}`, 0, MAX_DURATION_S, true),
    )
    .option(
      '--udp-target <host:port>',
      `send user events (sessions, connections) of the simulated users and apps to this Svc listener (default port ${DEFAULT_PORTS.user})`,
      targetArg,
    )
    .option(
      '--udp-log-target <host:port>',
      `send log events naming the simulated apps to this Svc listener (default port ${DEFAULT_PORTS.log})`,
      targetArg,
    )
    .option(
      '--udp-rate <n>',
      `datagrams per second to each UDP target, > 0 and ≤ ${MAX_RATE}`,
      numberArg(`must be a number > 0 and ≤ ${MAX_RATE}`, 0, MAX_RATE, true),
      10,
    )
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: PlatformCliOptions) => {
      setExitCode(await runSimulatePlatform(opts, io));
    });
}

const apiLine = (name: string, s: ApiStats): string => `${name} ${s.ok} ok, ${s.failed} failed, ${s.rejected} rejected`;

/** The stderr lines that say what runs where. */
function banner(sim: PlatformSimulator, opts: PlatformCliOptions, stepMs: number): string {
  const lines = [
    `svc simulate platform: ${sim.servers.length} server${sim.servers.length === 1 ? '' : 's'} on ${sim.host}, seed ${sim.seed}, ` +
      (stepMs === 0 ? 'moving only on POST /step' : `one step per ${stepMs} ms`) +
      (opts.duration === undefined ? '; Ctrl-C stops' : `; stops after ${opts.duration} s`),
  ];
  const shown = sim.servers.slice(0, 10);
  for (const s of shown)
    lines.push(`  ${s.name}  health ${s.healthUrl}  sessions ${Object.values(s.sessionUrls).join(' ')}`);
  if (sim.servers.length > shown.length)
    lines.push(`  … and ${sim.servers.length - shown.length} more (see the config)`);
  lines.push(`  app list ${sim.appListUrl}`);
  const why = sim.certs.replacedBecause === undefined ? '' : ` (replaced the set there: ${sim.certs.replacedBecause})`;
  lines.push(
    `  certificates ${sim.certs.reused ? 'reused from' : 'written to'} ${sim.certs.directory}${why}${sim.certs.passphrase === '' ? '' : '; the client key is passphrase-protected'}`,
  );
  const failing = Object.entries(sim.status().modes).filter(([, mode]) => mode !== 'ok');
  if (failing.length > 0) lines.push(`  failing: ${failing.map(([target, mode]) => `${target} ${mode}`).join(', ')}`);
  if (sim.controlUrl !== undefined)
    lines.push(
      `  control ${sim.controlUrl}: POST /fail/<target>/<mode>, POST /heal[/<target>], POST /step[/<n>], GET /`,
    );
  if (opts.udpTarget !== undefined) lines.push(`  user events: ${opts.udpRate}/s to ${where(opts.udpTarget)}`);
  if (opts.udpLogTarget !== undefined) lines.push(`  log events: ${opts.udpRate}/s to ${where(opts.udpLogTarget)}`);
  lines.push('  the Svc config is on stdout');
  return `${lines.join('\n')}\n`;
}

const where = (t: Target): string => (t.family === 6 ? `[${t.host}]:${t.port}` : `${t.host}:${t.port}`);

async function runSimulatePlatform(opts: PlatformCliOptions, io: CliIo): Promise<number> {
  const options: PlatformSimulatorOptions = {
    servers: opts.servers,
    host: opts.host.trim(),
    basePort: opts.basePort,
    proxyBasePort: opts.proxyBasePort,
    appPort: opts.appPort,
    virtualProxies: opts.virtualProxies,
    users: opts.users,
    apps: opts.apps,
    stepMs: opts.step,
    failures: opts.fail,
    ...(opts.seed === undefined ? {} : { seed: opts.seed }),
    ...(opts.certDir === undefined ? {} : { certDir: opts.certDir }),
    ...(opts.passphrase === undefined ? {} : { passphrase: opts.passphrase }),
    ...(opts.controlPort === undefined ? {} : { controlPort: opts.controlPort }),
  };
  const problems = simulatorOptionProblems(options, cliLabel);
  if (problems.length > 0) {
    for (const problem of problems) io.err(`error: ${problem}\n`);
    io.err('(run with --help for usage)\n');
    return EXIT_USAGE;
  }
  if (!/^127\./.test(options.host ?? '')) {
    io.err(
      `warning: --host ${options.host ?? ''} is not a loopback address: the simulated APIs can be reached from the network\n`,
    );
  }

  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  let timer: NodeJS.Timeout | undefined;
  try {
    let sim: PlatformSimulator;
    try {
      sim = await startPlatformSimulator(options);
    } catch (err) {
      io.err(`svc: simulate platform: ${err instanceof Error ? err.message : String(err)}\n`);
      return EXIT_ERROR;
    }
    const started = performance.now();
    io.out(sim.configYaml);
    io.err(banner(sim, opts, opts.step));

    let udpFailure: string | undefined;
    const udp = (
      [
        [opts.udpTarget, USER_KINDS],
        [opts.udpLogTarget, LOG_KINDS],
      ] as const
    ).flatMap(([target, kinds]) =>
      target === undefined
        ? []
        : [
            driveUdp({
              pool: sim.pool,
              seed: sim.seed,
              host: target.host,
              port: target.port,
              rate: opts.udpRate,
              kinds,
              signal: controller.signal,
            })
              .then((stats): [Target, readonly SimulateKind[], UdpSendStats] => [target, kinds, stats])
              .catch((err: unknown) => {
                udpFailure ??= `UDP to ${where(target)}: ${err instanceof Error ? err.message : String(err)}`;
                controller.abort();
                return undefined;
              }),
          ],
    );
    if (opts.duration !== undefined) timer = setTimeout(() => controller.abort(), opts.duration * 1000);
    if (!controller.signal.aborted)
      await new Promise((resolve) => controller.signal.addEventListener('abort', resolve, { once: true }));

    const runs = await Promise.all(udp);
    const { step, stats } = sim.status();
    await sim.stop();
    const elapsed = ((performance.now() - started) / 1000).toFixed(3);
    io.err(
      `svc simulate platform: stopped after ${elapsed} s at step ${step}: ${apiLine('health', stats.health)}; ${apiLine('sessions', stats.sessions)}; ` +
        `${apiLine('app list', stats.apps)}; ${stats.notFound} not found; ${stats.tlsRejected} TLS handshakes refused\n`,
    );
    // The UDP runs always end by the stop signal: not "early" here.
    for (const run of runs)
      if (run !== undefined)
        io.err(`${summaryLine({ ...run[2], aborted: false }, run[0], run[1], opts.udpRate, sim.seed)}\n`);
    if (udpFailure !== undefined) {
      io.err(`svc: simulate platform: ${udpFailure}\n`);
      return EXIT_ERROR;
    }
    return EXIT_OK;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

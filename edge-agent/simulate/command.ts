/**
 * `svc simulate udp`: sends generated platform datagrams (messages.ts) to a UDP listener at a paced
 * rate (udp-sender.ts) and prints a one-line summary. Exit codes: 0 after a run, 1 when the target
 * cannot be resolved or no socket can be opened, 2 on an invalid option.
 * `svc simulate platform` is registered here too, from platform/command.ts.
 */
import { randomInt } from 'node:crypto';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { EXIT_ERROR, EXIT_OK } from '../../shared/runtime/exit-codes.js';
import type { CliIo } from '../cli/io.js';
import { numberArg, summaryLine, type Target, targetArg } from './cli-common.js';
import {
  createDatagramGenerator,
  DEFAULT_PORTS,
  DEFAULT_START_MS,
  KIND_FAMILIES,
  kindFamily,
  parseKindList,
  SIMULATE_KINDS,
  type SimulateKind,
} from './messages.js';
import { registerSimulatePlatformCommand } from './platform/command.js';
import { MAX_DURATION_S, MAX_RATE, plannedCount, sendUdp } from './udp-sender.js';

function kindsArg(value: string): SimulateKind[] {
  const result = parseKindList(value);
  if (!result.ok) throw new InvalidArgumentError(result.error);
  return result.kinds;
}

function startArg(value: string): number {
  if (value.trim().toLowerCase() === 'now') return Date.now();
  const ms = /^\d{4}-\d{2}-\d{2}(?:T|$)/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (!Number.isFinite(ms) || ms < Date.UTC(1970, 0, 1) || ms > Date.UTC(9998, 0, 1)) {
    throw new InvalidArgumentError(
      `must be "now" or an ISO 8601 date/time between 1970 and 9997, e.g. 2024-03-12T08:00:00Z (got ${JSON.stringify(value)})`,
    );
  }
  return ms;
}

interface SimulateUdpOptions {
  target: Target;
  rate: number;
  duration: number;
  kinds: SimulateKind[];
  malformed: number;
  seed?: number;
  count?: number;
  start?: number;
}

const HELP_AFTER = `
Kinds: ${SIMULATE_KINDS.join(', ')}.
Families: user = ${KIND_FAMILIES.user.join(',')};
  log = ${KIND_FAMILIES.log.join(',')}; all = every kind.

Svc has two UDP listeners: user kinds go to the user-events port (default ${DEFAULT_PORTS.user},
userEvents.udpServerConfig.portUserActivityEvents), log kinds to the log-events port
(default ${DEFAULT_PORTS.log}, logEvents.udpServerConfig.portLogEvents). A run sends to one
target, so with both families selected one listener counts the other family as unknown
(a warning says so): run once per family instead.
The summary line (stdout) gives the datagrams sent per kind, the malformed ones, the
achieved rate and the seed; Ctrl-C stops early and still prints it.

Examples:
  svc simulate udp --target 127.0.0.1:${DEFAULT_PORTS.user} --kinds user --rate 50 --duration 30
  svc simulate udp --target 127.0.0.1:${DEFAULT_PORTS.log} --kinds log --rate 1000 --duration 60 --seed 42
  svc simulate udp --target [::1]:${DEFAULT_PORTS.log} --kinds engine,qix-perf --malformed 0.05 --count 500
`;

/** Registers `simulate udp` and `simulate platform` on the program. */
export function registerSimulateCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  const simulate = program.command('simulate').description('generate platform traffic for tests, benchmarks and demos');
  simulate
    .command('udp')
    .description(
      `send generated platform UDP datagrams to a Svc listener (user kinds → port ${DEFAULT_PORTS.user}, log kinds → port ${DEFAULT_PORTS.log})`,
    )
    .requiredOption(
      '--target <host:port>',
      `listener address: IPv4, host name or [IPv6], with the port (user events ${DEFAULT_PORTS.user}, log events ${DEFAULT_PORTS.log})`,
      targetArg,
    )
    .option(
      '--rate <n>',
      `datagrams per second, > 0 and ≤ ${MAX_RATE}`,
      numberArg(`must be a number > 0 and ≤ ${MAX_RATE}`, 0, MAX_RATE, true),
      100,
    )
    .option(
      '--duration <s>',
      `seconds to send for, > 0 and ≤ ${MAX_DURATION_S}`,
      numberArg(`must be a number of seconds > 0 and ≤ ${MAX_DURATION_S}`, 0, MAX_DURATION_S, true),
      10,
    )
    .addOption(
      new Option('--kinds <list>', 'comma list of kinds and families (see below)')
        .argParser(kindsArg)
        .default([...SIMULATE_KINDS], 'all'),
    )
    .option(
      '--malformed <fraction>',
      'fraction 0–1 of malformed datagrams',
      numberArg('must be a fraction between 0 and 1', 0, 1, false),
      0,
    )
    .option(
      '--seed <n>',
      'PRNG seed (integer 0–4294967295): the same seed and options give the same datagrams; default random',
      numberArg('must be an integer between 0 and 4294967295', 0, 4_294_967_295, false, true),
    )
    .option(
      '--count <n>',
      'stop after n datagrams',
      numberArg('must be a positive integer', 0, Number.MAX_SAFE_INTEGER, true, true),
    )
    .option(
      '--start <time>',
      `start of the simulated clock of the event timestamps: "now" or an ISO 8601 time; default ${new Date(DEFAULT_START_MS).toISOString()} with --seed (reproducible), else now`,
      startArg,
    )
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: SimulateUdpOptions) => {
      setExitCode(await runSimulateUdp(opts, io));
    });
  registerSimulatePlatformCommand(simulate, io, setExitCode);
}

async function runSimulateUdp(opts: SimulateUdpOptions, io: CliIo): Promise<number> {
  const { target, rate, duration, kinds, malformed, count } = opts;
  const families = new Set(kinds.map(kindFamily));
  if (families.size > 1) {
    io.err(
      `warning: --kinds mixes user kinds (listener port ${DEFAULT_PORTS.user}) and log kinds (listener port ${DEFAULT_PORTS.log}); ` +
        `all go to ${target.port}, so that listener counts the other family as unknown\n`,
    );
  } else {
    const family = families.has('user') ? 'user' : 'log';
    const other = family === 'user' ? 'log' : 'user';
    if (target.port === DEFAULT_PORTS[other]) {
      io.err(
        `warning: ${family} kinds go to the ${family}-events port (default ${DEFAULT_PORTS[family]}); port ${target.port} is the default ${other}-events port\n`,
      );
    }
  }
  if (plannedCount(rate, duration, count) === 0)
    io.err(`warning: --rate ${rate} for --duration ${duration} s sends no datagram\n`);

  const seed = opts.seed ?? randomInt(0, 2 ** 32 - 1);
  const startMs = opts.start ?? (opts.seed !== undefined ? DEFAULT_START_MS : Date.now());
  const source = createDatagramGenerator({ seed, kinds, malformed, startMs, stepMs: 1000 / rate });

  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const stats = await sendUdp({
      host: target.host,
      port: target.port,
      rate,
      durationS: duration,
      source,
      signal: controller.signal,
      ...(count === undefined ? {} : { count }),
    });
    io.out(`${summaryLine(stats, target, kinds, rate, seed)}\n`);
    return EXIT_OK;
  } catch (err) {
    io.err(`svc: simulate udp: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_ERROR;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

/**
 * `svc simulate udp`: sends generated platform datagrams (messages.ts) to a UDP listener at a paced
 * rate (udp-sender.ts) and prints a one-line summary. Exit codes: 0 after a run, 1 when the target
 * cannot be resolved or no socket can be opened, 2 on an invalid option.
 */
import { randomInt } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { EXIT_ERROR, EXIT_OK } from '../../shared/runtime/exit-codes.js';
import type { CliIo } from '../cli/io.js';
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
import { MAX_DURATION_S, MAX_RATE, plannedCount, sendUdp, type UdpSendStats } from './udp-sender.js';

/** A parsed `--target`: the host as given (without brackets), the port, and the IP family of a literal. */
export interface Target {
  host: string;
  port: number;
  /** 4 or 6 for an IP literal, `null` for a host name. */
  family: 4 | 6 | null;
}

const HOST_NAME = /^(?=.{1,253}\.?$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;

/**
 * Parses `host:port`: an IPv4 address, a host name, or an IPv6 address in brackets (`[::1]:9996`).
 * The port is 1–65535. Returns an error text for anything else.
 */
export function parseTarget(text: string): Target | { error: string } {
  const value = text.trim();
  let host: string;
  let portText: string;
  const bracketed = /^\[([^\]]*)\]:(.*)$/.exec(value);
  if (bracketed) {
    host = bracketed[1] ?? '';
    portText = bracketed[2] ?? '';
    if (!isIPv6(host)) return { error: `${JSON.stringify(host)} is not an IPv6 address` };
  } else {
    const colon = value.lastIndexOf(':');
    if (colon === -1) return { error: 'expected host:port (e.g. 127.0.0.1:9996)' };
    host = value.slice(0, colon);
    portText = value.slice(colon + 1);
    if (host.includes(':')) return { error: 'an IPv6 address must be in brackets, e.g. [::1]:9996' };
    if (host === '') return { error: 'the host is missing (expected host:port)' };
    // All digits and dots: must be a real IPv4 address, not a host name.
    if (/^[\d.]+$/.test(host) ? !isIPv4(host) : !HOST_NAME.test(host)) return { error: `${JSON.stringify(host)} is neither an IPv4 address nor a host name` };
  }
  if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
    return { error: `the port must be an integer 1–65535 (got ${JSON.stringify(portText)})` };
  }
  const family = isIPv4(host) ? 4 : isIPv6(host) ? 6 : null;
  return { host, port: Number(portText), family };
}

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/** A commander argument parser for a decimal number within [min, max] (`min` excluded when `minExclusive`). */
function number(what: string, min: number, max: number, minExclusive: boolean, integer = false) {
  return (value: string): number => {
    const n = Number(value.trim());
    const ok = DECIMAL.test(value.trim()) && Number.isFinite(n) && (minExclusive ? n > min : n >= min) && n <= max && (!integer || Number.isInteger(n));
    if (!ok) throw new InvalidArgumentError(`${what} (got ${JSON.stringify(value)})`);
    return n;
  };
}

function targetArg(value: string): Target {
  const target = parseTarget(value);
  if ('error' in target) throw new InvalidArgumentError(target.error);
  return target;
}

function kindsArg(value: string): SimulateKind[] {
  const result = parseKindList(value);
  if (!result.ok) throw new InvalidArgumentError(result.error);
  return result.kinds;
}

function startArg(value: string): number {
  if (value.trim().toLowerCase() === 'now') return Date.now();
  const ms = /^\d{4}-\d{2}-\d{2}(?:T|$)/.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (!Number.isFinite(ms) || ms < Date.UTC(1970, 0, 1) || ms > Date.UTC(9998, 0, 1)) {
    throw new InvalidArgumentError(`must be "now" or an ISO 8601 date/time between 1970 and 9997, e.g. 2024-03-12T08:00:00Z (got ${JSON.stringify(value)})`);
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

const fmtRate = (r: number): string => (Number.isInteger(r) ? String(r) : r.toFixed(2));

/** The one-line summary printed at the end of a run. */
export function summaryLine(stats: UdpSendStats, target: Target, kinds: readonly SimulateKind[], rate: number, seed: number): string {
  const where = target.family === 6 ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
  const perKind = kinds.map((kind) => `${kind} ${stats.perKind[kind]}`).join(', ');
  const errors = stats.sendErrors > 0 ? `, ${stats.sendErrors} send errors (first: ${stats.firstError ?? 'unknown'})` : ', 0 send errors';
  return (
    `sent ${stats.sent} datagrams to ${where} in ${(stats.elapsedMs / 1000).toFixed(3)} s ` +
    `(${stats.achievedRate.toFixed(1)}/s, target ${fmtRate(rate)}/s): ${perKind}, malformed ${stats.malformed}` +
    `${errors}; seed ${seed}${stats.aborted ? '; stopped early' : ''}`
  );
}

/** Registers `simulate udp` on the program. */
export function registerSimulateCommand(program: Command, io: CliIo, setExitCode: (code: number) => void): void {
  program
    .command('simulate')
    .description('generate platform traffic for tests, benchmarks and demos')
    .command('udp')
    .description(`send generated platform UDP datagrams to a Svc listener (user kinds → port ${DEFAULT_PORTS.user}, log kinds → port ${DEFAULT_PORTS.log})`)
    .requiredOption('--target <host:port>', `listener address: IPv4, host name or [IPv6], with the port (user events ${DEFAULT_PORTS.user}, log events ${DEFAULT_PORTS.log})`, targetArg)
    .option('--rate <n>', `datagrams per second, > 0 and ≤ ${MAX_RATE}`, number(`must be a number > 0 and ≤ ${MAX_RATE}`, 0, MAX_RATE, true), 100)
    .option('--duration <s>', `seconds to send for, > 0 and ≤ ${MAX_DURATION_S}`, number(`must be a number of seconds > 0 and ≤ ${MAX_DURATION_S}`, 0, MAX_DURATION_S, true), 10)
    .addOption(new Option('--kinds <list>', 'comma list of kinds and families (see below)').argParser(kindsArg).default([...SIMULATE_KINDS], 'all'))
    .option('--malformed <fraction>', 'fraction 0–1 of malformed datagrams', number('must be a fraction between 0 and 1', 0, 1, false), 0)
    .option('--seed <n>', 'PRNG seed (integer 0–4294967295): the same seed and options give the same datagrams; default random', number('must be an integer between 0 and 4294967295', 0, 4_294_967_295, false, true))
    .option('--count <n>', 'stop after n datagrams', number('must be a positive integer', 0, Number.MAX_SAFE_INTEGER, true, true))
    .option('--start <time>', `start of the simulated clock of the event timestamps: "now" or an ISO 8601 time; default ${new Date(DEFAULT_START_MS).toISOString()} with --seed (reproducible), else now`, startArg)
    .addHelpText('after', HELP_AFTER)
    .action(async (opts: SimulateUdpOptions) => {
      setExitCode(await runSimulateUdp(opts, io));
    });
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
      io.err(`warning: ${family} kinds go to the ${family}-events port (default ${DEFAULT_PORTS[family]}); port ${target.port} is the default ${other}-events port\n`);
    }
  }
  if (plannedCount(rate, duration, count) === 0) io.err(`warning: --rate ${rate} for --duration ${duration} s sends no datagram\n`);

  const seed = opts.seed ?? randomInt(0, 2 ** 32 - 1);
  const startMs = opts.start ?? (opts.seed !== undefined ? DEFAULT_START_MS : Date.now());
  const source = createDatagramGenerator({ seed, kinds, malformed, startMs, stepMs: 1000 / rate });

  const controller = new AbortController();
  const onSignal = (): void => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const stats = await sendUdp({ host: target.host, port: target.port, rate, durationS: duration, source, signal: controller.signal, ...(count === undefined ? {} : { count }) });
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

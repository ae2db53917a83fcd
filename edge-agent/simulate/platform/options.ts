/**
 * The options of the platform simulator: what a program or the CLI may ask for, their defaults and
 * limits, and every problem with them, each naming its option, so the CLI can report them all as
 * usage errors at once and startPlatformSimulator can refuse them before it binds a port.
 */
import { randomInt } from 'node:crypto';
import net from 'node:net';
import {
  ALL_TARGETS,
  APP_LIST_TARGET,
  type FailureMode,
  isFailureMode,
  notAFailureMode,
  serverNames,
  targetHelp,
} from './failures.js';

/** Most simulated servers: it bounds the listening sockets (two per server). */
export const MAX_SERVERS = 2000;
/** Most people in the user directories. */
export const MAX_USERS = 10_000;
/** Most apps in the repository. */
export const MAX_APPS = 10_000;
/** Largest `stepMs`: a day. */
export const MAX_STEP_MS = 86_400_000;
const MAX_SEED = 4_294_967_295;
const MAX_PORT = 65535;

/** Defaults of the programmatic API; the CLI's port defaults are the platform's (CLI_PORTS). */
export const SIMULATOR_DEFAULTS = {
  servers: 3,
  host: '127.0.0.1',
  virtualProxies: ['/', '/hdr'],
  users: 30,
  apps: 12,
  stepMs: 1000,
} as const;

/** The platform's own ports, the CLI's defaults: engine 4747, proxy 4243, repository 4242. */
export const CLI_PORTS = { basePort: 4747, proxyBasePort: 4243, appPort: 4242 } as const;

/** What startPlatformSimulator may be asked for; every field has a default. */
export interface PlatformSimulatorOptions {
  /** Simulated servers, 1–MAX_SERVERS; default 3. */
  servers?: number;
  /** IPv4 address every listener binds to and the config names; default 127.0.0.1. */
  host?: string;
  /** Health API of server i on `basePort + i`; 0 (default) = every listener on a free port the OS picks. */
  basePort?: number;
  /** Session API of server i on `proxyBasePort + i`; 0 (default) = free ports. */
  proxyBasePort?: number;
  /** App-list API port; 0 (default) = a free port. */
  appPort?: number;
  /** Virtual proxy prefixes (`/`, `/hdr`; a trailing `/` is dropped); default `/` and `/hdr`. */
  virtualProxies?: readonly string[];
  /** People in the user directories, 1–MAX_USERS; default 30. */
  users?: number;
  /** Apps in the repository, 1–MAX_APPS; default 12. */
  apps?: number;
  /** Seed, 0–4294967295; default random. */
  seed?: number;
  /** The platform moves one step per `stepMs` of real time; 0 = only when `step()` is called. Default 1000. */
  stepMs?: number;
  /** The simulator's start, ms since the epoch (the servers' `started` lie before it); default now. */
  startMs?: number;
  /** Where the certificates go (a valid set already there is reused); default a new temporary folder, removed by stop(). */
  certDir?: string;
  /** Encrypts the client key with this passphrase (`cert.clientCertPassphrase`); default none. */
  passphrase?: string;
  /** Failures from the start: target (a server name, `apps` or `all`) → mode. */
  failures?: Readonly<Record<string, FailureMode>>;
  /** Port of the control endpoint on 127.0.0.1 (0 = a free port); default none. */
  controlPort?: number;
}

/** The options with every default filled in (a random seed when none is given); only the certificate folder and the control port may stay unset. */
export type ResolvedSimulatorOptions = Required<
  Omit<PlatformSimulatorOptions, 'virtualProxies' | 'certDir' | 'controlPort'>
> & {
  virtualProxies: string[];
  certDir: string | undefined;
  controlPort: number | undefined;
};

/** How a problem names an option: its key by default; the CLI passes its option names. */
export type OptionLabel = (key: keyof PlatformSimulatorOptions) => string;

type PortKey = 'basePort' | 'proxyBasePort' | 'appPort' | 'controlPort';
/** The ports a fixed port option takes: `count` from `first` on. */
interface PortRange {
  key: PortKey;
  first: number;
  count: number;
}

const VIRTUAL_PROXY = /^\/(?:[A-Za-z0-9._~-]+\/?)?$/;

/** A virtual proxy as Svc uses it: `/`, or the prefix without a trailing `/`. */
export function normaliseVirtualProxy(virtualProxy: string): string {
  return virtualProxy.length > 1 && virtualProxy.endsWith('/') ? virtualProxy.slice(0, -1) : virtualProxy;
}

/** The options with their defaults; the seed is drawn here when none is given, so one draw serves the whole run. */
export function resolveSimulatorOptions(options: PlatformSimulatorOptions): ResolvedSimulatorOptions {
  return {
    servers: options.servers ?? SIMULATOR_DEFAULTS.servers,
    host: options.host ?? SIMULATOR_DEFAULTS.host,
    basePort: options.basePort ?? 0,
    proxyBasePort: options.proxyBasePort ?? 0,
    appPort: options.appPort ?? 0,
    virtualProxies: [...(options.virtualProxies ?? SIMULATOR_DEFAULTS.virtualProxies)],
    users: options.users ?? SIMULATOR_DEFAULTS.users,
    apps: options.apps ?? SIMULATOR_DEFAULTS.apps,
    seed: options.seed ?? randomInt(0, 2 ** 32 - 1),
    stepMs: options.stepMs ?? SIMULATOR_DEFAULTS.stepMs,
    startMs: options.startMs ?? Date.now(),
    certDir: options.certDir,
    passphrase: options.passphrase ?? '',
    failures: options.failures ?? {},
    controlPort: options.controlPort,
  };
}

/**
 * Every problem of the options, each naming the option (empty when they are usable). The CLI
 * reports them as usage errors; startPlatformSimulator throws them.
 */
export function simulatorOptionProblems(
  options: PlatformSimulatorOptions,
  label: OptionLabel = (key) => key,
): string[] {
  const resolved = resolveSimulatorOptions(options);
  const serversOk = isIntegerIn(resolved.servers, 1, MAX_SERVERS);
  return [
    ...valueProblems(resolved, label),
    ...virtualProxyProblems(resolved.virtualProxies, label),
    ...portProblems(options, serversOk ? resolved.servers : 1, label),
    ...failureProblems(resolved.failures, serversOk ? resolved.servers : undefined, resolved.servers, label),
  ];
}

const isIntegerIn = (value: number, min: number, max: number): boolean =>
  Number.isSafeInteger(value) && value >= min && value <= max;

/** The problems of the single values, in the order the options are documented. */
function valueProblems(options: ResolvedSimulatorOptions, label: OptionLabel): string[] {
  const problems: string[] = [];
  const integer = (key: keyof PlatformSimulatorOptions, value: number, min: number, max: number): void => {
    if (!isIntegerIn(value, min, max)) problems.push(`${label(key)} must be an integer ${min}–${max} (got ${value})`);
  };
  const { host, stepMs, startMs } = options;
  integer('servers', options.servers, 1, MAX_SERVERS);
  if (!net.isIPv4(host))
    problems.push(
      `${label('host')} must be an IPv4 address (Svc's servers[].host cannot hold an IPv6 one) (got ${JSON.stringify(host)})`,
    );
  integer('users', options.users, 1, MAX_USERS);
  integer('apps', options.apps, 1, MAX_APPS);
  integer('seed', options.seed, 0, MAX_SEED);
  if (!(stepMs === 0 || isIntegerIn(stepMs, 10, MAX_STEP_MS)))
    problems.push(`${label('stepMs')} must be 0 or an integer 10–${MAX_STEP_MS} (got ${stepMs})`);
  if (!Number.isFinite(startMs) || startMs < Date.UTC(2000, 0, 1) || startMs > Date.UTC(9000, 0, 1))
    problems.push(`${label('startMs')} must be a time between 2000 and 9000 (got ${startMs})`);
  if (/[\u0000-\u001f\u007f]/.test(options.passphrase))
    problems.push(`${label('passphrase')} must not contain control characters`);
  return problems;
}

/** At least one virtual proxy, each `/` or one path segment, none twice once normalised. */
function virtualProxyProblems(virtualProxies: readonly string[], label: OptionLabel): string[] {
  const problems: string[] = [];
  if (virtualProxies.length === 0) problems.push(`${label('virtualProxies')} must name at least one virtual proxy`);
  const seen = new Set<string>();
  for (const virtualProxy of virtualProxies) {
    if (!VIRTUAL_PROXY.test(virtualProxy))
      problems.push(
        `${label('virtualProxies')}: ${JSON.stringify(virtualProxy)} must be "/" or "/" and one path segment of letters, digits, . _ ~ - (e.g. /hdr)`,
      );
    else if (seen.has(normaliseVirtualProxy(virtualProxy)))
      problems.push(`${label('virtualProxies')}: ${JSON.stringify(virtualProxy)} is given twice`);
    seen.add(normaliseVirtualProxy(virtualProxy));
  }
  return problems;
}

/** Fixed ports: each range within 1–65535, and no port used twice. */
function portProblems(options: PlatformSimulatorOptions, servers: number, label: OptionLabel): string[] {
  const problems: string[] = [];
  const ranges: PortRange[] = [];
  const counts: readonly [PortKey, number][] = [
    ['basePort', servers],
    ['proxyBasePort', servers],
    ['appPort', 1],
    ['controlPort', 1],
  ];
  for (const [key, count] of counts) {
    const value = options[key];
    if (value === undefined) continue;
    if (!isIntegerIn(value, 0, MAX_PORT))
      problems.push(`${label(key)} must be an integer 0–${MAX_PORT} (got ${value})`);
    else if (value > 0 && value + count - 1 > MAX_PORT)
      problems.push(`${label(key)} ${value} with ${count} servers goes past port ${MAX_PORT}`);
    else if (value > 0) ranges.push({ key, first: value, count });
  }
  ranges.forEach((range, index) => {
    for (const later of ranges.slice(index + 1)) {
      if (range.first < later.first + later.count && later.first < range.first + range.count)
        problems.push(`${label(range.key)} (${span(range)}) and ${label(later.key)} (${span(later)}) overlap`);
    }
  });
  return problems;
}

const span = (range: PortRange): string =>
  range.count === 1 ? `port ${range.first}` : `ports ${range.first}–${range.first + range.count - 1}`;

/**
 * Each failure names a known target and mode. `validServers` is the number of servers when that
 * option is valid (their names are then targets), undefined when it is not (only `apps` and `all`
 * are); `askedServers` is the number asked for, which the message's list of names follows.
 */
function failureProblems(
  failures: Readonly<Record<string, string>>,
  validServers: number | undefined,
  askedServers: number,
  label: OptionLabel,
): string[] {
  const names = new Set(validServers === undefined ? [] : serverNames(validServers));
  const problems: string[] = [];
  for (const [target, mode] of Object.entries(failures)) {
    if (target !== APP_LIST_TARGET && target !== ALL_TARGETS && !names.has(target))
      problems.push(
        `${label('failures')}: target ${JSON.stringify(target)} ${targetHelp(Math.max(1, Math.min(askedServers, MAX_SERVERS)))}`,
      );
    if (!isFailureMode(mode)) problems.push(`${label('failures')}: mode ${notAFailureMode(mode)}`);
  }
  return problems;
}

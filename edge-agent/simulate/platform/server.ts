/**
 * `startPlatformSimulator`: the platform APIs Svc polls, served over mutual TLS from the model
 * (model.ts) for any number of simulated servers — per server the engine's health API (§4) on one
 * port and the proxy's session API (§5.1) on another, and the repository's app-list API (§5.2) on
 * a port of its own — with switches that make any of them fail.
 *
 * Many listeners stay cheap: each port is a plain TCP listener that hands its connections to one
 * shared HTTPS server (one TLS context, one request handler), which tells the APIs apart by the
 * local port of the connection. A hundred servers cost two hundred listening sockets and nothing
 * more. A server switched to `cert-reject` hands its new connections to a second HTTPS server
 * whose client CA is another one, so Svc's certificate is refused in the handshake.
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DatagramPool, PoolUser } from '../messages.js';
import { type CertificateFiles, makeCertificates, type PreparedCertificates, prepareCertificates } from './certs.js';
import { configYaml, type SimulatorConfig, simulatorConfig } from './config.js';
import { type ControlServer, startControlServer } from './control.js';
import { PlatformModel, type SimApp } from './model.js';

/** How a target can be made to fail (`ok` = answers normally). */
export const FAILURE_MODES = ['http-500', 'timeout', 'bad-body', 'cert-reject'] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];
export type TargetMode = 'ok' | FailureMode;

export const isFailureMode = (mode: string): mode is FailureMode => (FAILURE_MODES as readonly string[]).includes(mode);

/** The failure target that names the app-list API. */
export const APP_LIST_TARGET = 'apps';
/** The failure target that names every server and the app list. */
export const ALL_TARGETS = 'all';

export const MAX_SERVERS = 2000;
export const MAX_USERS = 10_000;
export const MAX_APPS = 10_000;
/** Largest `stepMs`: a day. */
export const MAX_STEP_MS = 86_400_000;

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

/** Requests of one API: answered normally, answered by a failure switch, refused by a request check. */
export interface ApiStats {
  ok: number;
  failed: number;
  rejected: number;
}

export interface SimulatorStats {
  health: ApiStats;
  sessions: ApiStats;
  apps: ApiStats;
  /** Requests for no API (404, 405). */
  notFound: number;
  /** TLS handshakes refused: no client certificate, one of another CA, or a `cert-reject` switch. */
  tlsRejected: number;
}

export interface SimulatedServerInfo {
  name: string;
  description: string;
  healthPort: number;
  proxyPort: number;
  healthUrl: string;
  /** Session API URL (without the Xrfkey query) per virtual proxy as configured. */
  sessionUrls: Readonly<Record<string, string>>;
}

export interface SimulatorStatus {
  step: number;
  modes: Readonly<Record<string, TargetMode>>;
  stats: SimulatorStats;
}

export interface PlatformSimulator {
  readonly seed: number;
  readonly host: string;
  readonly servers: readonly SimulatedServerInfo[];
  readonly virtualProxies: readonly string[];
  readonly appPort: number;
  readonly appListUrl: string;
  /** The control endpoint's URL, when one was asked for. */
  readonly controlUrl: string | undefined;
  readonly certs: CertificateFiles & { reused: boolean; replacedBecause?: string };
  readonly config: SimulatorConfig;
  readonly configYaml: string;
  /** Users and apps of the simulated platform. */
  readonly users: readonly PoolUser[];
  readonly apps: readonly SimApp[];
  /** The users, apps and nodes for the UDP generator (createDatagramGenerator's `pool`). */
  readonly pool: DatagramPool;
  /** Makes a target fail: a server name, `apps` or `all`. Its open connections are closed. */
  fail(target: string, mode: FailureMode): void;
  /** Makes a target answer normally again; default every target. Its open connections are closed. */
  heal(target?: string): void;
  /** The current mode of a server name or `apps`. */
  mode(target: string): TargetMode;
  /** Moves the platform `n` steps on (default 1), on top of the steps time makes. */
  step(n?: number): void;
  status(): SimulatorStatus;
  /** Closes every listener and connection (held requests included) and removes a temporary certificate folder. */
  stop(): Promise<void>;
}

type Api = 'health' | 'sessions' | 'apps';

interface Listener {
  /** Failure target: a server name or `apps`. */
  target: string;
  role: 'engine' | 'proxy' | 'repository';
  /** Model index of the server (engine, proxy). */
  index: number;
  what: string;
  server: net.Server;
  port: number;
}

interface Resolved {
  servers: number;
  host: string;
  basePort: number;
  proxyBasePort: number;
  appPort: number;
  virtualProxies: string[];
  users: number;
  apps: number;
  seed: number;
  stepMs: number;
  startMs: number;
  certDir: string | undefined;
  passphrase: string;
  failures: Readonly<Record<string, FailureMode>>;
  controlPort: number | undefined;
}

const VIRTUAL_PROXY = /^\/(?:[A-Za-z0-9._~-]+\/?)?$/;

/** A virtual proxy as Svc uses it: `/`, or the prefix without a trailing `/`. */
export function normaliseVirtualProxy(vp: string): string {
  return vp.length > 1 && vp.endsWith('/') ? vp.slice(0, -1) : vp;
}

/** Server names of a simulator with `count` servers (`node1`…, zero-padded to one width). */
export function serverNames(count: number): string[] {
  const width = String(count).length;
  return Array.from({ length: count }, (_, i) => `node${String(i + 1).padStart(width, '0')}`);
}

const isPort = (p: number): boolean => Number.isInteger(p) && p >= 0 && p <= 65535;

/** How a problem names an option: its key by default; the CLI passes its option names. */
export type OptionLabel = (key: keyof PlatformSimulatorOptions) => string;

/**
 * Every problem of the options, each naming the option (empty when they are usable). The CLI
 * reports them as usage errors; startPlatformSimulator throws them.
 */
export function simulatorOptionProblems(
  options: PlatformSimulatorOptions,
  label: OptionLabel = (key) => key,
): string[] {
  const problems: string[] = [];
  const o = withDefaults(options);
  const int = (key: keyof PlatformSimulatorOptions, value: number, min: number, max: number): boolean => {
    const ok = Number.isSafeInteger(value) && value >= min && value <= max;
    if (!ok) problems.push(`${label(key)} must be an integer ${min}–${max} (got ${value})`);
    return ok;
  };
  const serversOk = int('servers', o.servers, 1, MAX_SERVERS);
  if (!net.isIPv4(o.host))
    problems.push(
      `${label('host')} must be an IPv4 address (Svc's servers[].host cannot hold an IPv6 one) (got ${JSON.stringify(o.host)})`,
    );
  int('users', o.users, 1, MAX_USERS);
  int('apps', o.apps, 1, MAX_APPS);
  int('seed', o.seed, 0, 4_294_967_295);
  if (!(o.stepMs === 0 || (Number.isSafeInteger(o.stepMs) && o.stepMs >= 10 && o.stepMs <= MAX_STEP_MS))) {
    problems.push(`${label('stepMs')} must be 0 or an integer 10–${MAX_STEP_MS} (got ${o.stepMs})`);
  }
  if (!Number.isFinite(o.startMs) || o.startMs < Date.UTC(2000, 0, 1) || o.startMs > Date.UTC(9000, 0, 1))
    problems.push(`${label('startMs')} must be a time between 2000 and 9000 (got ${o.startMs})`);
  if (/[\u0000-\u001f\u007f]/.test(o.passphrase))
    problems.push(`${label('passphrase')} must not contain control characters`);

  if (o.virtualProxies.length === 0) problems.push(`${label('virtualProxies')} must name at least one virtual proxy`);
  const seen = new Set<string>();
  for (const vp of o.virtualProxies) {
    if (!VIRTUAL_PROXY.test(vp))
      problems.push(
        `${label('virtualProxies')}: ${JSON.stringify(vp)} must be "/" or "/" and one path segment of letters, digits, . _ ~ - (e.g. /hdr)`,
      );
    else if (seen.has(normaliseVirtualProxy(vp)))
      problems.push(`${label('virtualProxies')}: ${JSON.stringify(vp)} is given twice`);
    seen.add(normaliseVirtualProxy(vp));
  }

  // Fixed ports: each range within 1–65535, and no port used twice.
  const ranges: { key: keyof PlatformSimulatorOptions; first: number; count: number }[] = [];
  const portOption = (key: 'basePort' | 'proxyBasePort' | 'appPort' | 'controlPort', count: number): void => {
    const value = options[key];
    if (value === undefined) return;
    if (!isPort(value)) problems.push(`${label(key)} must be an integer 0–65535 (got ${value})`);
    else if (value > 0 && value + count - 1 > 65535)
      problems.push(`${label(key)} ${value} with ${count} servers goes past port 65535`);
    else if (value > 0) ranges.push({ key, first: value, count });
  };
  const count = serversOk ? o.servers : 1;
  portOption('basePort', count);
  portOption('proxyBasePort', count);
  portOption('appPort', 1);
  portOption('controlPort', 1);
  const span = (r: { first: number; count: number }): string =>
    r.count === 1 ? `port ${r.first}` : `ports ${r.first}–${r.first + r.count - 1}`;
  ranges.forEach((a, i) => {
    for (const b of ranges.slice(i + 1)) {
      if (a.first < b.first + b.count && b.first < a.first + a.count)
        problems.push(`${label(a.key)} (${span(a)}) and ${label(b.key)} (${span(b)}) overlap`);
    }
  });

  const names = new Set(serversOk ? serverNames(o.servers) : []);
  for (const [target, mode] of Object.entries(o.failures)) {
    if (target !== APP_LIST_TARGET && target !== ALL_TARGETS && !names.has(target))
      problems.push(`${label('failures')}: target ${JSON.stringify(target)} ${targetHelp(o.servers)}`);
    if (!isFailureMode(mode))
      problems.push(`${label('failures')}: mode ${JSON.stringify(mode)} is not one of ${FAILURE_MODES.join(', ')}`);
  }
  return problems;
}

/** What a failure target may be, for messages. */
function targetHelp(servers: number): string {
  const names = serverNames(Math.max(1, Math.min(servers, MAX_SERVERS)));
  const list = names.length <= 3 ? names.join(', ') : `${names[0] ?? ''} … ${names.at(-1) ?? ''}`;
  return `is not a server name (${list}), "${APP_LIST_TARGET}" or "${ALL_TARGETS}"`;
}

function withDefaults(o: PlatformSimulatorOptions): Resolved {
  return {
    servers: o.servers ?? SIMULATOR_DEFAULTS.servers,
    host: o.host ?? SIMULATOR_DEFAULTS.host,
    basePort: o.basePort ?? 0,
    proxyBasePort: o.proxyBasePort ?? 0,
    appPort: o.appPort ?? 0,
    virtualProxies: [...(o.virtualProxies ?? SIMULATOR_DEFAULTS.virtualProxies)],
    users: o.users ?? SIMULATOR_DEFAULTS.users,
    apps: o.apps ?? SIMULATOR_DEFAULTS.apps,
    seed: o.seed ?? randomInt(0, 2 ** 32 - 1),
    stepMs: o.stepMs ?? SIMULATOR_DEFAULTS.stepMs,
    startMs: o.startMs ?? Date.now(),
    certDir: o.certDir,
    passphrase: o.passphrase ?? '',
    failures: o.failures ?? {},
    controlPort: o.controlPort,
  };
}

// ---------------------------------------------------------------------------------------------
// Request checks (§5.1, §5.2)

const XRFKEY = /^[A-Za-z0-9]{16}$/;

/**
 * The platform's cross-site request forgery check: one `xrfkey` query parameter (name in any case:
 * §5.1 writes `Xrfkey`, §5.2 `xrfkey`) of 16 letters and digits, and an `X-Qlik-Xrfkey` header
 * equal to it. Returns what is wrong, or undefined.
 */
export function xrfkeyProblem(url: URL, header: string | undefined): string | undefined {
  const keys = [...url.searchParams].filter(([name]) => name.toLowerCase() === 'xrfkey').map(([, value]) => value);
  const [key] = keys;
  if (key === undefined) return 'the query has no xrfkey parameter';
  if (keys.length > 1) return 'the query has more than one xrfkey parameter';
  if (!XRFKEY.test(key)) return 'the xrfkey must be 16 characters a-z, A-Z, 0-9';
  if (header === undefined) return 'the X-Qlik-Xrfkey header is missing';
  if (header !== key) return "the X-Qlik-Xrfkey header differs from the query's xrfkey";
  return undefined;
}

const QLIK_USER = /^\s*UserDirectory\s*=\s*([^;]*?)\s*;\s*UserId\s*=\s*([^;]*?)\s*;?\s*$/i;
/** The repository's internal service users, which see every app. */
const SERVICE_USERS = new Set(['sa_repository', 'sa_api']);

/** §5.2 `X-Qlik-User: UserDirectory=Internal; UserId=sa_repository`: returns what is wrong, or undefined. */
export function qlikUserProblem(header: string | undefined): string | undefined {
  if (header === undefined) return 'the X-Qlik-User header is missing';
  const m = QLIK_USER.exec(header);
  if (!m) return 'the X-Qlik-User header must read "UserDirectory=<directory>; UserId=<user id>"';
  const [, dir = '', id = ''] = m;
  if (dir.toLowerCase() !== 'internal' || !SERVICE_USERS.has(id.toLowerCase()))
    return `user ${dir}\\${id} may not read the app list (use Internal\\sa_repository)`;
  return undefined;
}

const header = (req: IncomingMessage, name: string): string | undefined => {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
};

// ---------------------------------------------------------------------------------------------
// The simulator

/** Starts the simulated platform; rejects with every option problem, or when a port cannot be bound. */
export async function startPlatformSimulator(options: PlatformSimulatorOptions = {}): Promise<PlatformSimulator> {
  const problems = simulatorOptionProblems(options);
  if (problems.length > 0) throw new RangeError(`invalid platform simulator options: ${problems.join('; ')}`);
  const o = withDefaults(options);
  const virtualProxies = o.virtualProxies.map(normaliseVirtualProxy);
  const model = new PlatformModel({
    seed: o.seed,
    servers: o.servers,
    users: o.users,
    apps: o.apps,
    virtualProxies,
    startMs: o.startMs,
  });
  const names = model.servers.map((s) => s.name);

  const tempDir = o.certDir === undefined ? mkdtempSync(join(tmpdir(), 'svc-sim-certs-')) : undefined;
  const certDir = resolve(o.certDir ?? tempDir ?? '.');
  const hosts = [...new Set([o.host, '127.0.0.1', 'localhost'])];
  let prepared: PreparedCertificates;
  try {
    prepared = prepareCertificates(certDir, hosts, o.passphrase);
  } catch (err) {
    if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
    throw new Error(`cannot write the certificates to ${certDir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const serverKey = readFileSync(prepared.files.serverKey);
  const serverCert = readFileSync(prepared.files.serverCert);
  const tlsOptions = { key: serverKey, cert: serverCert, requestCert: true, rejectUnauthorized: true };

  const stats: SimulatorStats = {
    health: { ok: 0, failed: 0, rejected: 0 },
    sessions: { ok: 0, failed: 0, rejected: 0 },
    apps: { ok: 0, failed: 0, rejected: 0 },
    notFound: 0,
    tlsRejected: 0,
  };
  const modes = new Map<string, TargetMode>([...names, APP_LIST_TARGET].map((t) => [t, 'ok']));
  /** Open connections per target: closed when the target's mode changes, so the next request sees the new mode from its handshake on. */
  const sockets = new Map<string, Set<net.Socket>>([...modes.keys()].map((t) => [t, new Set()]));
  const byPort = new Map<number, Listener>();
  const t0 = Date.now();
  let manualSteps = 0;
  let stopping = false;

  const currentStep = (): number => manualSteps + (o.stepMs > 0 ? Math.floor((Date.now() - t0) / o.stepMs) : 0);

  const send = (res: ServerResponse, status: number, body: unknown): void => {
    const text = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8',
      'Cache-Control': 'no-cache',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
  };

  /** The good body of an API, or what a request check refuses. */
  const answer = (
    api: Api,
    listener: Listener,
    url: URL,
    req: IncomingMessage,
    vp: string,
  ): { status: number; body: unknown } => {
    if (api === 'health') return { status: 200, body: model.at(listener.index, currentStep()).health() };
    const xrf = xrfkeyProblem(url, header(req, 'x-qlik-xrfkey'));
    if (xrf !== undefined) return { status: 400, body: xrf };
    if (api === 'sessions') return { status: 200, body: model.at(listener.index, currentStep()).sessionList(vp) };
    const user = qlikUserProblem(header(req, 'x-qlik-user'));
    if (user !== undefined) return { status: 403, body: user };
    return { status: 200, body: model.appList() };
  };

  /** A body that is JSON but not the API's shape (the `bad-body` switch). */
  const badBody = (api: Api, listener: Listener): unknown => {
    if (api === 'health') {
      const { mem: _mem, ...body } = model.at(listener.index, currentStep()).health();
      return { ...body, cpu: { total: `${body.cpu.total}%` } };
    }
    if (api === 'sessions') return { Message: 'The session list is not available' };
    return { apps: model.appList().length };
  };

  const route = (listener: Listener, url: URL): { api: Api; vp: string } | undefined => {
    if (listener.role === 'engine')
      return url.pathname === '/engine/healthcheck' ? { api: 'health', vp: '' } : undefined;
    if (listener.role === 'repository') return url.pathname === '/qrs/app' ? { api: 'apps', vp: '' } : undefined;
    const m = /^\/qps(\/[^/]+)?\/session$/.exec(url.pathname);
    const vp = m === null ? undefined : (m[1] ?? '/');
    return vp !== undefined && virtualProxies.includes(vp) ? { api: 'sessions', vp } : undefined;
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const listener = byPort.get(req.socket.localPort ?? -1);
    if (listener === undefined) return void req.socket.destroy();
    const url = new URL(req.url ?? '/', 'https://simulator.invalid');
    const found = route(listener, url);
    if (found === undefined) {
      stats.notFound++;
      return send(res, 404, `no ${listener.what} at ${url.pathname}`);
    }
    if (req.method !== 'GET') {
      stats.notFound++;
      res.setHeader('Allow', 'GET');
      return send(res, 405, `${req.method ?? ''} is not allowed; use GET`);
    }
    const { api, vp } = found;
    const mode = modes.get(listener.target) ?? 'ok';
    if (mode !== 'ok') stats[api].failed++;
    switch (mode) {
      case 'http-500':
        return send(res, 500, 'Internal Server Error (simulated)');
      case 'timeout':
        // Held unanswered until the client gives up, the target's mode changes or the simulator stops.
        return;
      case 'bad-body':
        return send(res, 200, badBody(api, listener));
      case 'cert-reject':
        // A connection made before the switch: the switch closes it, this only covers the race.
        return void req.socket.destroy();
      case 'ok': {
        const { status, body } = answer(api, listener, url, req, vp);
        if (status === 200) stats[api].ok++;
        else stats[api].rejected++;
        return send(res, status, body);
      }
    }
  };

  const makeTlsServer = (ca: string | Buffer): HttpsServer => {
    const server = createHttpsServer({ ...tlsOptions, ca }, onRequest);
    // A refused client certificate ends the handshake; the client sees the TLS alert.
    server.on('tlsClientError', () => stats.tlsRejected++);
    return server;
  };
  const main = makeTlsServer(readFileSync(prepared.files.clientCertCA));
  let otherCa: HttpsServer | undefined;
  /** Made on first use: a second CA costs a key pair. */
  const wrongCaServer = (): HttpsServer =>
    (otherCa ??= makeTlsServer(makeCertificates([o.host], { commonName: 'Another CA' }).ca.cert));

  const listeners: Listener[] = [];
  const listen = (
    target: string,
    role: Listener['role'],
    index: number,
    port: number,
    what: string,
  ): Promise<Listener> =>
    new Promise((resolveListen, reject) => {
      const server = net.createServer((socket) => {
        if (stopping) return void socket.destroy();
        const open = sockets.get(target);
        open?.add(socket);
        socket.once('close', () => open?.delete(socket));
        // A reset before the TLS layer takes the socket over must not end the simulator; the TLS server reports the rest.
        socket.on('error', () => undefined);
        (modes.get(target) === 'cert-reject' ? wrongCaServer() : main).emit('connection', socket);
      });
      server.once('error', (err: NodeJS.ErrnoException) =>
        reject(new Error(`cannot listen on ${o.host}:${port} (${what}): ${err.code ?? err.message}`)),
      );
      server.listen({ host: o.host, port }, () => {
        // From here on an error is one of accepting (EMFILE with very many connections): that client's
        // connection fails, the simulator goes on.
        server.removeAllListeners('error');
        server.on('error', () => undefined);
        const address = server.address();
        const bound = typeof address === 'object' && address !== null ? address.port : port;
        const listener: Listener = { target, role, index, what, server, port: bound };
        byPort.set(bound, listener);
        listeners.push(listener);
        resolveListen(listener);
      });
    });

  const closeAll = async (): Promise<void> => {
    stopping = true;
    for (const open of sockets.values()) for (const socket of open) socket.destroy();
    await Promise.all(listeners.map((l) => new Promise<void>((done) => l.server.close(() => done()))));
  };

  /** Every listener of a group, or (once all have settled, so none is left open) the first failure. */
  const listenAll = async (attempts: Promise<Listener>[]): Promise<Listener[]> => {
    const settled = await Promise.allSettled(attempts);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    return settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  };
  let engines: Listener[];
  let proxies: Listener[];
  let repository: Listener | undefined;
  let control: ControlServer | undefined;
  try {
    engines = await listenAll(
      model.servers.map((s) =>
        listen(s.name, 'engine', s.index, o.basePort === 0 ? 0 : o.basePort + s.index, `${s.name} health API`),
      ),
    );
    proxies = await listenAll(
      model.servers.map((s) =>
        listen(
          s.name,
          'proxy',
          s.index,
          o.proxyBasePort === 0 ? 0 : o.proxyBasePort + s.index,
          `${s.name} session API`,
        ),
      ),
    );
    [repository] = await listenAll([listen(APP_LIST_TARGET, 'repository', -1, o.appPort, 'app-list API')]);
    if (repository === undefined) throw new Error('unreachable: the app-list listener neither started nor failed');
  } catch (err) {
    await closeAll();
    if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
    throw err;
  }

  const servers: SimulatedServerInfo[] = model.servers.map((s, i) => {
    const healthPort = engines[i]?.port ?? 0;
    const proxyPort = proxies[i]?.port ?? 0;
    return {
      name: s.name,
      description: s.description,
      healthPort,
      proxyPort,
      healthUrl: `https://${o.host}:${healthPort}/engine/healthcheck`,
      sessionUrls: Object.fromEntries(
        virtualProxies.map((vp) => [vp, `https://${o.host}:${proxyPort}/qps${vp === '/' ? '' : vp}/session`]),
      ),
    };
  });

  const targetsOf = (target: string): string[] => {
    if (target === ALL_TARGETS) return [...modes.keys()];
    if (!modes.has(target)) throw new RangeError(`failure target ${JSON.stringify(target)} ${targetHelp(o.servers)}`);
    return [target];
  };
  const setMode = (target: string, mode: TargetMode): void => {
    for (const t of targetsOf(target)) {
      if (modes.get(t) === mode) continue;
      modes.set(t, mode);
      for (const socket of sockets.get(t) ?? []) socket.destroy();
    }
  };
  for (const [target, mode] of Object.entries(o.failures)) setMode(target, mode);

  const config = simulatorConfig({
    host: o.host,
    servers,
    virtualProxies,
    appPort: repository.port,
    certs: prepared.files,
  });
  const sim: PlatformSimulator = {
    seed: o.seed,
    host: o.host,
    servers,
    virtualProxies,
    appPort: repository.port,
    appListUrl: `https://${o.host}:${repository.port}/qrs/app`,
    get controlUrl() {
      return control?.url;
    },
    certs: {
      ...prepared.files,
      reused: prepared.reused,
      ...(prepared.replacedBecause === undefined ? {} : { replacedBecause: prepared.replacedBecause }),
    },
    config,
    configYaml: configYaml(config, o.seed),
    users: model.users,
    apps: model.apps,
    pool: model.datagramPool(),
    fail(target, mode) {
      if (!isFailureMode(mode))
        throw new RangeError(`failure mode ${JSON.stringify(mode)} is not one of ${FAILURE_MODES.join(', ')}`);
      setMode(target, mode);
    },
    heal(target = ALL_TARGETS) {
      setMode(target, 'ok');
    },
    mode(target) {
      const mode = modes.get(target);
      if (mode === undefined) throw new RangeError(`failure target ${JSON.stringify(target)} ${targetHelp(o.servers)}`);
      return mode;
    },
    step(n = 1) {
      if (!(Number.isSafeInteger(n) && n >= 0)) throw new RangeError(`step count must be an integer ≥ 0 (got ${n})`);
      manualSteps += n;
    },
    status() {
      return { step: currentStep(), modes: Object.fromEntries(modes), stats: structuredClone(stats) };
    },
    async stop() {
      await Promise.all([closeAll(), control?.close()]);
      if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
    },
  };
  if (o.controlPort !== undefined) {
    try {
      control = await startControlServer(sim, '127.0.0.1', o.controlPort);
    } catch (err) {
      await sim.stop();
      throw err;
    }
  }
  return sim;
}

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
import {
  ALL_TARGETS,
  APP_LIST_TARGET,
  type FailureMode,
  isFailureMode,
  notAFailureMode,
  type TargetMode,
  targetHelp,
} from './failures.js';
import { PlatformModel, type SimApp } from './model.js';
import {
  normaliseVirtualProxy,
  type PlatformSimulatorOptions,
  resolveSimulatorOptions,
  simulatorOptionProblems,
} from './options.js';
import { qlikUserProblem, requestHeader, xrfkeyProblem } from './request-checks.js';
import { emptyStats, type SimulatorStats, type SimulatorStatus } from './status.js';

/** One simulated server as Svc is to poll it: its name, ports and URLs. */
export interface SimulatedServerInfo {
  name: string;
  description: string;
  healthPort: number;
  proxyPort: number;
  healthUrl: string;
  /** Session API URL (without the Xrfkey query) per virtual proxy as configured. */
  sessionUrls: Readonly<Record<string, string>>;
}

/** A running platform simulator: where it listens, the config that polls it, and its switches. */
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
  /** Moves the platform `steps` steps on (default 1), on top of the steps time makes. */
  step(steps?: number): void;
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

// The simulator

/** Starts the simulated platform; rejects with every option problem, or when a port cannot be bound. */
export async function startPlatformSimulator(options: PlatformSimulatorOptions = {}): Promise<PlatformSimulator> {
  const problems = simulatorOptionProblems(options);
  if (problems.length > 0) throw new RangeError(`invalid platform simulator options: ${problems.join('; ')}`);
  const o = resolveSimulatorOptions(options);
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

  const stats: SimulatorStats = emptyStats();
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
    const xrf = xrfkeyProblem(url, requestHeader(req, 'x-qlik-xrfkey'));
    if (xrf !== undefined) return { status: 400, body: xrf };
    if (api === 'sessions') return { status: 200, body: model.at(listener.index, currentStep()).sessionList(vp) };
    const user = qlikUserProblem(requestHeader(req, 'x-qlik-user'));
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
      if (!isFailureMode(mode)) throw new RangeError(`failure mode ${notAFailureMode(mode)}`);
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
    step(steps = 1) {
      if (!(Number.isSafeInteger(steps) && steps >= 0))
        throw new RangeError(`step count must be an integer ≥ 0 (got ${steps})`);
      manualSteps += steps;
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

/**
 * `startPlatformSimulator`: the platform APIs Svc polls, served over mutual TLS from the model
 * (model.ts) for any number of simulated servers — per server the engine's health API (§4) on one
 * port and the proxy's session API (§5.1) on another, and the repository's app-list API (§5.2) on
 * a port of its own — with switches that make any of them fail.
 *
 * It composes the pieces: the options (options.ts), the certificates (certs.ts), the failure
 * switches (failures.ts), the request handler (apis.ts), the listening ports (listeners.ts) and
 * the control endpoint (control.ts).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DatagramPool, PoolUser } from '../messages.js';
import { PlatformApis } from './apis.js';
import { type CertificateFiles, type PreparedCertificates, prepareCertificates } from './certs.js';
import { configYaml, type SimulatorConfig, simulatorConfig } from './config.js';
import { type ControlServer, startControlServer } from './control.js';
import {
  ALL_TARGETS,
  APP_LIST_TARGET,
  type FailureMode,
  isFailureMode,
  notAFailureMode,
  type TargetMode,
  TargetSwitches,
} from './failures.js';
import { PortListeners, type ServerTls } from './listeners.js';
import { PlatformModel, type SimApp } from './model.js';
import {
  normaliseVirtualProxy,
  type PlatformSimulatorOptions,
  type ResolvedSimulatorOptions,
  resolveSimulatorOptions,
  simulatorOptionProblems,
} from './options.js';
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

/** What a running simulator is and where it listens: fixed from its start on. */
export interface SimulatorFacts {
  readonly seed: number;
  readonly host: string;
  readonly servers: readonly SimulatedServerInfo[];
  readonly virtualProxies: readonly string[];
  readonly appPort: number;
  readonly appListUrl: string;
  readonly certs: CertificateFiles & { reused: boolean; replacedBecause?: string };
  readonly config: SimulatorConfig;
  readonly configYaml: string;
  /** Users and apps of the simulated platform. */
  readonly users: readonly PoolUser[];
  readonly apps: readonly SimApp[];
  /** The users, apps and nodes for the UDP generator (createDatagramGenerator's `pool`). */
  readonly pool: DatagramPool;
}

/** A running platform simulator: where it listens, the config that polls it, and its switches. */
export interface PlatformSimulator extends SimulatorFacts {
  /** The control endpoint's URL, when one was asked for. */
  readonly controlUrl: string | undefined;
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

/** Starts the simulated platform; rejects with every option problem, or when a port cannot be bound. */
export async function startPlatformSimulator(options: PlatformSimulatorOptions = {}): Promise<PlatformSimulator> {
  const problems = simulatorOptionProblems(options);
  if (problems.length > 0) throw new RangeError(`invalid platform simulator options: ${problems.join('; ')}`);
  const resolved = resolveSimulatorOptions(options);
  const virtualProxies = resolved.virtualProxies.map(normaliseVirtualProxy);
  const model = new PlatformModel({
    seed: resolved.seed,
    servers: resolved.servers,
    users: resolved.users,
    apps: resolved.apps,
    virtualProxies,
    startMs: resolved.startMs,
  });
  const certificates = simulatorCertificates(resolved);
  const switches = new TargetSwitches(model.servers.map((server) => server.name));
  const stats = emptyStats();
  // Time starts once the certificates are there, so making a new set does not count as steps.
  const clock = new StepClock(resolved.stepMs);
  const apis = new PlatformApis(model, virtualProxies, () => clock.current(), switches, stats);
  const listeners = new PortListeners(resolved.host, certificates.tls, switches, stats, (endpoint, request, response) =>
    apis.handle(endpoint, request, response),
  );
  let ports: BoundPorts;
  try {
    ports = await listenForModel(listeners, model, resolved);
  } catch (err) {
    await listeners.close();
    certificates.removeTemporary();
    throw err;
  }
  for (const [target, mode] of Object.entries(resolved.failures)) switches.set(target, mode);
  const controls = new SimulatorControls({ switches, stats, clock, listeners, certificates });
  if (resolved.controlPort !== undefined) await controls.startControl(resolved.controlPort);
  return Object.assign(controls, simulatorFacts(resolved, virtualProxies, model, ports, certificates.prepared));
}

/** The platform's step: one per `stepMs` of real time since the start (none when 0), plus the steps step() asked for. */
class StepClock {
  private readonly startedAt = Date.now();
  private manualSteps = 0;

  constructor(private readonly stepMs: number) {}

  current(): number {
    return this.manualSteps + (this.stepMs > 0 ? Math.floor((Date.now() - this.startedAt) / this.stepMs) : 0);
  }

  advance(steps: number): void {
    this.manualSteps += steps;
  }
}

/** The simulator's certificate set, the TLS material its listeners need, and the temporary folder stop() removes. */
interface SimulatorCertificates {
  prepared: PreparedCertificates;
  tls: ServerTls;
  /** Removes the folder the set was written to when the simulator made it (no `certDir`); else nothing. */
  removeTemporary(): void;
}

/** The set in `certDir` (reused when it fits) or in a new temporary folder, valid for the host and loopback. */
function simulatorCertificates(options: ResolvedSimulatorOptions): SimulatorCertificates {
  const tempDir = options.certDir === undefined ? mkdtempSync(join(tmpdir(), 'svc-sim-certs-')) : undefined;
  const removeTemporary = (): void => {
    if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
  };
  const certDir = resolve(options.certDir ?? tempDir ?? '.');
  const hosts = [...new Set([options.host, '127.0.0.1', 'localhost'])];
  let prepared: PreparedCertificates;
  try {
    prepared = prepareCertificates(certDir, hosts, options.passphrase);
  } catch (err) {
    removeTemporary();
    throw new Error(`cannot write the certificates to ${certDir}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const tls = {
    key: readFileSync(prepared.files.serverKey),
    cert: readFileSync(prepared.files.serverCert),
    clientCa: readFileSync(prepared.files.clientCertCA),
  };
  return { prepared, tls, removeTemporary };
}

/** The ports the listeners got: per server its health and session API, and the app list's. */
interface BoundPorts {
  health: number[];
  proxy: number[];
  appList: number;
}

/**
 * Binds the health APIs, then the session APIs, then the app list; a group that fails rejects
 * after all its ports have settled, so the caller's close() leaves nothing listening.
 */
async function listenForModel(
  listeners: PortListeners,
  model: PlatformModel,
  options: ResolvedSimulatorOptions,
): Promise<BoundPorts> {
  const serverEndpoints = (role: 'engine' | 'proxy', basePort: number, api: string) =>
    model.servers.map((server) => ({
      target: server.name,
      role,
      index: server.index,
      what: `${server.name} ${api}`,
      port: basePort === 0 ? 0 : basePort + server.index,
    }));
  const health = await listeners.listenAll(serverEndpoints('engine', options.basePort, 'health API'));
  const proxy = await listeners.listenAll(serverEndpoints('proxy', options.proxyBasePort, 'session API'));
  const [appList] = await listeners.listenAll([
    { target: APP_LIST_TARGET, role: 'repository', index: -1, what: 'app-list API', port: options.appPort },
  ]);
  if (appList === undefined) throw new Error('unreachable: the app-list listener neither started nor failed');
  return { health, proxy, appList };
}

/** The facts of a simulator listening on `ports`, with the config that polls it. */
function simulatorFacts(
  options: ResolvedSimulatorOptions,
  virtualProxies: readonly string[],
  model: PlatformModel,
  ports: BoundPorts,
  { files, reused, replacedBecause }: PreparedCertificates,
): SimulatorFacts {
  const { host, seed } = options;
  const servers = serverInfos(model, host, virtualProxies, ports);
  const config = simulatorConfig({ host, servers, virtualProxies, appPort: ports.appList, certs: files });
  return {
    seed,
    host,
    servers,
    virtualProxies,
    appPort: ports.appList,
    appListUrl: `https://${host}:${ports.appList}/qrs/app`,
    certs: { ...files, reused, ...(replacedBecause === undefined ? {} : { replacedBecause }) },
    config,
    configYaml: configYaml(config, seed),
    users: model.users,
    apps: model.apps,
    pool: model.datagramPool(),
  };
}

/** The moving parts a running simulator drives. */
interface SimulatorParts {
  switches: TargetSwitches;
  stats: SimulatorStats;
  clock: StepClock;
  listeners: PortListeners;
  certificates: SimulatorCertificates;
}

/** The switches, step, status and stop of a running simulator (its facts are added beside them). */
class SimulatorControls implements Omit<PlatformSimulator, keyof SimulatorFacts> {
  private control: ControlServer | undefined;

  constructor(private readonly parts: SimulatorParts) {}

  get controlUrl(): string | undefined {
    return this.control?.url;
  }

  fail(target: string, mode: FailureMode): void {
    if (!isFailureMode(mode)) throw new RangeError(`failure mode ${notAFailureMode(mode)}`);
    this.parts.switches.set(target, mode);
  }

  heal(target: string = ALL_TARGETS): void {
    this.parts.switches.set(target, 'ok');
  }

  mode(target: string): TargetMode {
    return this.parts.switches.knownMode(target);
  }

  step(steps = 1): void {
    if (!(Number.isSafeInteger(steps) && steps >= 0))
      throw new RangeError(`step count must be an integer ≥ 0 (got ${steps})`);
    this.parts.clock.advance(steps);
  }

  status(): SimulatorStatus {
    const { clock, switches, stats } = this.parts;
    return { step: clock.current(), modes: switches.snapshot(), stats: structuredClone(stats) };
  }

  async stop(): Promise<void> {
    await Promise.all([this.parts.listeners.close(), this.control?.close()]);
    this.parts.certificates.removeTemporary();
  }

  /** Starts the control endpoint on 127.0.0.1; when it cannot, stops the simulator and rejects. */
  async startControl(port: number): Promise<void> {
    try {
      this.control = await startControlServer(this, '127.0.0.1', port);
    } catch (err) {
      await this.stop();
      throw err;
    }
  }
}

/** Each simulated server's ports and URLs, in model order. */
function serverInfos(
  model: PlatformModel,
  host: string,
  virtualProxies: readonly string[],
  ports: BoundPorts,
): SimulatedServerInfo[] {
  return model.servers.map((server, index) => {
    const healthPort = ports.health[index] ?? 0;
    const proxyPort = ports.proxy[index] ?? 0;
    const sessionUrl = (virtualProxy: string): string =>
      `https://${host}:${proxyPort}/qps${virtualProxy === '/' ? '' : virtualProxy}/session`;
    return {
      name: server.name,
      description: server.description,
      healthPort,
      proxyPort,
      healthUrl: `https://${host}:${healthPort}/engine/healthcheck`,
      sessionUrls: Object.fromEntries(virtualProxies.map((virtualProxy) => [virtualProxy, sessionUrl(virtualProxy)])),
    };
  });
}

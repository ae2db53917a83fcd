/**
 * System info (platform-formats.md §10.5): what Svc knows about its host, collected once at start.
 *
 * - `systemInfo.enable: true`: CPU, system, memory, OS, container and network-interface data from
 *   the `systeminformation` library, which runs OS commands (lscpu, ip, dmidecode …) to get them.
 *   Every collector has a time limit (SYSTEM_INFO_TIMEOUT_MS, all run at once, so start-up waits at
 *   most that long); one that fails or is late gives its fallback and a WARN naming it.
 * - `systemInfo.enable: false`: the fallbacks of §10.5 (system uuid `disabled`, memory 0, OS from
 *   the runtime, 1 core, interface `default` with MAC `00:00:00:00:00:00` and `127.0.0.1`), and the
 *   library is not even loaded: no OS command is run.
 * - The container flag (Svc choice) is read from files and the environment in both cases, never by a
 *   command: `/.dockerenv`, `/run/.containerenv`, `KUBERNETES_SERVICE_HOST`, or a container runtime
 *   named in `/proc/1/cgroup`.
 * - The system uuid (Svc choice) is the hardware uuid; where the OS does not give it (containers,
 *   VMs, no root), the OS installation's id (machine-id) — both from `systeminformation`.
 * - Host id = `hex(HMAC-SHA256(key = MAC, data = MAC + IPv4 + system uuid))` of the default interface.
 * - Which interface is the default comes from `systeminformation` (one `ip route`); its MAC and IPv4
 *   from the runtime (`os.networkInterfaces()`, the same source the library reads them from).
 *   The library's `networkInterfaces()` would also run `ip a` and, per interface, `nmcli` and more
 *   (≈ 100 ms of blocking commands at every start, bench/memory.mjs --profile) for data Svc does not
 *   use. Likewise the OS installation's id is read only when the hardware uuid is not given, and on
 *   Linux from the machine-id file `si.uuid()` reads (without its `ip link` for the MAC addresses).
 */
import { createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import {
  arch,
  networkInterfaces,
  type NetworkInterfaceInfo as OsInterfaceAddress,
  platform,
  release,
  type,
} from 'node:os';
import { dirname, sep } from 'node:path';
import type * as Si from 'systeminformation';
import type { SvcConfig } from '../../shared/config/schema.js';
import type { Log } from '../../shared/logging/log.js';
import type { Component } from '../../shared/runtime/lifecycle.js';

/** The longest one collector may take (they run at once). */
export const SYSTEM_INFO_TIMEOUT_MS = 10_000;

export interface NetworkInterfaceInfo {
  name: string;
  mac: string;
  ip4: string;
}

export interface SystemInfo {
  /** Whether `systeminformation` collected it (`systemInfo.enable`) or these are the fallbacks. */
  source: 'systeminformation' | 'fallback';
  arch: string;
  platform: string;
  release: string;
  distro: string;
  codename: string;
  /** Whether the host is a virtual machine (false when unknown). */
  virtual: boolean;
  isContainer: boolean;
  cpuBrand: string;
  cores: number;
  memoryBytes: number;
  systemUuid: string;
  defaultInterface: NetworkInterfaceInfo;
  /** §10.5 host id: hex HMAC-SHA256. */
  hostId: string;
}

/** §10.5: the fallbacks when `systemInfo.enable` is false (and per collector when one fails). */
export const FALLBACK = {
  systemUuid: 'disabled',
  memoryBytes: 0,
  cores: 1,
  defaultInterface: { name: 'default', mac: '00:00:00:00:00:00', ip4: '127.0.0.1' },
} as const;

/** §10.5: `hex(HMAC-SHA256(key = MAC, data = MAC + IPv4 + system uuid))`. */
export function hostId(mac: string, ip4: string, systemUuid: string): string {
  return createHmac('sha256', mac).update(`${mac}${ip4}${systemUuid}`).digest('hex');
}

const CONTAINER_CGROUP = /docker|kubepods|containerd|libpod|lxc/;

/** Whether Svc runs in a container, from files and the environment only (no command). */
export function detectContainer(env: NodeJS.ProcessEnv = process.env): boolean {
  if (existsSync('/.dockerenv') || existsSync('/run/.containerenv') || (env['KUBERNETES_SERVICE_HOST'] ?? '') !== '')
    return true;
  try {
    return CONTAINER_CGROUP.test(readFileSync('/proc/1/cgroup', 'utf8'));
  } catch {
    return false;
  }
}

/** The OS as the runtime knows it (no command): the fallback of the OS facts. */
function runtimeOs(): Pick<SystemInfo, 'arch' | 'platform' | 'release' | 'distro' | 'codename'> {
  return { arch: arch(), platform: platform(), release: release(), distro: type(), codename: '' };
}

function fallbackInfo(isContainer: boolean): SystemInfo {
  const { mac, ip4 } = FALLBACK.defaultInterface;
  return {
    source: 'fallback',
    ...runtimeOs(),
    virtual: false,
    isContainer,
    cpuBrand: '',
    cores: FALLBACK.cores,
    memoryBytes: FALLBACK.memoryBytes,
    systemUuid: FALLBACK.systemUuid,
    defaultInterface: { ...FALLBACK.defaultInterface },
    hostId: hostId(mac, ip4, FALLBACK.systemUuid),
  };
}

/** `work` within `timeoutMs`, else `fallback` with a WARN naming the collector and what went wrong. */
async function bounded<T>(what: string, work: () => Promise<T>, fallback: T, timeoutMs: number, log: Log): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work(), late]);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    log.warn(
      { collector: what, reason },
      `system info: ${what} could not be collected (${reason}); using the fallback`,
    );
    return fallback;
  } finally {
    clearTimeout(timer);
  }
}

const text = (value: unknown, fallback: string): string =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback;
const count = (value: unknown, fallback: number): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;

/**
 * The MAC and first IPv4 of the interface named `name`, else of the first interface that is not
 * internal and has an IPv4; undefined when there is none. `interfaces` as `os.networkInterfaces()`.
 */
export function interfaceAddresses(
  name: string,
  interfaces: NodeJS.Dict<OsInterfaceAddress[]>,
): NetworkInterfaceInfo | undefined {
  const named = interfaces[name];
  if (named !== undefined && named.length > 0)
    return { name, mac: named[0]?.mac ?? '', ip4: named.find((a) => a.family === 'IPv4')?.address ?? '' };
  for (const [other, addresses] of Object.entries(interfaces)) {
    const ip4 = addresses?.find((a) => a.family === 'IPv4' && !a.internal);
    if (ip4 !== undefined) return { name: other, mac: ip4.mac, ip4: ip4.address };
  }
  return undefined;
}

/** On Linux, where `si.uuid()` reads the OS installation's id: the first of these files that exists. */
export const MACHINE_ID_FILES = ['/var/lib/dbus/machine-id', '/etc/machine-id'];

/**
 * The OS installation's id as `si.uuid().os` gives it. On Linux read from the machine-id file
 * directly: `si.uuid()` also collects every MAC address, by running `ip link` synchronously
 * (≈ 30–100 ms of a blocked event loop at start, more on a busy machine), which Svc does not use.
 */
export async function osInstallationId(
  si: Pick<typeof Si, 'uuid'>,
  files: readonly string[] = MACHINE_ID_FILES,
): Promise<string> {
  if (platform() === 'linux') {
    for (const file of files) {
      let content: string;
      try {
        content = await readFile(file, 'utf8');
      } catch {
        continue;
      }
      return text(content.split('\n')[0]?.toLowerCase(), '');
    }
  }
  return text((await si.uuid()).os, '');
}

/**
 * `systeminformation`, for one collection, and a `release` that lets its modules go.
 *
 * The library serves once, at start, but its ≈ 25 modules (≈ 0.7 MB of source, with their compiled
 * code and tables) would stay for the life of the process: an `import`ed module is never unloaded.
 * So it is `require`d through a require made for this collection, and `release` takes its modules
 * out of the require cache; nothing else refers to them (the require's own parent module goes with
 * it), and the garbage collector takes them. A collector still running past its time limit keeps
 * what it uses until it ends. A second collection loads the library again.
 */
function loadSystemInformation(): { si: typeof Si; release: () => void } {
  const require = createRequire(import.meta.url);
  const si = require('systeminformation') as typeof Si;
  const root = dirname(require.resolve('systeminformation/package.json')) + sep;
  const release = (): void => {
    for (const file of Object.keys(require.cache))
      if (file.startsWith(root)) Reflect.deleteProperty(require.cache, file);
  };
  return { si, release };
}

/** Collects with `systeminformation`, each collector bounded and falling back on its own. */
async function collectWithLibrary(isContainer: boolean, log: Log, timeoutMs: number): Promise<SystemInfo> {
  let library: ReturnType<typeof loadSystemInformation>;
  try {
    library = loadSystemInformation();
  } catch (err) {
    log.warn({ err }, 'system info: the systeminformation library cannot be loaded; using the fallbacks');
    return fallbackInfo(isContainer);
  }
  try {
    return await collectWith(library.si, isContainer, log, timeoutMs);
  } finally {
    library.release();
  }
}

async function collectWith(si: typeof Si, isContainer: boolean, log: Log, timeoutMs: number): Promise<SystemInfo> {
  const os = runtimeOs();
  const [osInfo, system, cpu, mem, iface] = await Promise.all([
    bounded(
      'OS',
      async () => {
        const o = await si.osInfo();
        return {
          arch: text(o.arch, os.arch),
          platform: text(o.platform, os.platform),
          release: text(o.release, os.release),
          distro: text(o.distro, os.distro),
          codename: text(o.codename, ''),
        };
      },
      os,
      timeoutMs,
      log,
    ),
    bounded(
      'system',
      async () => {
        const s = await si.system();
        return { virtual: s.virtual, uuid: text(s.uuid, '') };
      },
      { virtual: false, uuid: '' },
      timeoutMs,
      log,
    ),
    bounded(
      'CPU',
      async () => {
        const c = await si.cpu();
        return { brand: text(`${c.manufacturer} ${c.brand}`, ''), cores: count(c.cores, FALLBACK.cores) };
      },
      { brand: '', cores: FALLBACK.cores },
      timeoutMs,
      log,
    ),
    bounded(
      'memory',
      async () => count((await si.mem()).total, FALLBACK.memoryBytes),
      FALLBACK.memoryBytes,
      timeoutMs,
      log,
    ),
    bounded(
      'network interface',
      async () => {
        const found = interfaceAddresses(await si.networkInterfaceDefault(), networkInterfaces());
        if (found === undefined) throw new Error('no default interface');
        return {
          name: found.name,
          mac: text(found.mac, FALLBACK.defaultInterface.mac),
          ip4: text(found.ip4, FALLBACK.defaultInterface.ip4),
        };
      },
      { ...FALLBACK.defaultInterface },
      timeoutMs,
      log,
    ),
  ]);
  // The OS installation's id only where the hardware gives no uuid.
  const uuid = system.uuid !== '' ? '' : await bounded('OS uuid', () => osInstallationId(si), '', timeoutMs, log);
  const systemUuid = system.uuid !== '' ? system.uuid : uuid !== '' ? uuid : FALLBACK.systemUuid;
  return {
    source: 'systeminformation',
    ...osInfo,
    virtual: system.virtual,
    isContainer,
    cpuBrand: cpu.brand,
    cores: cpu.cores,
    memoryBytes: mem,
    systemUuid,
    defaultInterface: iface,
    hostId: hostId(iface.mac, iface.ip4, systemUuid),
  };
}

export interface CollectOptions {
  enable: boolean;
  log: Log;
  timeoutMs?: number;
}

/** §10.5: the host's facts, with the library when enabled, else the fallbacks (no command run). */
export async function collectSystemInfo(options: CollectOptions): Promise<SystemInfo> {
  const isContainer = detectContainer();
  if (!options.enable) return fallbackInfo(isContainer);
  return collectWithLibrary(isContainer, options.log, options.timeoutMs ?? SYSTEM_INFO_TIMEOUT_MS);
}

const MB = 1_048_576;

/** The start-up line of §10.5: arch, platform, release, distro, cores, memory, container flag, certificate paths. */
export function systemInfoLine(
  info: SystemInfo,
  cert: SvcConfig['cert'],
): { obj: Record<string, unknown>; msg: string } {
  const certs = { clientCert: cert.clientCert, clientCertKey: cert.clientCertKey, clientCertCA: cert.clientCertCA };
  const memoryMb = Math.round(info.memoryBytes / MB);
  const shownCerts = Object.entries(certs)
    .map(([k, v]) => `${k}=${v === '' ? '(none)' : v}`)
    .join(', ');
  const from = info.source === 'fallback' ? ' (Svc.systemInfo.enable is false: fallbacks, no OS command run)' : '';
  return {
    obj: {
      arch: info.arch,
      platform: info.platform,
      release: info.release,
      distro: info.distro,
      cores: info.cores,
      memoryMb,
      isContainer: info.isContainer,
      certificates: certs,
      source: info.source,
    },
    msg: `system info${from}: arch ${info.arch}, platform ${info.platform}, release ${info.release}, distro ${info.distro}, ${info.cores} core${info.cores === 1 ? '' : 's'}, memory ${memoryMb} MB, container ${info.isContainer ? 'yes' : 'no'}; certificates: ${shownCerts}`,
  };
}

/**
 * The system info as a component: collects at start (bounded), logs the §10.5 line at INFO and
 * holds the result for the telemetry, which starts after it.
 */
export class SystemInfoComponent implements Component {
  readonly name = 'system info';
  private collected: SystemInfo | undefined;

  constructor(private readonly options: CollectOptions & { cert: SvcConfig['cert'] }) {}

  /** The facts; throws before `start` finished (a composition error). */
  get info(): SystemInfo {
    if (this.collected === undefined) throw new Error('system info read before it was collected');
    return this.collected;
  }

  async start(): Promise<void> {
    this.collected = await collectSystemInfo(this.options);
    const { obj, msg } = systemInfoLine(this.collected, this.options.cert);
    this.options.log.info(obj, msg);
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * System info (platform-formats.md §10.5): the host id rule, the fallbacks when `systemInfo.enable`
 * is false (and that no OS command is run then), real collection with `systeminformation` when on,
 * and the start-up line.
 *
 * "No OS command": the test wraps the functions of node's `child_process` module (the object that
 * `systeminformation`, a CommonJS library, calls) with counters that call through; nothing is
 * replaced. On this Linux machine collection with the library runs commands (lscpu, ip …), so the
 * counter is shown to see them.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, type NetworkInterfaceInfo, networkInterfaces, platform, release, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  collectSystemInfo,
  FALLBACK,
  hostId,
  interfaceAddresses,
  osInstallationId,
  SystemInfoComponent,
  systemInfoLine,
} from '../../../edge-agent/self-report/system-info.js';
import { recordingLog } from '../../support/log.js';
import { svcConfig } from '../../support/udp.js';

const childProcess: Record<string, unknown> = createRequire(import.meta.url)('node:child_process');
const SPAWNING = ['exec', 'execSync', 'execFile', 'execFileSync', 'spawn', 'spawnSync', 'fork'];
const originals = new Map<string, unknown>();
let spawned: string[] = [];

beforeAll(() => {
  for (const name of SPAWNING) {
    const original = childProcess[name];
    if (typeof original !== 'function') continue;
    originals.set(name, original);
    childProcess[name] = function counted(this: unknown, ...args: unknown[]): unknown {
      spawned.push(`${name} ${String(args[0])}`);
      const result: unknown = Reflect.apply(original, this, args);
      return result;
    };
  }
});
afterAll(() => {
  for (const [name, original] of originals) childProcess[name] = original;
});

describe('host id', () => {
  it('is hex(HMAC-SHA256(key = MAC, data = MAC + IPv4 + system uuid))', () => {
    const mac = '02:fc:00:00:00:01';
    const expected = createHmac('sha256', Buffer.from(mac, 'utf8'))
      .update(Buffer.from(`${mac}10.1.2.3abc-uuid`, 'utf8'))
      .digest('hex');
    expect(hostId(mac, '10.1.2.3', 'abc-uuid')).toBe(expected);
    expect(hostId(mac, '10.1.2.3', 'abc-uuid')).toMatch(/^[0-9a-f]{64}$/);
    // Every input counts.
    expect(
      new Set([
        hostId(mac, '10.1.2.3', 'x'),
        hostId(mac, '10.1.2.4', 'x'),
        hostId('02:fc:00:00:00:02', '10.1.2.3', 'x'),
      ]).size,
    ).toBe(3);
  });
});

describe('systemInfo.enable: false', () => {
  it('gives the §10.5 fallbacks and runs no OS command', async () => {
    spawned = [];
    const { log, lines } = recordingLog();
    const info = await collectSystemInfo({ enable: false, log });
    expect(spawned).toEqual([]);
    expect(lines).toEqual([]);
    expect(info).toMatchObject({
      source: 'fallback',
      systemUuid: 'disabled',
      memoryBytes: 0,
      cores: 1,
      arch: arch(),
      platform: platform(),
      release: release(),
      defaultInterface: { name: 'default', mac: '00:00:00:00:00:00', ip4: '127.0.0.1' },
    });
    expect(info.hostId).toBe(hostId('00:00:00:00:00:00', '127.0.0.1', 'disabled'));
    expect(FALLBACK.systemUuid).toBe('disabled');
  });
});

describe('systemInfo.enable: true', () => {
  it('collects the host with systeminformation (which runs OS commands here), within the time limit', async () => {
    spawned = [];
    const { log, lines } = recordingLog();
    const info = await collectSystemInfo({ enable: true, log });
    expect(info.source).toBe('systeminformation');
    if (platform() === 'linux') expect(spawned.length).toBeGreaterThan(0);
    expect(lines.filter((l) => l.level === 'warn')).toEqual([]);
    expect(info.cores).toBeGreaterThanOrEqual(1);
    expect(info.memoryBytes).toBeGreaterThan(0);
    expect(info.distro).not.toBe('');
    expect(info.systemUuid).not.toBe('disabled');
    expect(info.hostId).toBe(hostId(info.defaultInterface.mac, info.defaultInterface.ip4, info.systemUuid));
  });

  it("reads the default interface's MAC and IPv4 as the library's networkInterfaces() gives them, without its commands", async () => {
    spawned = [];
    const info = await collectSystemInfo({ enable: true, log: recordingLog().log });
    // Not `ip a`, nor `nmcli` per interface: what networkInterfaces() runs and Svc does not use.
    expect(spawned.filter((c) => /\bip a\b|nmcli/.test(c))).toEqual([]);
    // Imported here, after the counters are in place (the library keeps its own references to child_process's functions).
    const { default: si } = await import('systeminformation');
    const name = await si.networkInterfaceDefault();
    const fromLibrary = (await si.networkInterfaces()).find((i) => i.iface === name);
    expect(fromLibrary).toBeDefined();
    expect(info.defaultInterface).toEqual({ name, mac: fromLibrary?.mac, ip4: fromLibrary?.ip4 });
    expect(spawned.some((c) => /\bip a\b|nmcli/.test(c))).toBe(true); // the library's own call above ran them
  });

  it("reads the OS installation's id as the library's uuid() gives it, without its commands", async () => {
    const { default: si } = await import('systeminformation');
    const fromLibrary = (await si.uuid()).os;
    spawned = [];
    expect(await osInstallationId(si)).toBe(fromLibrary);
    if (platform() === 'linux') {
      expect(spawned).toEqual([]);
      const dir = mkdtempSync(join(tmpdir(), 'svc-machine-id-'));
      writeFileSync(join(dir, 'machine-id'), 'ABC123\nrest\n');
      // The first file that exists, as `cat a || cat b`; none: the library's answer.
      expect(await osInstallationId(si, [join(dir, 'missing'), join(dir, 'machine-id')])).toBe('abc123');
      expect(await osInstallationId(si, [join(dir, 'missing')])).toBe(fromLibrary);
    }
  });

  it('takes the named interface, else the first external one with an IPv4, else none', () => {
    const address = (family: 'IPv4' | 'IPv6', addr: string, mac: string, internal = false): NetworkInterfaceInfo =>
      family === 'IPv4'
        ? { address: addr, netmask: '', family, mac, internal, cidr: null }
        : { address: addr, netmask: '', family, mac, internal, cidr: null, scopeid: 0 };
    const interfaces = {
      lo: [address('IPv4', '127.0.0.1', '00:00:00:00:00:00', true)],
      eth0: [address('IPv6', 'fd00::2', '02:00:00:00:00:01'), address('IPv4', '192.0.2.2', '02:00:00:00:00:01')],
      eth1: [address('IPv6', 'fd00::3', '02:00:00:00:00:02')],
    };
    expect(interfaceAddresses('eth0', interfaces)).toEqual({
      name: 'eth0',
      mac: '02:00:00:00:00:01',
      ip4: '192.0.2.2',
    });
    expect(interfaceAddresses('eth1', interfaces)).toEqual({ name: 'eth1', mac: '02:00:00:00:00:02', ip4: '' });
    expect(interfaceAddresses('wlan9', interfaces)).toEqual({
      name: 'eth0',
      mac: '02:00:00:00:00:01',
      ip4: '192.0.2.2',
    });
    expect(interfaceAddresses('wlan9', { lo: interfaces.lo })).toBeUndefined();
    expect(interfaceAddresses('', networkInterfaces())).toBeDefined();
  });

  it('falls back per collector, with a WARN naming it, when one is late', async () => {
    const { log, lines } = recordingLog();
    // 1 ms: the collectors that spawn a command cannot answer in time.
    const info = await collectSystemInfo({ enable: true, log, timeoutMs: 1 });
    const warned = lines.filter((l) => l.level === 'warn').map((l) => l.msg);
    expect(warned.length).toBeGreaterThan(0);
    for (const msg of warned)
      expect(msg).toMatch(
        /^system info: (OS|system|CPU|memory|OS uuid|network interface) could not be collected \(no answer within 1 ms\); using the fallback$/,
      );
    if (warned.some((m) => m.includes('network interface')))
      expect(info.defaultInterface).toEqual(FALLBACK.defaultInterface);
  });
});

describe('the start-up line', () => {
  it('names arch, platform, release, distro, cores, memory, container flag and the certificate paths', async () => {
    const config = svcConfig(['  cert: { clientCert: /etc/svc/client.pem, clientCertKey: /etc/svc/client_key.pem }']);
    const { log, lines } = recordingLog();
    const component = new SystemInfoComponent({ enable: false, cert: config.cert, log });
    await component.start();
    const info = component.info;
    expect(lines).toHaveLength(1);
    expect(lines[0]?.level).toBe('info');
    expect(lines[0]?.msg).toBe(
      `system info (Svc.systemInfo.enable is false: fallbacks, no OS command run): arch ${arch()}, platform ${platform()}, release ${release()}, distro ${info.distro}, 1 core, memory 0 MB, container ${info.isContainer ? 'yes' : 'no'}; certificates: clientCert=/etc/svc/client.pem, clientCertKey=/etc/svc/client_key.pem, clientCertCA=(none)`,
    );
    expect(systemInfoLine(info, config.cert).obj).toMatchObject({
      arch: arch(),
      cores: 1,
      memoryMb: 0,
      certificates: { clientCert: '/etc/svc/client.pem', clientCertKey: '/etc/svc/client_key.pem', clientCertCA: '' },
    });
    await component.stop();
  });
});

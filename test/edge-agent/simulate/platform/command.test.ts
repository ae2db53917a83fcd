/**
 * `svc simulate platform` as a user runs it: the linked bin, a real child process; Svc's config
 * loader reads what it prints, a client with those certificates polls it over mutual TLS, the
 * control endpoint switches failures, a UDP receiver gets its user events, and signals stop it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../../edge-agent/cli/program.js';
import { parseUserEvent } from '../../../../edge-agent/sources/udp/parse/index.js';
import { loadConfigFile } from '../../../../shared/config/load.js';
import { HealthBodySchema } from '../../../../shared/platform/polled.js';
import { REPO_ROOT } from '../../../support/build.js';
import { canConnect, trackChild } from '../../../support/ports.js';
import { type Receiver, startReceiver } from '../receiver.js';
import { get, json, SA_REPOSITORY, svcClient, withKey, XRFKEY } from './client.js';

const SVC = join(REPO_ROOT, 'node_modules/.bin/svc');
const FREE_PORTS = ['--base-port', '0', '--proxy-base-port', '0', '--app-port', '0'];

interface Child {
  process: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

const children: Child[] = [];
const dirs: string[] = [];
let receiver: Receiver | undefined;

function start(args: string[]): Child {
  const child = spawn(SVC, ['simulate', 'platform', ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, SVC_CONFIG: '' },
  });
  trackChild(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const handle = { process: child, stdout: () => stdout, stderr: () => stderr, exited };
  children.push(handle);
  return handle;
}

/** The command in this process, for what ends before anything starts (usage errors, --help, a taken port). */
async function cli(args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const status = await runCli(['simulate', 'platform', ...args], {
    out: (t) => (stdout += t),
    err: (t) => (stderr += t),
    env: {},
  });
  return { status, stdout, stderr };
}

/** Runs to the end (--duration). */
async function run(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = start(args);
  const timer = setTimeout(() => child.process.kill('SIGKILL'), 30_000);
  const status = await child.exited;
  clearTimeout(timer);
  return { status, stdout: child.stdout(), stderr: child.stderr() };
}

const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sim-cli-test-'));
  dirs.push(dir);
  return dir;
};

afterEach(async () => {
  for (const child of children.splice(0))
    if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  await receiver?.close();
  receiver = undefined;
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('svc simulate platform', () => {
  it('prints a config Svc loads, serves it over mutual TLS, switches failures, sends user events, and stops on SIGINT with 0', async () => {
    receiver = await startReceiver();
    const r = receiver;
    const dir = tempDir();
    const child = start([
      ...FREE_PORTS,
      '--servers',
      '2',
      '--seed',
      '7',
      '--cert-dir',
      join(dir, 'certs'),
      '--passphrase',
      'pass phrase',
      '--control-port',
      '0',
      '--fail',
      'node2=http-500',
      '--udp-target',
      `127.0.0.1:${r.port}`,
      '--udp-rate',
      '200',
    ]);
    await expect.poll(() => child.stderr(), { timeout: 20_000 }).toContain('the Svc config is on stdout');
    await expect.poll(() => child.stdout()).toContain('hostIP: 127.0.0.1:');

    // stdout is the config, nothing else: Svc's loader reads it as a file.
    const file = join(dir, 'svc.yaml');
    writeFileSync(file, child.stdout());
    const { config } = loadConfigFile(file);
    expect(config.cert.clientCertPassphrase).toBe('pass phrase');
    expect(config.serversToMonitor.servers.map((s) => s.serverName)).toEqual(['node1', 'node2']);
    expect(child.stderr()).toMatch(
      /^svc simulate platform: 2 servers on 127\.0\.0\.1, seed 7, one step per 1000 ms; Ctrl-C stops\n/,
    );
    expect(child.stderr()).toContain(
      `certificates written to ${join(dir, 'certs')}; the client key is passphrase-protected`,
    );
    expect(child.stderr()).toContain('failing: node2 http-500');

    // Poll as Svc would, from the config alone.
    const tls = svcClient({
      ...config.cert,
      directory: '',
      serverCert: '',
      serverKey: '',
      passphrase: config.cert.clientCertPassphrase,
    });
    const [node1, node2] = config.serversToMonitor.servers;
    const reply = await get(`https://${node1?.host ?? ''}/engine/healthcheck`, tls);
    expect(reply.status).toBe(200);
    expect(Value.Check(HealthBodySchema, json(reply))).toBe(true);
    expect((await get(`https://${node2?.host ?? ''}/engine/healthcheck`, tls)).status).toBe(500);
    const sessions = await get(withKey(`https://${node1?.userSessions.host ?? ''}/qps/hdr/session`), tls, {
      'X-Qlik-Xrfkey': XRFKEY,
    });
    expect(sessions.status).toBe(200);
    const apps = json(
      await get(withKey(`https://${config.appNames.hostIP}/qrs/app`, 'xrfkey'), tls, {
        'X-Qlik-Xrfkey': XRFKEY,
        'X-Qlik-User': SA_REPOSITORY,
      }),
    );
    const appIds = new Set(Array.isArray(apps) ? apps.map((a: { id?: unknown }) => String(a.id)) : []);
    expect(appIds.size).toBe(12);

    // The control endpoint heals node2 while the simulator runs.
    const control = /control (http:\/\/127\.0\.0\.1:\d+)/.exec(child.stderr())?.[1] ?? '';
    expect((await fetch(`${control}/heal/node2`, { method: 'POST' })).status).toBe(200);
    expect((await get(`https://${node2?.host ?? ''}/engine/healthcheck`, tls)).status).toBe(200);

    // User events of the simulated platform: their apps are in the app list.
    await expect.poll(() => r.datagrams.length, { timeout: 15_000 }).toBeGreaterThanOrEqual(40);
    let withApp = 0;
    for (const datagram of r.datagrams) {
      const result = parseUserEvent(datagram, Date.now());
      expect(result.ok).toBe(true);
      if (!result.ok || result.event.appId === undefined) continue;
      withApp++;
      expect(appIds.has(result.event.appId)).toBe(true);
    }
    expect(withApp).toBeGreaterThan(0);

    child.process.kill('SIGINT');
    expect(await child.exited).toBe(0);
    expect(child.stderr()).toMatch(
      /svc simulate platform: stopped after \d+\.\d{3} s at step \d+: health [1-9]\d* ok, 1 failed, 0 rejected; sessions 1 ok, 0 failed, 0 rejected; app list 1 ok, 0 failed, 0 rejected; 0 not found; 0 TLS handshakes refused\n/,
    );
    expect(child.stderr()).toMatch(
      new RegExp(
        `sent \\d+ datagrams to 127\\.0\\.0\\.1:${r.port} .*user-session \\d+, user-connection \\d+, malformed 0, 0 send errors; seed 7\\n$`,
      ),
    );
    // Stopped: its listeners are closed.
    expect(await canConnect(Number(node1?.host.split(':')[1]))).toBe(false);
  });

  it('stops by itself after --duration, and on SIGTERM, with 0; a second run reuses the certificates', async () => {
    const certs = join(tempDir(), 'certs');
    const timed = await run([...FREE_PORTS, '--servers', '1', '--duration', '0.5', '--cert-dir', certs]);
    expect(timed.status).toBe(0);
    expect(timed.stderr).toContain(`certificates written to ${certs}`);
    expect(timed.stderr).toMatch(/stopped after \d+\.\d{3} s at step 0: /);

    const child = start([...FREE_PORTS, '--servers', '1', '--cert-dir', certs]);
    await expect.poll(() => child.stderr(), { timeout: 20_000 }).toContain('the Svc config is on stdout');
    expect(child.stderr()).toContain(`certificates reused from ${certs}`);
    child.process.kill('SIGTERM');
    expect(await child.exited).toBe(0);
  });

  it('documents the APIs, the config on stdout and the failure modes in --help', async () => {
    const help = await cli(['--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: svc simulate platform \[options\]/);
    for (const text of [
      '--servers <n>',
      '--base-port <port>',
      '--proxy-base-port <port>',
      '--app-port <port>',
      '--virtual-proxies <list>',
      '--cert-dir <dir>',
      '--passphrase <text>',
      '--fail <target=mode>',
      '--control-port <port>',
      '--seed <n>',
      '--step <ms>',
      '--duration <s>',
      '--udp-target <host:port>',
      '--udp-log-target <host:port>',
      '--udp-rate <n>',
      'cert-reject',
      'appNames.hostIP',
    ]) {
      expect(help.stdout).toContain(text);
    }
  });
});

describe('svc simulate platform options (in-process: nothing starts)', () => {
  it('refuses invalid options with 2, naming each', async () => {
    const bad = await cli([
      '--base-port',
      '4000',
      '--proxy-base-port',
      '4001',
      '--fail',
      'node9=timeout',
      '--virtual-proxies',
      '/,/a/b',
    ]);
    expect(bad.status).toBe(2);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(
      [
        'error: --virtual-proxies: "/a/b" must be "/" or "/" and one path segment of letters, digits, . _ ~ - (e.g. /hdr)',
        'error: --base-port (ports 4000–4002) and --proxy-base-port (ports 4001–4003) overlap',
        'error: --fail: target "node9" is not a server name (node1, node2, node3), "apps" or "all"',
        '(run with --help for usage)',
        '',
      ].join('\n'),
    );
    for (const [args, message] of [
      [['--servers', '0'], "error: option '--servers <n>' argument '0' is invalid. must be an integer 1–2000"],
      [
        ['--base-port', '70000'],
        "error: option '--base-port <port>' argument '70000' is invalid. must be a port 0–65535",
      ],
      [['--servers', '10', '--base-port', '65530'], 'error: --base-port 65530 with 10 servers goes past port 65535'],
      [
        ['--fail', 'node1'],
        "error: option '--fail <target=mode>' argument 'node1' is invalid. expected <target>=<mode>, e.g. node2=timeout",
      ],
      [['--fail', 'node1=explode'], 'mode "explode" is not one of http-500, timeout, bad-body, cert-reject'],
      [['--step', '5'], 'error: --step must be 0 or an integer 10–86400000 (got 5)'],
      [['--host', '::1'], "error: --host must be an IPv4 address (Svc's servers[].host cannot hold an IPv6 one)"],
      [['--udp-target', 'nohost'], "error: option '--udp-target <host:port>' argument 'nohost' is invalid."],
      [['--udp-rate', '0'], "error: option '--udp-rate <n>' argument '0' is invalid."],
      [['--duration', '-1'], "error: option '--duration <s>' argument '-1' is invalid."],
    ] as const) {
      const result = await cli([...args]);
      expect(result.status, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });

  it('exits 1 naming the port when one is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const address = blocker.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    try {
      const result = await cli([
        '--base-port',
        '0',
        '--proxy-base-port',
        '0',
        '--app-port',
        String(port),
        '--cert-dir',
        join(tempDir(), 'certs'),
      ]);
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(
        `svc: simulate platform: cannot listen on 127.0.0.1:${port} (app-list API): EADDRINUSE\n`,
      );
    } finally {
      blocker.close();
    }
  });
});

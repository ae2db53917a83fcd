/**
 * The release's single executables (scripts/release/executables.mjs), built once for this file from
 * the current dist/ into a temporary folder. The Linux one is copied alone into an empty folder and
 * run there with a clean environment: a PATH of one empty folder (no node, and not /usr/bin, where
 * this machine's Node 20 is) and a HOME of its own, nothing of this process's environment. Every
 * command is run as an operator would, against real servers (its own audit API, the platform
 * simulator it carries, mosquitto). The Windows one is checked as a file: a PE image with the blob
 * injected; wine runs it when installed.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { makeCertificates, writeCertificates } from '../../edge-agent/simulate/platform/certs.js';
import { SVC_VERSION } from '../../shared/version.js';
import { envelope } from '../support/audit.js';
import { REPO_ROOT } from '../support/build.js';
import { type MosquittoHandle, startMosquitto } from '../support/mosquitto.js';
import { freePort, LOOPBACK } from '../support/ports.js';
import { scrape } from '../support/prometheus.js';
import { emailChannelTo, type SmtpServer, startSmtpServer } from '../support/smtp.js';
import {
  filesIn,
  logLines,
  parquetEventIds,
  postAuditEvent,
  type SvcProcess,
  startProgram,
} from '../support/svc-process.js';

/** The sentinel of Node's single executables: `:0` in node as shipped, `:1` once a blob is injected. */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const NODE_VERSION = '24.21.0';
const COMMIT = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }).trim();

let build: string;
/** The folder holding the Linux executable and nothing else, before each test's files. */
let home: string;
let svc: string;
/** An empty folder: the whole PATH of every run. */
let emptyPath: string;

/** The clean environment of every run (plus `extra`). */
const cleanEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ PATH: emptyPath, HOME: home, ...extra });

/** Runs the executable to its end in `cwd`. */
function run(args: readonly string[], cwd = home, env: NodeJS.ProcessEnv = {}) {
  return spawnSync(svc, [...args], { cwd, env: cleanEnv(env), encoding: 'utf8', timeout: 30_000 });
}

/** A fresh working folder with `svc.yaml` holding `config`. */
function workFolder(name: string, config: unknown): string {
  const cwd = join(home, name);
  mkdirSync(cwd);
  writeFileSync(join(cwd, 'svc.yaml'), stringify(config));
  return cwd;
}

/** Starts a service command of the executable and waits for its "running" line. */
async function startService(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<SvcProcess> {
  const started = startProgram(svc, cwd, args, cleanEnv(env));
  await expect.poll(started.output, { timeout: 20_000 }).toMatch(/"msg":"svc (local|edge) \S+ running/);
  return started;
}

beforeAll(() => {
  build = mkdtempSync(join(tmpdir(), 'svc-release-'));
  const made = spawnSync(
    process.execPath,
    [
      'scripts/release/executables.mjs',
      '--target',
      'linux-x64',
      '--target',
      'linux-arm64',
      '--target',
      'win-x64',
    ].concat(['--out', build]),
    { cwd: REPO_ROOT, encoding: 'utf8' },
  );
  if (made.status !== 0) throw new Error(`the release build failed:\n${made.stdout}${made.stderr}`);
  home = mkdtempSync(join(tmpdir(), 'svc-exe-'));
  emptyPath = mkdtempSync(join(tmpdir(), 'svc-exe-path-'));
  svc = join(home, 'svc');
  copyFileSync(join(build, 'linux-x64', 'svc'), svc);
  execFileSync('chmod', ['755', svc]);
}, 240_000);

afterAll(() => {
  for (const dir of [build, home, emptyPath]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the Linux single executable, alone in a folder, in a clean environment', () => {
  it('says its version, the commit it was built from, its Node.js and that it is the single executable', () => {
    const version = run(['--version']);
    expect(version.stderr).toBe('');
    expect(version.status).toBe(0);
    expect(version.stdout).toBe(`svc 15.0.0\ncommit: ${COMMIT}\nnode: ${NODE_VERSION}\nruns as: single executable\n`);
  });

  it('validates a config, and names the key and the problem of a bad one', () => {
    const cwd = workFolder('validate', { Svc: { logLevel: 'info', localQueue: { directory: 'queue' } } });
    const valid = run(['validate-config', '--config', 'svc.yaml'], cwd);
    expect(valid.stderr).toBe('');
    expect(valid.stdout).toBe('svc.yaml: configuration is valid\n');
    expect(valid.status).toBe(0);

    writeFileSync(join(cwd, 'bad.yaml'), 'Svc:\n  logLevel: loud\n');
    const bad = run(['validate-config', '--config', 'bad.yaml'], cwd);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('bad.yaml:2:13 Svc.logLevel:');
  });

  it('`local` answers test-connection, takes audit events that land in parquet, serves the config view from itself, and loses none of its queue on SIGTERM', async () => {
    const [auditPort, webPort] = [await freePort(), await freePort()];
    const cwd = workFolder('local', {
      Svc: {
        localQueue: { directory: 'queue' },
        systemInfo: { enable: false },
        configVisualisation: { enable: true, host: LOOPBACK, port: webPort },
        auditEvents: {
          enable: true,
          port: auditPort,
          rateLimit: { enable: false },
          // A long batching window: at SIGTERM the events are still only in the queue.
          destination: {
            enable: true,
            type: 'parquet',
            parquet: { exportDirectory: 'out', writeFrequency: 600_000, maxBatchSize: 100_000 },
          },
        },
      },
    });
    const local = await startService(cwd, ['local', '--config', 'svc.yaml']);
    try {
      const hello = await fetch(`http://${LOOPBACK}:${auditPort}/api/v1/test-connection`);
      expect(hello.status).toBe(200);
      expect(await hello.json()).toMatchObject({ status: 'ok' });

      const sent = [envelope(), envelope(), envelope()];
      for (const body of sent) expect((await postAuditEvent(auditPort, body)).status).toBe(202);
      expect(filesIn(join(cwd, 'out'), '.parquet')).toEqual([]);

      // The config view's pages, and the chart library the status page loads, byte for byte from the executable.
      const page = await fetch(`http://${LOOPBACK}:${webPort}/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('/style.css');
      const status = await fetch(`http://${LOOPBACK}:${webPort}/status`);
      expect(await status.text()).toContain('/uPlot.iife.min.js');
      const chart = await fetch(`http://${LOOPBACK}:${webPort}/uPlot.iife.min.js`);
      expect(chart.status).toBe(200);
      expect(Buffer.from(await chart.arrayBuffer())).toEqual(
        readFileSync(join(REPO_ROOT, 'node_modules/uplot/dist/uPlot.iife.min.js')),
      );
      for (const asset of [
        '/style.css',
        '/config.js',
        '/status.js',
        '/history.js',
        '/servers.js',
        '/logo.svg',
        '/uPlot.min.css',
      ])
        expect((await fetch(`http://${LOOPBACK}:${webPort}${asset}`)).status, asset).toBe(200);
    } finally {
      local.child.kill('SIGTERM');
    }
    expect(await local.exited).toBe(0);
    expect(logLines(local.output()).map((l) => l.msg)).toContain('shutdown complete');
    // A clean stop delivers what the queue holds: every accepted event is in a parquet file.
    expect((await parquetEventIds(join(cwd, 'out'))).length).toBe(3);
  });

  it('`simulate platform` and `edge` polling it over mutual TLS: gauges on the metrics endpoint, events through the bundled MQTT client, an alert through the bundled nodemailer and the same MQTT connection', async () => {
    const cwd = join(home, 'edge');
    mkdirSync(cwd);
    const smtpCerts = writeCertificates(
      join(cwd, 'smtp-certs'),
      makeCertificates(['127.0.0.1', 'localhost'], { commonName: 'SMTP executable CA' }),
    );
    const [broker, smtp]: [MosquittoHandle, SmtpServer] = await Promise.all([
      startMosquitto(),
      startSmtpServer({
        mode: 'starttls',
        certFile: smtpCerts.serverCert,
        keyFile: smtpCerts.serverKey,
        user: 'svc',
        password: 'exe-Smtp-Pass-1',
      }),
    ]);
    const simulator = startProgram(
      svc,
      cwd,
      ['simulate', 'platform', '--servers', '1', '--seed', '7'].concat([
        '--base-port',
        '0',
        '--proxy-base-port',
        '0',
        '--app-port',
        '0',
        '--cert-dir',
        'certs',
      ]),
      cleanEnv(),
    );
    const subscriber = await mqtt.connectAsync(broker.url);
    let edge: SvcProcess | undefined;
    try {
      await subscriber.subscribeAsync('exe/#');
      const topics: string[] = [];
      subscriber.on('message', (topic) => topics.push(topic));
      await expect.poll(simulator.output, { timeout: 20_000 }).toContain('the Svc config is on stdout');
      await expect.poll(() => simulator.output().includes('Svc:'), { timeout: 5_000 }).toBe(true);
      // stdout holds the config (YAML); stderr's lines go to the same output, each starting "svc simulate" or blank-indented.
      const yaml = simulator
        .output()
        .split('\n')
        .filter((line) => !/^(svc simulate|  (node\d|app list|certificates|the Svc))/.test(line))
        .join('\n');
      const config = parse(yaml) as { Svc: Record<string, unknown> };
      const metricsPort = await freePort();
      writeFileSync(
        join(cwd, 'svc.yaml'),
        stringify({
          Svc: {
            ...config.Svc,
            localQueue: { directory: 'queue' },
            systemInfo: { enable: false },
            metricsEndpoint: { enable: true, host: LOOPBACK, port: metricsPort },
            mqttConfig: { enable: true, brokerHost: LOOPBACK, brokerPort: broker.port, baseTopic: 'exe/' },
            // A rule that holds as soon as a poll answers: its alert goes out by e-mail and MQTT.
            alerts: {
              evaluationInterval: '1s',
              groupWait: '0',
              rules: [
                { name: 'serverAnswers', expr: { field: 'server.up', op: '==', threshold: 1 }, severity: 'info' },
              ],
              channels: [
                emailChannelTo(smtp, { user: 'svc', password: 'exe-Smtp-Pass-1', caFile: smtpCerts.clientCertCA }, [
                  'ops@example.com',
                ]),
                { name: 'bus', type: 'mqtt', topic: 'exe/alerts' },
              ],
            },
          },
        }),
      );
      edge = await startService(cwd, ['edge', '--config', 'svc.yaml']);
      await expect
        .poll(
          async () =>
            (await scrape(`http://${LOOPBACK}:${metricsPort}/metrics`)).metrics.series('svc_cpu_total').length,
          { timeout: 20_000 },
        )
        .toBe(1);
      await expect.poll(() => topics.length, { timeout: 15_000 }).toBeGreaterThan(0);
      await expect.poll(() => topics.includes('exe/alerts'), { timeout: 20_000 }).toBe(true);
      await expect.poll(async () => (await smtp.messages()).length, { timeout: 20_000 }).toBeGreaterThan(0);
      const [mail] = await smtp.messages();
      expect(mail).toMatchObject({ tls: true, authenticated: true, rcptTos: ['ops@example.com'] });
      expect(mail?.content).toContain('serverAnswers');
      // One connection to the broker carries the events and the alert.
      const lines = logLines(edge.output()).map((line) => line.msg);
      expect(lines.filter((msg) => msg.startsWith('connected to the MQTT broker'))).toHaveLength(1);
    } finally {
      edge?.child.kill('SIGTERM');
      simulator.child.kill('SIGTERM');
      await subscriber.endAsync();
      await Promise.all([broker.stop(), smtp.stop()]);
    }
    expect(await edge?.exited).toBe(0);
    expect(await simulator.exited).toBe(0);
  });

  it('`demo` runs on the base config it carries, and `dlq replay` reads the queue folder', async () => {
    const cwd = join(home, 'demo');
    mkdirSync(cwd);
    const demo = startProgram(svc, cwd, ['demo', '--servers', '1', '--seed', '7', '--udp-rate', '0'], cleanEnv());
    try {
      await expect.poll(demo.output, { timeout: 30_000 }).toContain('svc demo: running');
    } finally {
      demo.child.kill('SIGTERM');
    }
    expect(await demo.exited).toBe(0);
    writeFileSync(join(cwd, 'replay.yaml'), stringify({ Svc: { localQueue: { directory: 'data/demo/queue' } } }));
    const replay = run(['dlq', 'replay', '--config', 'replay.yaml'], cwd);
    expect(replay.stderr).toBe('');
    expect(replay.stdout).toMatch(/^no dead letters to replay in data\/demo\/queue\n$/);
    expect(replay.status).toBe(0);
  });

  it('runs with the launchers\' --max-semi-space-size=16, and writes crash dumps that say "SEA (packaged)"', async () => {
    const cwd = workFolder('crash', { Svc: { localQueue: { directory: 'queue' }, systemInfo: { enable: false } } });
    // The exception comes from a script Node preloads (NODE_OPTIONS works in a single executable as in
    // node): once Svc's crash handlers listen, it throws on its own timer, uncaught.
    writeFileSync(
      join(cwd, 'crash.cjs'),
      [
        'const t = setInterval(() => {',
        "  if (process.listenerCount('uncaughtException') === 0) return;",
        '  clearInterval(t);',
        // What Svc runs with (read once it runs: a preloaded script runs before the blob's execArgv is applied).
        "  require('node:fs').writeFileSync('exec-argv.json', JSON.stringify(process.execArgv));",
        "  throw new Error('forced crash');",
        '}, 20);',
        '',
      ].join('\n'),
    );
    const crashing = startProgram(
      svc,
      cwd,
      ['edge', '--config', 'svc.yaml'],
      cleanEnv({ NODE_OPTIONS: `--require ${join(cwd, 'crash.cjs')}` }),
    );
    expect(await crashing.exited).toBe(1);
    const [json] = filesIn(join(cwd, 'crash_dumps'), '.json');
    const [text] = filesIn(join(cwd, 'crash_dumps'), '.txt');
    expect(JSON.parse(readFileSync(json ?? '', 'utf8'))).toMatchObject({
      runtime: { isSea: true, nodeVersion: NODE_VERSION },
      error: { message: 'forced crash' },
    });
    expect(readFileSync(text ?? '', 'utf8')).toContain('Executable: SEA (packaged)');
    expect(JSON.parse(readFileSync(join(cwd, 'exec-argv.json'), 'utf8'))).toEqual(['--max-semi-space-size=16']);
  });
});

describe('the other targets, as files (nothing here runs them: wine cannot start Node 24, no arm64 machine)', () => {
  it('the win-x64 one is a PE image with the blob injected as the NODE_SEA_BLOB resource and the fuse flipped', () => {
    const exe = readFileSync(join(build, 'win-x64', 'svc.exe'));
    expect(exe.subarray(0, 2).toString('latin1')).toBe('MZ');
    const peOffset = exe.readUInt32LE(0x3c);
    expect(exe.subarray(peOffset, peOffset + 4)).toEqual(Buffer.from('PE\0\0', 'latin1'));
    // Machine: AMD64.
    expect(exe.readUInt16LE(peOffset + 4)).toBe(0x8664);
    // Resource names are UTF-16LE in the resource directory.
    expect(exe.includes(Buffer.from('NODE_SEA_BLOB', 'utf16le'))).toBe(true);
    expect(exe.includes(Buffer.from(`${FUSE}:1`))).toBe(true);
    expect(exe.includes(Buffer.from(`${FUSE}:0`))).toBe(false);
    // The bundle is in it: the blob holds the CLI's source.
    expect(exe.includes(Buffer.from('the Svc config is on stdout'))).toBe(true);
  });

  for (const [target, machine] of [
    ['linux-x64', 0x3e],
    ['linux-arm64', 0xb7],
  ] as const)
    it(`the ${target} one is an ELF image of its machine with the same blob injected`, () => {
      const exe = readFileSync(join(build, target, 'svc'));
      expect(exe.subarray(0, 4)).toEqual(Buffer.from('\x7fELF', 'latin1'));
      expect(exe.readUInt16LE(18)).toBe(machine);
      expect(exe.includes(Buffer.from(`${FUSE}:1`))).toBe(true);
      expect(exe.includes(Buffer.from(`${FUSE}:0`))).toBe(false);
      expect(exe.includes(Buffer.from('the Svc config is on stdout'))).toBe(true);
    });
});

describe('the release archives around the real executables (archives.mjs on this build)', () => {
  let out: string;
  let unpacked: string;

  beforeAll(() => {
    out = mkdtempSync(join(tmpdir(), 'svc-release-out-'));
    const made = spawnSync(
      process.execPath,
      [join(REPO_ROOT, 'scripts/release/archives.mjs'), '--build', build, '--out', out],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`archives.mjs failed:\n${made.stdout}${made.stderr}`);
    unpacked = mkdtempSync(join(tmpdir(), 'svc-release-unpacked-'));
    execFileSync('tar', ['-xzf', join(out, `svc-${SVC_VERSION}-linux-x64.tar.gz`), '-C', unpacked]);
  }, 120_000);

  afterAll(() => {
    for (const dir of [out, unpacked]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('the Linux archive unpacked: its svc is the single executable, and it finds the shipped svc.yaml valid', () => {
    const folder = join(unpacked, `svc-${SVC_VERSION}-linux-x64`);
    const inArchive = (args: readonly string[]) =>
      spawnSync(join(folder, 'svc'), [...args], { cwd: folder, env: cleanEnv(), encoding: 'utf8', timeout: 30_000 });
    const version = inArchive(['--version']);
    expect(version.stdout).toContain('runs as: single executable\n');
    const valid = inArchive(['validate-config', '--config', 'svc.yaml']);
    expect([valid.status, valid.stdout, valid.stderr]).toEqual([0, 'svc.yaml: configuration is valid\n', '']);
  });

  it('each archive holds the executable built for its target, byte for byte, and SHA256SUMS verifies them', () => {
    const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
    expect(sha(join(unpacked, `svc-${SVC_VERSION}-linux-x64`, 'svc'))).toBe(sha(join(build, 'linux-x64', 'svc')));
    const exe = execFileSync(
      'unzip',
      ['-p', join(out, `svc-${SVC_VERSION}-win-x64.zip`), `svc-${SVC_VERSION}-win-x64/svc.exe`],
      {
        maxBuffer: 512 * 1024 * 1024,
      },
    );
    expect(createHash('sha256').update(exe).digest('hex')).toBe(sha(join(build, 'win-x64', 'svc.exe')));
    const check = spawnSync('sha256sum', ['-c', 'SHA256SUMS'], { cwd: out, encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    expect(check.stdout.trim().split('\n')).toHaveLength(3);
  });
});

/** The `svc` command as a user runs it: the linked bin in node_modules/.bin, real child processes. */
import { type SpawnSyncReturns, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../shared/audit/envelope.js';
import { LocalEventQueue } from '../../shared/queue/local/index.js';
import { envelope } from '../support/audit.js';
import { REPO_ROOT } from '../support/build.js';
import { silentLog } from '../support/log.js';
import { trackChild } from '../support/ports.js';

const SVC = join(REPO_ROOT, 'node_modules/.bin/svc');
/** The not-built-yet warnings every config gets unless it switches these defaults off (none: every default-on feature is built). */
const DEFAULT_NOT_BUILT: string[] = [];

function svc(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  return spawnSync(SVC, args, {
    cwd: opts.cwd ?? REPO_ROOT,
    encoding: 'utf8',
    env: { ...process.env, SVC_CONFIG: '', ...opts.env },
    timeout: 20_000,
  });
}

function tempConfig(text: string, name = 'svc.yaml'): { dir: string; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return { dir, file };
}

describe('svc command line', () => {
  it("is the project's own CLI through `npx --no-install svc`", () => {
    const run = spawnSync('npx', ['--no-install', 'svc', '--version'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status).toBe(0);
    // The version, the checkout's commit, the pinned Node.js, and that it runs on Node.js (not the single executable).
    const commit = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    }).stdout.trim();
    expect(run.stdout).toMatch(
      new RegExp(
        `^svc 15\\.0\\.0\ncommit: ${commit}\nnode: 24\\.\\d+\\.\\d+\nruns as: Node\\.js \\(${REPO_ROOT}node_modules/.+/node\\)\n$`,
      ),
    );
  });

  it('says "unknown" for the commit outside a git checkout', () => {
    // A copy of the built files, as an install that is not a checkout has them.
    const copy = mkdtempSync(join(tmpdir(), 'svc-nogit-'));
    cpSync(join(REPO_ROOT, 'dist'), join(copy, 'dist'), { recursive: true });
    cpSync(join(REPO_ROOT, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'));
    const run = spawnSync(process.execPath, [join(copy, 'dist/edge-agent/cli/main.js'), '--version'], {
      cwd: copy,
      encoding: 'utf8',
      timeout: 20_000,
    });
    rmSync(copy, { recursive: true, force: true });
    expect(run.status).toBe(0);
    expect(run.stdout.split('\n')[1]).toBe('commit: unknown');
  });

  it('runs on the pinned Node 24 through `npx --no-install svc`, whatever Node runs npm', () => {
    const script = "process.stdout.write(process.versions.node + ' ' + process.execPath)";
    // The PATH a user's shell has: without the node_modules/.bin that `npm test` put first.
    const path = (process.env['PATH'] ?? '')
      .split(delimiter)
      .filter((dir) => !dir.includes('node_modules'))
      .join(delimiter);
    const run = spawnSync('npx', ['--no-install', 'node', '-e', script], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, PATH: path },
    });
    expect(run.status).toBe(0);
    const [version, execPath] = run.stdout.split(' ');
    expect(version?.split('.')[0]).toBe('24');
    expect(execPath).toContain(join(REPO_ROOT, 'node_modules'));
  });

  it('refuses to start on a Node older than 24 with one line naming the version it needs', () => {
    // The running Node made to say it is 20, before the bin's check reads it.
    const older =
      'data:text/javascript,Object.defineProperty(process, "versions", { value: { ...process.versions, node: "20.20.2" } });';
    const run = spawnSync(
      process.execPath,
      ['--import', older, join(REPO_ROOT, 'edge-agent/bin/svc.js'), '--version'],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        timeout: 20_000,
      },
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.split('\n').filter((l) => l !== '')).toEqual([
      expect.stringMatching(/^svc needs Node\.js 24 or later; this is Node\.js 20\.20\.2 \(.+\)\. /),
    ]);
  });

  it('prints help for every command and exits 0', () => {
    for (const args of [['--help'], ['validate-config', '--help'], ['local', '--help'], ['edge', '--help']]) {
      const run = svc(args);
      expect(run.status, args.join(' ')).toBe(0);
      expect(run.stdout).toMatch(/^Usage: svc/);
      expect(run.stdout).toContain('--help');
    }
  });

  it('exits 2 on usage errors', () => {
    expect(svc([]).status).toBe(2);
    const unknown = svc(['launch']);
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toContain("unknown command 'launch'");
    expect(svc(['validate-config', '--frobnicate']).status).toBe(2);
    expect(svc(['validate-config', '--config']).status).toBe(2);
  });

  it('validate-config warns about a typo that leaves a section off, with its line and the key it meant', () => {
    const { file } = tempConfig('Svc:\n  metricsEndpoint:\n    enabel: true\n    port: "abc"\n');
    const run = svc(['validate-config', '--config', file]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${file}: configuration is valid\n`);
    expect(run.stderr).toBe(
      `warning: ${file}:3:5 Svc.metricsEndpoint.enabel: unknown key; did you mean "enable"? (Svc.metricsEndpoint is off: nothing in it is checked or used)\n`,
    );
  });

  it('validates config/full.yaml, config/local.yaml, config/demo.yaml and config/udp-demo.yaml (warning only about the not-built features on by default)', () => {
    for (const file of ['config/full.yaml', 'config/local.yaml', 'config/demo.yaml', 'config/udp-demo.yaml']) {
      const run = svc(['validate-config', '--config', file]);
      expect(run.stderr).toBe(DEFAULT_NOT_BUILT.map((w) => `warning: ${w}\n`).join(''));
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(`${file}: configuration is valid\n`);
    }
  });

  it('warns about no switch of the operator features: every feature of the schema is built', () => {
    const { file } = tempConfig(
      [
        'Svc:',
        '  heartbeat: {enable: true, remoteURL: "https://alive.example.com/"}',
        '  containerHealthCheck: {enable: true}',
        '  configVisualisation: {enable: true}',
        '',
      ].join('\n'),
    );
    const run = svc(['validate-config', '--config', file]);
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(`${file}: configuration is valid\n`);
    // Every feature the schema has is built: no switch is warned about.
    expect(run.stderr).toBe('');
  });

  it('--help describes only what is built: no forwarding to the cloud', () => {
    const help = (args: string[]) => {
      const run = svc(args);
      expect(run.status, args.join(' ')).toBe(0);
      return run.stdout.replace(/\s+/g, ' ');
    };
    for (const args of [['--help'], ['local', '--help'], ['validate-config', '--help'], ['demo', '--help']]) {
      expect(help(args), args.join(' ')).not.toMatch(/forwarding to|SQS|cloud/i);
    }
    const edge = help(['edge', '--help']);
    expect(edge).not.toMatch(/forwarding to|SQS|cloud/i);
    expect(edge).toContain(
      'run the edge agent: the UDP listeners and the platform pollers, with the durable local queue and the writers behind them (no audit API)',
    );
  });

  it('reports all problems of a bad file with line and column and exits 1', () => {
    const { file } = tempConfig(
      'Svc:\n  logLevel: loud\n  tsdbConfig:\n    enable: true\n    port: eighty\n    hots: x\n',
    );
    const run = svc(['validate-config', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stderr.split('\n').filter((l) => l.startsWith('  '))).toEqual([
      `  ${file}:2:13 Svc.logLevel: must be one of silly, debug, verbose, info, warn, error (got "loud")`,
      `  ${file}:5:11 Svc.tsdbConfig.port: must be an integer between 1 and 65535 (got "eighty")`,
      `  ${file}:6:5 Svc.tsdbConfig.hots: unknown key; did you mean "host"?`,
    ]);
  });

  it('takes SVC_CONFIG when --config is absent, else ./config/svc.yaml', () => {
    const { file } = tempConfig('Svc: {}\n', 'from-env.yml');
    const viaEnv = svc(['validate-config'], { env: { SVC_CONFIG: file } });
    expect(viaEnv.status).toBe(0);
    expect(viaEnv.stdout).toContain('from-env.yml: configuration is valid');

    const cwd = mkdtempSync(join(tmpdir(), 'svc-cwd-'));
    const missing = svc(['validate-config'], { cwd });
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('./config/svc.yaml cannot read the config file: no such file');
    mkdirSync(join(cwd, 'config'));
    writeFileSync(join(cwd, 'config', 'svc.yaml'), 'Svc:\n  logLevel: debug\n');
    expect(svc(['validate-config'], { cwd }).status).toBe(0);
  });

  it('prints config warnings without failing', () => {
    const { file } = tempConfig('Svc:\n  userEvents:\n    enable: true\n    sendToTsdb:\n      enable: true\n');
    const run = svc(['validate-config', '--config', file]);
    expect(run.status).toBe(0);
    expect(run.stderr).toContain(
      'warning: Svc.userEvents.sendToTsdb.enable: is true but Svc.tsdbConfig.enable is false',
    );
  });

  it('`svc local` exits 1 on a bad config before starting anything', () => {
    const { file } = tempConfig('Svc:\n  anonTelemetry: true\n  systemInfo:\n    enable: false\n');
    const run = svc(['local', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/Svc\.anonTelemetry: .*Svc\.systemInfo\.enable is false/);
  });

  for (const mode of ['local', 'edge'] as const) {
    it(`\`svc ${mode}\` logs the loaded file, runs until SIGTERM, and exits 0 after a clean shutdown`, async () => {
      const { dir, file } = tempConfig('Svc:\n  logLevel: debug\n');
      const child = spawn(SVC, [mode, '--config', file], { cwd: dir, env: { ...process.env, SVC_CONFIG: '' } });
      trackChild(child);
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      await expect.poll(() => out, { timeout: 15_000 }).toContain('running');
      // The bin's shebang gives node the young generation Svc is measured with (edge-agent/bin/svc.js).
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      expect(argv.slice(1, 3)).toEqual(['--max-semi-space-size=16', join(REPO_ROOT, 'node_modules/.bin/svc')]);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lines = out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: string; msg: string; file?: string; chosenBy?: string });
      expect(lines[0]).toMatchObject({
        level: 'info',
        file,
        chosenBy: 'option',
        msg: `loaded configuration from ${file} (chosen by --config)`,
      });
      expect(lines.map((l) => l.msg)).toEqual(
        expect.arrayContaining([
          expect.stringMatching(new RegExp(`^svc ${mode} 15\\.0\\.0 running`)),
          'received SIGTERM: shutting down',
          'shutdown complete',
        ]),
      );
      // The same warnings as validate-config, at WARN, for the not-built features on by default.
      expect(lines.filter((l) => l.level === 'warn' && l.msg.includes('is not built yet')).map((l) => l.msg)).toEqual(
        DEFAULT_NOT_BUILT,
      );
    });
  }
});

describe('hostile config files are config errors: exit 1, `file:line:column Svc.path: problem`, no stack', () => {
  const noStack = (text: string) => expect(text).not.toMatch(/^\s+at |Error:|node:internal/m);

  it('answers an alias bomb, 10 MB of random bytes and a file of 40,000 unknown keys each with a short report', () => {
    const bomb = tempConfig(
      [
        'Svc:',
        '  a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]',
        ...'bcdefghi'.split('').map(
          (k, i) =>
            `  ${k}: &${k} [${Array(9)
              .fill(`*${'abcdefgh'[i] ?? ''}`)
              .join(', ')}]`,
        ),
        '',
      ].join('\n'),
    );
    const bombRun = svc(['validate-config', '--config', bomb.file]);
    expect(bombRun.status).toBe(1);
    expect(bombRun.stderr).toMatch(
      new RegExp(
        `^svc: the configuration in .* cannot be used \\(1 problem\\):\\n  ${bomb.file}:\\d+:\\d+ Svc\\.[a-i]\\[\\d+\\]: aliases expand to more than 10,000 values in total \\(a guard against alias bombs\\)\\n$`,
      ),
    );

    const random = tempConfig('');
    writeFileSync(random.file, randomBytes(10 * 1024 * 1024));
    const randomRun = svc(['validate-config', '--config', random.file]);
    expect(randomRun.status).toBe(1);
    expect(randomRun.stderr).toBe(
      `svc: the configuration in ${random.file} cannot be used (1 problem):\n  ${random.file} the file is 10.0 MiB; a config file may be at most 1.0 MiB (1,048,576 bytes)\n`,
    );

    const many = tempConfig(`Svc:\n${Array.from({ length: 40_000 }, (_, i) => `  unknownKey${i}: ${i}\n`).join('')}`);
    const manyRun = svc(['validate-config', '--config', many.file]);
    expect(manyRun.status).toBe(1);
    const lines = manyRun.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`svc: the configuration in ${many.file} cannot be used (40,000 problems):`);
    expect(lines).toHaveLength(52);
    expect(lines[1]).toMatch(
      new RegExp(`^  ${many.file}:2:3 Svc\\.unknownKey0: unknown key \\(known keys here: logLevel, `),
    );
    expect(lines[51]).toBe('  … and 39,950 more problems (fix these and check again)');
    expect(manyRun.stderr.length).toBeLessThan(40_000);
    for (const run of [bombRun, randomRun, manyRun]) {
      noStack(run.stderr);
      expect(run.stdout).toBe('');
    }
  });

  // In a child process: the old loader blocked in open() until a writer came, which no test timeout interrupts.
  it.skipIf(process.platform === 'win32')('refuses a named pipe at once instead of waiting for a writer', () => {
    const { dir } = tempConfig('');
    const fifo = join(dir, 'pipe.yaml');
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const run = svc(['validate-config', '--config', fifo]);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      `svc: the configuration in ${fifo} cannot be used (1 problem):\n  ${fifo} cannot read the config file: not a regular file\n`,
    );
  });

  it('never prints the value of a secret key', () => {
    const { file } = tempConfig('Svc:\n  auditEvents:\n    enable: true\n    apiToken: 94970565497315\n');
    const run = svc(['validate-config', '--config', file]);
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      `svc: the configuration in ${file} cannot be used (1 problem):\n  ${file}:4:15 Svc.auditEvents.apiToken: must be a string (got a number; the value of a secret is not shown)\n`,
    );
  });

  for (const mode of ['edge', 'local'] as const) {
    it(`\`svc ${mode}\` refuses to start when Svc.logDirectory cannot take log files, naming the key and the path`, () => {
      // Below a regular file: no directory can be made there, whoever runs the test (root included).
      const { dir, file } = tempConfig('Svc:\n  fileLogging: true\n  logDirectory: not-a-dir/log\n');
      writeFileSync(join(dir, 'not-a-dir'), 'a regular file');
      const run = svc([mode, '--config', file], { cwd: dir });
      expect(run.status).toBe(1);
      expect(run.stderr).toBe(
        `svc: cannot start: ${file} Svc.logDirectory: cannot write log files in ${join(dir, 'not-a-dir', 'log')}: a part of the path is a file, not a directory (Svc.fileLogging is true)\n`,
      );
      expect(run.stdout).toBe('');
    });
  }
});

describe('svc dlq replay', () => {
  it('puts dead letters of both queues (audit and UDP events) back for their destination, and says how many', async () => {
    const { dir, file } = tempConfig('Svc:\n  localQueue:\n    directory: queue\n    maxReceiveCount: 1\n');
    const checked = validateEnvelope(envelope());
    if (!checked.ok) throw new Error('fixture envelope is invalid');
    const silent = silentLog;
    const deadLetterOne = async (directory: string, group: string) => {
      const queue = new LocalEventQueue({
        directory,
        capacity: 10,
        maxReceiveCount: 1,
        log: silent,
        groups: [
          {
            name: group,
            batchSize: 10,
            batchWindowMs: 0,
            handler: (e) =>
              Promise.resolve({ batchItemFailures: e.Records.map((r) => ({ itemIdentifier: r.messageId })) }),
          },
        ],
      });
      await queue.start();
      await queue.send([
        {
          kind: 'audit',
          id: checked.envelope.eventId,
          receivedAt: new Date().toISOString(),
          event: checked.envelope,
          meta: { clientIp: '127.0.0.1', clientVersion: null },
        },
      ]);
      await expect.poll(() => queue.stats()[group]?.deadLettered).toBe(1);
      await queue.stop();
    };
    await deadLetterOne(join(dir, 'queue'), 'tsdb');
    await deadLetterOne(join(dir, 'queue', 'platform'), 'mqtt');
    const run = svc(['dlq', 'replay', '--config', file], { cwd: dir });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      'queue: tsdb: replayed 1 message(s) with 1 event(s)\nqueue/platform: mqtt: replayed 1 message(s) with 1 event(s)\n',
    );
    expect(svc(['dlq', 'replay', '--config', file], { cwd: dir }).stdout).toBe(
      'queue: tsdb: replayed 0 message(s) with 0 event(s)\nqueue/platform: mqtt: replayed 0 message(s) with 0 event(s)\n',
    );
  });
});

/** `svc simulate udp` as a user runs it: the linked bin in node_modules/.bin, a real child process, a UDP receiver on 127.0.0.1. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../../edge-agent/cli/program.js';
import { parseTarget } from '../../../edge-agent/simulate/cli-common.js';
import { createDatagramGenerator, DEFAULT_START_MS, LOG_KINDS } from '../../../edge-agent/simulate/messages.js';
import { REPO_ROOT } from '../../support/build.js';
import { trackChild } from '../../support/ports.js';
import { type Receiver, startReceiver } from './receiver.js';

const SVC = join(REPO_ROOT, 'node_modules/.bin/svc');

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs svc asynchronously, so the receiver in this process keeps reading while it sends. */
function svc(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(SVC, args, { cwd: REPO_ROOT, env: { ...process.env, SVC_CONFIG: '' } });
    trackChild(child);
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.once('error', reject);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

describe('svc simulate udp', () => {
  it('sends the seeded stream to the target and prints one summary line', async () => {
    receiver = await startReceiver();
    const r = receiver;
    const run = await svc([
      'simulate',
      'udp',
      '--target',
      `127.0.0.1:${r.port}`,
      '--kinds',
      'log',
      '--rate',
      '2000',
      '--count',
      '400',
      '--seed',
      '7',
    ]);
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^sent 400 datagrams to 127\\.0\\.0\\.1:${r.port} in \\d+\\.\\d{3} s \\(\\d+\\.\\d/s, target 2000/s\\): ` +
          'engine \\d+, proxy \\d+, repository \\d+, scheduler \\d+, qix-perf \\d+, malformed 0, 0 send errors; seed 7\\n$',
      ),
    );
    await expect.poll(() => r.datagrams.length).toBe(400);
    // --seed reproduces the stream: the simulated clock starts at DEFAULT_START_MS and steps 1/rate s.
    const generator = createDatagramGenerator({ seed: 7, kinds: LOG_KINDS, startMs: DEFAULT_START_MS, stepMs: 0.5 });
    const expected = Array.from({ length: 400 }, () => generator.next().data);
    expect(r.datagrams.every((d, i) => d.equals(expected[i] ?? Buffer.alloc(0)))).toBe(true);
    const counts =
      /engine (\d+), proxy (\d+), repository (\d+), scheduler (\d+), qix-perf (\d+)/
        .exec(run.stdout)
        ?.slice(1)
        .map(Number) ?? [];
    expect(counts.reduce((a, b) => a + b, 0)).toBe(400);
  });

  it('warns on stderr when the kinds mix both listeners, and counts malformed datagrams', async () => {
    receiver = await startReceiver();
    const r = receiver;
    const run = await svc([
      'simulate',
      'udp',
      '--target',
      `127.0.0.1:${r.port}`,
      '--kinds',
      'user-session,engine',
      '--malformed',
      '0.5',
      '--rate',
      '1000',
      '--count',
      '40',
      '--seed',
      '1',
    ]);
    expect(run.status).toBe(0);
    expect(run.stderr).toBe(
      `warning: --kinds mixes user kinds (listener port 9997) and log kinds (listener port 9996); all go to ${r.port}, so that listener counts the other family as unknown\n`,
    );
    expect(run.stdout).toMatch(
      /^sent 40 datagrams .*: user-session \d+, engine \d+, malformed [1-9]\d*, 0 send errors; seed 1\n$/,
    );
    await expect.poll(() => r.datagrams.length).toBe(40);
  });

  it('documents both listener ports in --help', async () => {
    const run = await svc(['simulate', 'udp', '--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: svc simulate udp \[options\]/);
    for (const text of [
      '--target <host:port>',
      '--rate <n>',
      '--duration <s>',
      '--kinds <list>',
      '--malformed <fraction>',
      '--seed <n>',
      '--count <n>',
    ]) {
      expect(run.stdout).toContain(text);
    }
    expect(run.stdout).toMatch(/user kinds go to the user-events port \(default 9997/);
    expect(run.stdout).toMatch(/log kinds to the log-events port\s+\(default 9996/);
  });

  it('exits 2 naming the option on a bad --target, --rate 0, an unknown kind or no --target', async () => {
    const cases: [string[], string][] = [
      [
        ['--target', 'localhost'],
        "error: option '--target <host:port>' argument 'localhost' is invalid. expected host:port (e.g. 127.0.0.1:9996)",
      ],
      [
        ['--target', '127.0.0.1:9996', '--rate', '0'],
        "error: option '--rate <n>' argument '0' is invalid. must be a number > 0 and ≤ 1000000 (got \"0\")",
      ],
      [
        ['--target', '127.0.0.1:9996', '--kinds', 'engine,bogus'],
        "error: option '--kinds <list>' argument 'engine,bogus' is invalid. unknown kind \"bogus\" (valid: ",
      ],
      [[], "error: required option '--target <host:port>' not specified"],
    ];
    const runs = await Promise.all(cases.map(([args]) => svc(['simulate', 'udp', ...args])));
    runs.forEach((run, i) => {
      const [args, message] = cases[i] ?? [[], ''];
      expect(run.status, args.join(' ')).toBe(2);
      expect(run.stderr, args.join(' ')).toContain(message);
      expect(run.stdout, args.join(' ')).toBe('');
    });
  });

  // The same parsing in-process (runCli is what the bin runs), so the many cases cost no child processes.
  it('rejects every invalid value with exit 2 and a message naming the option', async () => {
    const cases: [string[], string][] = [
      [
        ['--target', '300.1.1.1:9996'],
        "option '--target <host:port>' argument '300.1.1.1:9996' is invalid. \"300.1.1.1\" is neither an IPv4 address nor a host name",
      ],
      [['--target', '::1:9996'], 'an IPv6 address must be in brackets, e.g. [::1]:9996'],
      [['--target', '[::1]:0'], 'the port must be an integer 1–65535 (got "0")'],
      [['--target', '127.0.0.1:9996', '--rate', 'fast'], "option '--rate <n>' argument 'fast' is invalid"],
      [['--target', '127.0.0.1:9996', '--rate', '1000001'], "option '--rate <n>' argument '1000001' is invalid"],
      [
        ['--target', '127.0.0.1:9996', '--duration', '3601'],
        "option '--duration <s>' argument '3601' is invalid. must be a number of seconds > 0 and ≤ 3600",
      ],
      [['--target', '127.0.0.1:9996', '--duration', '0'], "option '--duration <s>' argument '0' is invalid"],
      [
        ['--target', '127.0.0.1:9996', '--kinds', ','],
        "option '--kinds <list>' argument ',' is invalid. no kind given",
      ],
      [
        ['--target', '127.0.0.1:9996', '--malformed', '2'],
        "option '--malformed <fraction>' argument '2' is invalid. must be a fraction between 0 and 1",
      ],
      [
        ['--target', '127.0.0.1:9996', '--seed', '1.5'],
        "option '--seed <n>' argument '1.5' is invalid. must be an integer between 0 and 4294967295",
      ],
      [['--target', '127.0.0.1:9996', '--seed', '4294967296'], "option '--seed <n>' argument '4294967296' is invalid"],
      [
        ['--target', '127.0.0.1:9996', '--count', '0'],
        "option '--count <n>' argument '0' is invalid. must be a positive integer",
      ],
      [
        ['--target', '127.0.0.1:9996', '--start', 'yesterday'],
        "option '--start <time>' argument 'yesterday' is invalid",
      ],
    ];
    for (const [args, message] of cases) {
      let out = '';
      let err = '';
      const code = await runCli(['simulate', 'udp', ...args], {
        out: (t) => (out += t),
        err: (t) => (err += t),
        env: {},
      });
      expect(code, args.join(' ')).toBe(2);
      expect(err, args.join(' ')).toContain(message);
      expect(out, args.join(' ')).toBe('');
    }
  });
});

describe('parseTarget', () => {
  it('takes IPv4, host names and bracketed IPv6 with a port', () => {
    expect(parseTarget('127.0.0.1:9996')).toEqual({ host: '127.0.0.1', port: 9996, family: 4 });
    expect(parseTarget('svc-host.lab.local:9997')).toEqual({ host: 'svc-host.lab.local', port: 9997, family: null });
    expect(parseTarget('localhost:1')).toEqual({ host: 'localhost', port: 1, family: null });
    expect(parseTarget('[::1]:9996')).toEqual({ host: '::1', port: 9996, family: 6 });
    expect(parseTarget('[fe80::1:2]:65535')).toEqual({ host: 'fe80::1:2', port: 65535, family: 6 });
  });

  it('rejects everything else with a reason', () => {
    for (const bad of [
      '',
      '127.0.0.1',
      ':9996',
      '127.0.0.1:',
      '127.0.0.1:65536',
      '127.0.0.1:-1',
      '127.0.0.1:9996x',
      '1.2.3:9996',
      'a_b:1',
      '-x:1',
      '[::1]',
      '[127.0.0.1]:1',
      '[::g]:1',
      'fe80::1:9996',
      'x'.repeat(64) + ':1',
    ]) {
      expect(parseTarget(bad), bad).toHaveProperty('error');
    }
  });
});

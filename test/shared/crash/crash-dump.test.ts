import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseConfigText } from '../../../shared/config/load.js';
import {
  buildCrashReport,
  type CrashDumpInput,
  type CrashDumpResult,
  type CrashHandlerDeps,
  crashConfigSummary,
  crashDumpBaseName,
  fatal,
  installCrashHandlers,
  redactText,
  renderCrashText,
  writeCrashDump,
} from '../../../shared/crash/crash-dump.js';
import { SVC_VERSION } from '../../../shared/version.js';
import { silentLog } from '../../support/log.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');
const CHILD = join(REPO, 'test/fixtures/crash/crash-child.mjs');
const tmpRoot = mkdtempSync(join(tmpdir(), 'svc-crash-'));
let dirCounter = 0;
const freshDir = (): string => join(tmpRoot, `d${++dirCounter}`);

afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

const SETTINGS_ALL: CrashDumpInput['settings'] = {
  enable: true,
  crashFileDirectory: '',
  crashFileCreateJson: true,
  crashFileCreateText: true,
};
const NOW = new Date(2024, 2, 12, 10, 15, 22, 123); // local time
const PID = 4242;
const BASE = 'crash_dump_20240312_101522_123_4242';

function input(dir: string, extra: Partial<CrashDumpInput> = {}): CrashDumpInput {
  return {
    source: 'uncaughtException',
    settings: { ...SETTINGS_ALL, crashFileDirectory: dir },
    summary: null,
    installDir: REPO,
    now: NOW,
    pid: PID,
    ...extra,
  };
}

const mode = (path: string): number => statSync(path).mode & 0o777;
const names = (dir: string): string[] => readdirSync(dir).sort();

describe('redactText', () => {
  const opts = { installDir: '/opt/svc' };

  it('removes configured secret values first, longest first, also URL-encoded; ignores values under 4 characters', () => {
    const secrets = ['planted-secret-token-123', 'planted', 'p@ss w/rd', 'ab'];
    const out = redactText('a planted-secret-token-123 b planted c p%40ss%20w%2Frd d p@ss w/rd e ab', {
      ...opts,
      secrets,
    });
    expect(out).toBe('a [REDACTED] b [REDACTED] c [REDACTED] d [REDACTED] e ab');
    // a secret inside a URL's credentials disappears even before rule 2 runs
    expect(redactText('mqtt://u:planted@h', { ...opts, secrets })).toBe('mqtt://[REDACTED]@h');
  });

  describe('rule 1: paths', () => {
    it('shows stack paths inside the install directory relative to it (spec example)', () => {
      const stack =
        'TypeError: boom\n    at start (/opt/svc/dist/edge-agent/main.js:10:5)\n    at /opt/svc/dist/edge-agent/run.js:3:1\n    at async Promise.all (index 0)';
      expect(redactText(stack, opts)).toBe(
        'TypeError: boom\n    at start (dist/edge-agent/main.js:10:5)\n    at dist/edge-agent/run.js:3:1\n    at async Promise.all (index 0)',
      );
    });

    it('replaces other absolute paths by [path], keeping line and column', () => {
      const stack =
        'Error: x\n    at f (/usr/lib/node_modules/x/index.js:1:2)\n    at /home/me/other.js:7:8\n    at async g (/srv/My Files/y.js:3:4)';
      expect(redactText(stack, opts)).toBe(
        'Error: x\n    at f ([path]:1:2)\n    at [path]:7:8\n    at async g ([path]:3:4)',
      );
    });

    it('keeps node internals, relative paths and URLs; redacts paths in the message', () => {
      const text =
        "ENOENT: no such file or directory, open '/etc/svc/svc.yaml' (see ./config/x.yaml, http://h.example.com/a/b)\n    at node:internal/fs/utils:1:2";
      expect(redactText(text, opts)).toBe(
        "ENOENT: no such file or directory, open '[path]' (see ./config/x.yaml, http://h.example.com/a/b)\n    at node:internal/fs/utils:1:2",
      );
    });

    it('does not let .. escape the install directory, nor a sibling with the same prefix count as inside', () => {
      expect(redactText('at f (/opt/svc/../secret/x.js:1:2)', opts)).toBe('at f ([path]:1:2)');
      expect(redactText('at f (/opt/svc-old/x.js:1:2)', opts)).toBe('at f ([path]:1:2)');
    });

    it('handles file:// URLs inside and outside the install directory', () => {
      const stack =
        'Error: x\n    at f (file:///opt/svc/dist/a.js:1:2)\n    at file:///opt/other/b.mjs:3:4\n    at g (file:///opt/svc/dist/with%20space.js:5:6)';
      expect(redactText(stack, opts)).toBe(
        'Error: x\n    at f (dist/a.js:1:2)\n    at [path]:3:4\n    at g (dist/with space.js:5:6)',
      );
      expect(redactText('loaded file:///home/me/x.mjs ok', opts)).toBe('loaded [path] ok');
      expect(redactText('at f (file://localhost/opt/svc/dist/a.js:1:2)', opts)).toBe('at f (dist/a.js:1:2)');
    });

    it('handles Windows paths and file URLs (drive letters compared case-insensitively)', () => {
      const win = { installDir: 'C:\\Program Files\\svc' };
      const stack = [
        'Error: x',
        '    at f (C:\\Program Files\\svc\\dist\\edge-agent\\main.js:10:5)',
        '    at c:\\program files\\svc\\dist\\b.js:1:1',
        '    at g (file:///C:/Program%20Files/svc/dist/c.js:2:3)',
        '    at h (D:\\tools\\other\\x.js:4:5)',
      ].join('\n');
      expect(redactText(stack, win)).toBe(
        'Error: x\n    at f (dist/edge-agent/main.js:10:5)\n    at dist/b.js:1:1\n    at g (dist/c.js:2:3)\n    at h ([path]:4:5)',
      );
      expect(redactText("cannot open 'C:\\Users\\bob\\svc.yaml' or D:/data/x or \\\\server\\share\\f.txt", win)).toBe(
        "cannot open '[path]' or [path] or [path]",
      );
      // a Windows path is never inside a POSIX install directory
      expect(redactText('at f (C:\\opt\\svc\\x.js:1:2)', opts)).toBe('at f ([path]:1:2)');
    });
  });

  it('rule 2: URL credentials', () => {
    expect(redactText('GET https://admin:hunter2@db.example.com:8086/write failed', opts)).toBe(
      'GET https://[REDACTED]@db.example.com:8086/write failed',
    );
    expect(redactText('mqtt://u:p@ss@broker:1883 and https://plain.example.com/x', opts)).toBe(
      'mqtt://[REDACTED]@broker:1883 and https://plain.example.com/x',
    );
  });

  it('rule 3: Bearer / Basic / Token with 8+ characters', () => {
    expect(redactText('sent Bearer abcDEF0123456789._-+/= now', opts)).toBe('sent Bearer [REDACTED] now');
    expect(redactText('Basic dXNlcjpwYXNz', opts)).toBe('Basic [REDACTED]');
    expect(redactText('Token 0123456789abcdef', opts)).toBe('Token [REDACTED]');
    expect(redactText('Bearer short', opts)).toBe('Bearer short');
  });

  it('rule 4: keyword values, plain and JSON, case-insensitive', () => {
    expect(redactText('password=hunter2 next', opts)).toBe('password=[REDACTED] next');
    expect(redactText('token: abc123, user=bob', opts)).toBe('token=[REDACTED], user=bob');
    expect(
      redactText(
        'apiToken=x1 api_key=x2 API-KEY: x3 accessKey=x4 client_secret=x5 PASSWD=x6 pwd=x7 credentials=x8 passphrase=x9 auth=x10 secret="a b"',
        opts,
      ),
    ).toBe(
      'apiToken=[REDACTED] api_key=[REDACTED] API-KEY=[REDACTED] accessKey=[REDACTED] client_secret=[REDACTED] PASSWD=[REDACTED] pwd=[REDACTED] credentials=[REDACTED] passphrase=[REDACTED] auth=[REDACTED] secret=[REDACTED]',
    );
    expect(redactText('body {"token": "abc", "Password":"x\\"y", "user": "bob"}', opts)).toBe(
      'body {"token": "[REDACTED]", "Password": "[REDACTED]", "user": "bob"}',
    );
    expect(redactText('https://h/x?user=bob&api_key=k3y&x=1', opts)).toBe(
      'https://h/x?user=bob&api_key=[REDACTED]&x=1',
    );
    expect(redactText('password is wrong', opts)).toBe('password is wrong');
  });

  it('applies the rules in order (1 → 2 → 3 → 4)', () => {
    // rule 1 before 4: the path goes, then the keyword value
    expect(redactText('password=/etc/pw', opts)).toBe('password=[REDACTED]');
    // rule 3 before 4: the scheme value is taken whole by rule 4
    expect(redactText('Authorization: Bearer abcdefgh12345678', opts)).toBe('Authorization=[REDACTED]');
    // rule 2 before 4: URL credentials first, then the keyword
    expect(redactText('auth=https://u:p@h', opts)).toBe('auth=[REDACTED]');
    // rule 1 does not touch URLs, so rule 2 still sees them
    expect(redactText('https://u:pw@h.example.com/opt/x', opts)).toBe('https://[REDACTED]@h.example.com/opt/x');
  });

  it('redacts a real stack: the test file shows relative to the repo', () => {
    const err = new Error('boom');
    const out = redactText(err.stack ?? '', { installDir: REPO });
    expect(out).toContain('test/shared/crash/crash-dump.test.ts:');
    expect(out).not.toContain(REPO);
  });
});

describe('crashConfigSummary', () => {
  it('takes exactly the listed keys and no secret', () => {
    const yaml =
      'Svc:\n  tsdbConfig:\n    enable: true\n    version: 2\n    v2Config:\n      org: o\n      token: planted-secret-token-123\n';
    const { config } = parseConfigText(yaml, 'test.yaml');
    const summary = crashConfigSummary(config);
    expect(summary).toEqual({
      logLevel: 'info',
      fileLogging: false,
      logDirectory: 'log',
      anonTelemetry: false,
      systemInfoEnable: true,
      userEventsEnable: false,
      tsdbEnable: true,
      tsdbVersion: 2,
      metricsEndpointEnable: false,
      mqttEnable: false,
      auditEventsEnable: false,
    });
    expect(JSON.stringify(summary)).not.toContain('planted');
  });
});

describe('writeCrashDump', () => {
  it('names the files crash_dump_<YYYYMMDD>_<HHMMSS>_<mmm>_<pid>_<counter> in local time', () => {
    expect(crashDumpBaseName(NOW, PID)).toBe(BASE);
    expect(crashDumpBaseName(new Date(2025, 0, 2, 3, 4, 5, 6), 7)).toBe('crash_dump_20250102_030405_006_7');
    const dir = freshDir();
    const result = writeCrashDump(new TypeError('boom'), input(dir));
    expect(result.errors).toEqual([]);
    expect(result.files).toEqual([join(dir, `${BASE}_1.json`), join(dir, `${BASE}_1.txt`)]);
    expect(names(dir)).toEqual([`${BASE}_1.json`, `${BASE}_1.txt`]);
  });

  it('creates the directory (recursively) with mode 0700 and the files with mode 0600', () => {
    const dir = join(freshDir(), 'a', 'b');
    const result = writeCrashDump(new Error('x'), input(dir));
    expect(mode(dir)).toBe(0o700);
    expect(result.files).toHaveLength(2);
    for (const file of result.files) expect(mode(file)).toBe(0o600);
  });

  it('leaves the mode of an existing directory alone', () => {
    const dir = freshDir();
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    writeCrashDump(new Error('x'), input(dir));
    expect(mode(dir)).toBe(0o755);
  });

  it('creates exclusively: an existing name bumps the counter, existing files stay untouched', () => {
    const dir = freshDir();
    mkdirSync(dir);
    writeFileSync(join(dir, `${BASE}_1.json`), 'old1');
    writeFileSync(join(dir, `${BASE}_2.txt`), 'old2');
    const result = writeCrashDump(new Error('x'), input(dir));
    expect(result.files).toEqual([join(dir, `${BASE}_3.json`), join(dir, `${BASE}_3.txt`)]);
    expect(names(dir)).toEqual([`${BASE}_1.json`, `${BASE}_2.txt`, `${BASE}_3.json`, `${BASE}_3.txt`]);
    expect(readFileSync(join(dir, `${BASE}_1.json`), 'utf8')).toBe('old1');
    expect(readFileSync(join(dir, `${BASE}_2.txt`), 'utf8')).toBe('old2');
    // a second crash in the same millisecond gets the next counter
    expect(writeCrashDump(new Error('y'), input(dir)).files).toEqual([
      join(dir, `${BASE}_4.json`),
      join(dir, `${BASE}_4.txt`),
    ]);
  });

  it('follows the JSON and text toggles; enable:false or both off writes nothing, not even the directory', () => {
    const jsonDir = freshDir();
    writeCrashDump(
      new Error('x'),
      input(jsonDir, { settings: { ...SETTINGS_ALL, crashFileDirectory: jsonDir, crashFileCreateText: false } }),
    );
    expect(names(jsonDir)).toEqual([`${BASE}_1.json`]);
    const textDir = freshDir();
    writeCrashDump(
      new Error('x'),
      input(textDir, { settings: { ...SETTINGS_ALL, crashFileDirectory: textDir, crashFileCreateJson: false } }),
    );
    expect(names(textDir)).toEqual([`${BASE}_1.txt`]);
    const offDir = freshDir();
    expect(
      writeCrashDump(
        new Error('x'),
        input(offDir, { settings: { ...SETTINGS_ALL, crashFileDirectory: offDir, enable: false } }),
      ),
    ).toEqual({ files: [], errors: [] });
    const noneDir = freshDir();
    expect(
      writeCrashDump(
        new Error('x'),
        input(noneDir, {
          settings: {
            enable: true,
            crashFileDirectory: noneDir,
            crashFileCreateJson: false,
            crashFileCreateText: false,
          },
        }),
      ),
    ).toEqual({ files: [], errors: [] });
    expect(existsSync(offDir) || existsSync(noneDir)).toBe(false);
  });

  it("resolves a relative directory from the working directory; '' is the working directory", () => {
    const cwd = freshDir();
    mkdirSync(cwd);
    const before = process.cwd();
    try {
      process.chdir(cwd);
      writeCrashDump(new Error('x'), input('dumps/sub'));
      writeCrashDump(new Error('x'), input(''));
    } finally {
      process.chdir(before);
    }
    expect(names(join(cwd, 'dumps/sub'))).toEqual([`${BASE}_1.json`, `${BASE}_1.txt`]);
    expect(names(cwd)).toEqual([`${BASE}_1.json`, `${BASE}_1.txt`, 'dumps']);
  });

  it('reports, never throws, when the directory cannot be created or the write is abandoned', () => {
    const file = join(freshDir());
    writeFileSync(file, 'not a directory');
    const blocked = writeCrashDump(new Error('x'), input(join(file, 'sub')));
    expect(blocked.files).toEqual([]);
    expect(blocked.errors.join()).toMatch(/cannot create the crash dump directory/);
    const abandoned = writeCrashDump(new Error('x'), input(freshDir(), { timeoutMs: 0 }));
    expect(abandoned).toEqual({ files: [], errors: ['crash dump write abandoned after 0 ms'] });
  });

  it('writes the JSON with exactly the spec keys, 2-space indented, message and stack redacted', () => {
    const dir = freshDir();
    const err = new TypeError('token planted-secret-token-123 for https://u:pw@h.example.com');
    const summary = crashConfigSummary(parseConfigText('Svc: {}', 'x.yaml').config);
    const result = writeCrashDump(err, input(dir, { summary, secrets: ['planted-secret-token-123'] }));
    const jsonFile = result.files.find((f) => f.endsWith('.json')) ?? '';
    const raw = readFileSync(jsonFile, 'utf8');
    const json = JSON.parse(raw) as Record<string, Record<string, unknown>>;
    expect(raw).toBe(`${JSON.stringify(json, null, 2)}\n`);
    expect(Object.keys(json)).toEqual(['version', 'timestamp', 'app', 'runtime', 'error', 'context', 'config']);
    expect(json['version']).toBe('1.0');
    expect(json['timestamp']).toBe(NOW.toISOString());
    expect(json['app']).toEqual({ name: 'svc', version: SVC_VERSION });
    expect(json['runtime']).toEqual({
      nodeVersion: process.versions.node,
      platform: `${process.platform}/${process.arch}`,
      isSea: false,
    });
    expect(Object.keys(json['error'] ?? {})).toEqual(['type', 'message', 'stack']);
    expect(json['error']?.['type']).toBe('TypeError');
    expect(json['error']?.['message']).toBe('token [REDACTED] for https://[REDACTED]@h.example.com');
    expect(json['context']).toEqual({ exitCode: 1, source: 'uncaughtException' });
    expect(Object.keys(json['config'] ?? {})).toEqual([
      'logLevel',
      'fileLogging',
      'logDirectory',
      'anonTelemetry',
      'systemInfoEnable',
      'userEventsEnable',
      'tsdbEnable',
      'tsdbVersion',
      'metricsEndpointEnable',
      'mqttEnable',
      'auditEventsEnable',
    ]);
    expect(raw).not.toContain('planted-secret');
    expect(raw).not.toContain(REPO);
    // no config loaded yet
    expect(buildCrashReport(err, input(dir)).config).toBeNull();
  });

  it('writes the text dump with the spec banners and sections, in order', () => {
    const dir = freshDir();
    const result = writeCrashDump(new RangeError('out of range'), input(dir, { source: 'fatal' }));
    const text = readFileSync(result.files.find((f) => f.endsWith('.txt')) ?? '', 'utf8');
    const lines = text.split('\n');
    const order = [
      'SVC CRASH REPORT',
      `Generated: ${NOW.toISOString()}`,
      '=== APPLICATION INFO ===',
      '=== CRASH INFO ===',
      '=== ERROR MESSAGE ===',
      '=== STACK TRACE ===',
      'END OF SVC CRASH REPORT',
    ];
    const at = order.map((line) => lines.indexOf(line));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    for (const line of [
      `Version: ${SVC_VERSION}`,
      `Runtime version: Node.js ${process.versions.node}`,
      `Platform: ${process.platform}/${process.arch}`,
      'Executable: Node.js',
      'Error type: RangeError',
      'Source: fatal',
      'Exit code: 1',
      'out of range',
    ]) {
      expect(lines).toContain(line);
    }
    expect(lines[lines.indexOf('=== STACK TRACE ===') + 1]).toBe('RangeError: out of range');
    expect(
      renderCrashText({
        ...buildCrashReport('x', input(dir)),
        runtime: { nodeVersion: '20.0.0', platform: 'linux/x64', isSea: true },
      }),
    ).toContain('Executable: SEA (packaged)');
  });

  it('handles thrown values that are not Errors', () => {
    const circular: Record<string, unknown> = { code: 7 };
    circular['self'] = circular;
    const cases: [unknown, string][] = [
      ['plain string password=hunter2', 'plain string password=[REDACTED]'],
      [{ code: 42, token: 'abc' }, '{"code":42,"token": "[REDACTED]"}'],
      [undefined, 'undefined'],
      [null, 'null'],
      [17, '17'],
      [circular, '<ref *1> { code: 7, self: [Circular *1] }'],
    ];
    for (const [thrown, message] of cases) {
      const report = buildCrashReport(thrown, input(freshDir()));
      expect(report.error).toEqual({ type: 'NonError', message, stack: '' });
    }
    const dir = freshDir();
    const result = writeCrashDump('just a string', input(dir));
    expect(result.files).toHaveLength(2);
    expect(readFileSync(result.files[1] ?? '', 'utf8')).toContain('=== STACK TRACE ===\n(no stack trace)\n');
  });

  it('names the error type after the class and appends causes', () => {
    class ConfigBroken extends Error {}
    const report = buildCrashReport(
      new ConfigBroken('outer', { cause: new Error('inner token=abc') }),
      input(freshDir()),
    );
    expect(report.error.type).toBe('ConfigBroken');
    expect(report.error.stack).toMatch(/\nCaused by: Error: inner token=\[REDACTED\]\n/);
  });
});

describe('crash handlers', () => {
  function recorder(): {
    log: CrashHandlerDeps['log'];
    rec: { lines: { obj: object; msg: string }[]; flushed: number };
  } {
    const rec = { lines: [] as { obj: object; msg: string }[], flushed: 0 };
    const log: CrashHandlerDeps['log'] = {
      ...silentLog,
      error: (obj, msg) => {
        rec.lines.push({ obj, msg });
      },
      flush: () => {
        rec.flushed += 1;
      },
    };
    return { log, rec };
  }

  it('fatal() writes a dump with source fatal, logs the files (redacted), flushes and exits 1', () => {
    const dir = freshDir();
    const { log, rec } = recorder();
    const exits: number[] = [];
    const result = fatal(new Error('db password=hunter2 gone'), {
      getInput: () => ({ settings: { ...SETTINGS_ALL, crashFileDirectory: dir }, summary: null, installDir: REPO }),
      log,
      exit: (code) => exits.push(code),
    });
    expect(exits).toEqual([1]);
    expect(rec.flushed).toBe(1);
    expect(result.files).toHaveLength(2);
    const json = JSON.parse(readFileSync(result.files[0] ?? '', 'utf8')) as { context: { source: string } };
    expect(json.context.source).toBe('fatal');
    expect(rec.lines).toHaveLength(1);
    const line = rec.lines[0];
    expect(line?.msg).toContain(`crash dump written to ${result.files.join(', ')}`);
    expect(line?.msg).toMatch(/^Fatal error: Error: db password=\[REDACTED\] gone;/);
    expect(JSON.stringify(line)).not.toContain('hunter2');
  });

  it('fatal() falls back to the default settings when getInput throws', () => {
    const cwd = freshDir();
    mkdirSync(cwd);
    const before = process.cwd();
    let result: CrashDumpResult | undefined;
    try {
      process.chdir(cwd);
      result = fatal('boom', {
        getInput: () => {
          throw new Error('no config');
        },
        log: recorder().log,
        exit: () => undefined,
      });
    } finally {
      process.chdir(before);
    }
    if (result === undefined) throw new Error('fatal() returned nothing');
    expect(result.files.map((f) => f.startsWith(join(cwd, 'crash_dumps')))).toEqual([true, true]);
    expect(result.errors.join()).toMatch(/crash dump settings unavailable \(no config\)/);
  });

  it('installs one listener for each event and removes them again', () => {
    const before = [process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')];
    const uninstall = installCrashHandlers({
      getInput: () => ({ settings: SETTINGS_ALL, summary: null, installDir: REPO }),
      log: recorder().log,
      exit: () => undefined,
    });
    expect([process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')]).toEqual([
      before[0]! + 1,
      before[1]! + 1,
    ]);
    uninstall();
    expect([process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection')]).toEqual(before);
  });
});

describe('acceptance: child processes', () => {
  const SECRETS = [
    'planted-secret-token-123',
    'planted-api-token-456',
    'hunter2pass',
    'abcdef0123456789xyz',
    '/home/operator',
  ];

  it('a forced uncaught exception leaves both dump files, secrets redacted', () => {
    const cwd = freshDir();
    mkdirSync(cwd);
    const child = spawnSync(process.execPath, [CHILD], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, CRASH_DIR: 'dumps/nested' },
      timeout: 20_000,
    });
    expect(child.status, child.stderr).toBe(1);
    const dir = join(cwd, 'dumps/nested');
    expect(mode(dir)).toBe(0o700);
    const files = names(dir);
    expect(files).toHaveLength(2);
    const [jsonName, textName] = files;
    expect(jsonName).toMatch(new RegExp(`^crash_dump_\\d{8}_\\d{6}_\\d{3}_${child.pid}_1\\.json$`));
    expect(textName).toBe(jsonName?.replace(/\.json$/, '.txt'));
    const jsonPath = join(dir, jsonName ?? '');
    const textPath = join(dir, textName ?? '');
    expect([mode(jsonPath), mode(textPath)]).toEqual([0o600, 0o600]);

    const raw = readFileSync(jsonPath, 'utf8');
    const text = readFileSync(textPath, 'utf8');
    for (const secret of SECRETS) {
      expect(raw).not.toContain(secret);
      expect(text).not.toContain(secret);
      expect(child.stderr).not.toContain(secret);
    }
    const json = JSON.parse(raw) as {
      context: { source: string; exitCode: number };
      error: { type: string; message: string; stack: string };
      config: { tsdbEnable: boolean };
    };
    expect(json.context).toEqual({ exitCode: 1, source: 'uncaughtException' });
    expect(json.config.tsdbEnable).toBe(true);
    expect(json.error.type).toBe('Error');
    expect(json.error.message).toContain('token [REDACTED] at https://[REDACTED]@db.example.com:8086/api/v2/write');
    expect(json.error.message).toContain('Authorization=[REDACTED]');
    expect(json.error.message).toContain("apiToken=[REDACTED]) reading '[path]'");
    // stack: the child's frame relative to the install dir, no absolute path left
    expect(json.error.stack).toMatch(
      /\n {4}at Timeout\._onTimeout \(test\/fixtures\/crash\/crash-child\.mjs:\d+:\d+\)/,
    );
    expect(json.error.stack).not.toContain(REPO);
    expect(json.error.stack).not.toContain(cwd);
    for (const frame of json.error.stack.split('\n').filter((l) => l.trimStart().startsWith('at '))) {
      expect(frame).not.toMatch(/(\(|at )(\/|file:|[A-Za-z]:\\)/);
    }

    for (const heading of [
      'SVC CRASH REPORT',
      '=== APPLICATION INFO ===',
      '=== CRASH INFO ===',
      '=== ERROR MESSAGE ===',
      '=== STACK TRACE ===',
      'END OF SVC CRASH REPORT',
    ]) {
      expect(text).toContain(`\n${heading}\n`);
    }
    expect(text).toContain('\nSource: uncaughtException\n');
    expect(text).toContain(`\n=== ERROR MESSAGE ===\n${json.error.message}\n`);

    // the log line names both files, then the log was flushed
    const logLines = child.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: string; msg: string; crashDumpFiles?: string[] });
    expect(logLines.map((l) => l.level)).toEqual(['error', 'debug']);
    expect(logLines[0]?.crashDumpFiles).toEqual([jsonPath, textPath]);
    expect(logLines[0]?.msg).toContain(`crash dump written to ${jsonPath}, ${textPath}`);
  });

  it('an unhandled rejection is logged (redacted), not fatal, and writes no dump', () => {
    const cwd = freshDir();
    mkdirSync(cwd);
    const child = spawnSync(process.execPath, [CHILD, 'rejection'], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, CRASH_DIR: 'dumps' },
      timeout: 20_000,
    });
    expect(child.status, child.stderr).toBe(0);
    expect(child.stdout).toContain('still running after the rejection');
    expect(child.stderr).toContain(
      'Unhandled promise rejection (not fatal): Error: rejected while using [REDACTED] with Bearer [REDACTED]',
    );
    for (const secret of SECRETS) expect(child.stderr).not.toContain(secret);
    expect(existsSync(resolve(cwd, 'dumps'))).toBe(false);
  });
});

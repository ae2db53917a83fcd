import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { LOG_LEVELS, type LogLevelName } from '../../../shared/config/builders.js';
import {
  createLogger,
  LOG_LEVEL_VALUES,
  type LoggerHandle,
  type LoggerOptions,
} from '../../../shared/logging/index.js';
import { LogDirectoryError } from '../../../shared/logging/logger.js';

/** A real writable stream that keeps what it receives. */
function sink() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });
  const text = () => chunks.join('');
  const records = () =>
    text()
      .split('\n')
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { stream, text, records };
}

const handles: LoggerHandle[] = [];
const dirs: string[] = [];

async function open(options: Omit<LoggerOptions, 'destination'> & { pretty?: boolean }) {
  const out = sink();
  const handle = await createLogger({ pretty: false, ...options, destination: out.stream });
  handles.push(handle);
  return { ...handle, out };
}

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'svc-logging-'));
  dirs.push(dir);
  return dir;
}

function localDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function logAll(logger: LoggerHandle['logger']): void {
  logger.silly('m-silly');
  logger.debug('m-debug');
  logger.verbose('m-verbose');
  logger.info('m-info');
  logger.warn('m-warn');
  logger.error('m-error');
}

afterEach(async () => {
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('levels', () => {
  it("orders the six levels by decreasing detail around pino's own", () => {
    const values = LOG_LEVELS.map((name) => LOG_LEVEL_VALUES[name]);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(new Set(values).size).toBe(6);
    expect(LOG_LEVEL_VALUES.debug).toBe(20);
    expect(LOG_LEVEL_VALUES.info).toBe(30);
  });

  it('logs each of the six levels at level silly, labelled by name', async () => {
    const { logger, out } = await open({ level: 'silly' });
    logAll(logger);
    expect(out.records().map((r) => [r.level, r.msg])).toEqual(LOG_LEVELS.map((name) => [name, `m-${name}`]));
  });

  it.each(LOG_LEVELS.map((name) => [name]))(
    'level %s keeps exactly the levels at or above it',
    async (level: LogLevelName) => {
      const { logger, out } = await open({ level });
      logAll(logger);
      const expected = LOG_LEVELS.slice(LOG_LEVELS.indexOf(level));
      expect(out.records().map((r) => r.level)).toEqual(expected);
    },
  );

  it('level verbose drops debug and silly and keeps verbose', async () => {
    const { logger, out } = await open({ level: 'verbose' });
    logAll(logger);
    const levels = out.records().map((r) => r.level);
    expect(levels).toContain('verbose');
    expect(levels).not.toContain('debug');
    expect(levels).not.toContain('silly');
  });
});

describe('JSON output', () => {
  it('writes one JSON object per line with the level label, msg, ISO time and name', async () => {
    const { logger, out } = await open({ level: 'info' });
    logger.info({ port: 1883 }, 'listening');
    const [record, ...rest] = out.records();
    expect(rest).toEqual([]);
    expect(record).toMatchObject({ level: 'info', msg: 'listening', name: 'svc', port: 1883 });
    expect(record?.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(out.text()).not.toContain('"level":30');
  });

  it('uses the given name', async () => {
    const { logger, out } = await open({ level: 'info', name: 'edge' });
    logger.info('x');
    expect(out.records()[0]?.name).toBe('edge');
  });
});

describe('secrets', () => {
  it('redacts secret keys at depth 1 to 4', async () => {
    const { logger, out } = await open({ level: 'info' });
    logger.info({ apiToken: 'tok-1', user: 'alice' }, 'depth 1');
    logger.info({ auth: { password: 'pw-2', user: 'bob' } }, 'depth 2');
    logger.info({ a: { b: { token: 'tok-3' } } }, 'depth 3');
    logger.info({ a: { b: { c: { scrambleSecret: 'key-4' } } } }, 'depth 4');
    const [one, two, three, four] = out.records();
    expect(one).toMatchObject({ apiToken: '[REDACTED]', user: 'alice' });
    expect(two).toMatchObject({ auth: { password: '[REDACTED]', user: 'bob' } });
    expect(three).toMatchObject({ a: { b: { token: '[REDACTED]' } } });
    expect(four).toMatchObject({ a: { b: { c: { scrambleSecret: '[REDACTED]' } } } });
    for (const value of ['tok-1', 'pw-2', 'tok-3', 'key-4']) expect(out.text()).not.toContain(value);
  });

  it('scrubs configured secret values from messages, arguments, nested strings and errors', async () => {
    const secret = 's3cr3t-T0ken';
    const { logger, out } = await open({ level: 'info', secrets: [secret] });
    logger.info(`connecting with ${secret}`);
    logger.info('header %s', `Bearer ${secret}`);
    logger.info({ request: { headers: { authorization: `Bearer ${secret}` } }, list: [`x${secret}x`] }, 'nested');
    logger.error({ err: new Error(`refused ${secret}`) }, 'failed');
    logger.child({ session: secret }).info('child');
    const [message, formatted, nested, error, child] = out.records();
    expect(message?.msg).toBe('connecting with [REDACTED]');
    expect(formatted?.msg).toBe('header Bearer [REDACTED]');
    expect(nested).toMatchObject({
      request: { headers: { authorization: 'Bearer [REDACTED]' } },
      list: ['x[REDACTED]x'],
    });
    expect(error).toMatchObject({ err: { message: 'refused [REDACTED]' } });
    expect(child?.session).toBe('[REDACTED]');
    expect(out.text()).not.toContain(secret);
  });

  it("keeps a poll's url field and scrubs an alert channel's URL by its value (url is no secret key name)", async () => {
    const channelUrl = 'https://hooks.slack.com/services/T0/B0/SLACK-KEY-9';
    const { logger, out } = await open({ level: 'info', secrets: [channelUrl] });
    logger.info({ url: 'https://node1.example.com:4747/engine/healthcheck' }, 'health poll');
    logger.info({ url: channelUrl }, 'channel');
    const [poll, channel] = out.records();
    expect(poll?.url).toBe('https://node1.example.com:4747/engine/healthcheck');
    expect(channel?.url).toBe('[REDACTED]');
    expect(out.text()).not.toContain('SLACK-KEY-9');
  });

  it('scrubs secrets that JSON escapes, and keeps the line valid JSON when a secret looks like a number', async () => {
    const quoted = 'pa"ss\\word';
    const numeric = '20242024';
    const { logger, out } = await open({ level: 'info', secrets: [quoted, numeric] });
    logger.info({ count: 2024202420 }, `login ${quoted} pin ${numeric}`);
    const [record] = out.records();
    expect(record?.msg).toBe('login [REDACTED] pin [REDACTED]');
    expect(record?.count).toBe(2024202420);
  });

  it('leaves lines alone when no secret is configured', async () => {
    const { logger, out } = await open({ level: 'info' });
    logger.info({ note: 'plain' }, 'nothing to hide');
    expect(out.records()[0]).toMatchObject({ note: 'plain', msg: 'nothing to hide' });
  });

  it('scrubs credentials from URLs', async () => {
    const { logger, out } = await open({ level: 'info' });
    logger.info('connecting to mqtt://svc:hunter2@broker.local:1883/ and https://example.com/a@b');
    logger.info({ target: 'https://token-only@influx.local:8086/api' }, 'target');
    const [message, field] = out.records();
    expect(message?.msg).toBe('connecting to mqtt://[REDACTED]@broker.local:1883/ and https://example.com/a@b');
    expect(field?.target).toBe('https://[REDACTED]@influx.local:8086/api');
    expect(out.text()).not.toContain('hunter2');
    expect(out.text()).not.toContain('token-only');
  });
});

describe('file logging', () => {
  it('writes JSON lines into a daily file named with the date, creating the directory', async () => {
    const dir = join(await tempDir(), 'nested', 'log');
    const before = localDate(new Date());
    const handle = await open({ level: 'silly', fileLogging: true, logDirectory: dir, secrets: ['file-secret'] });
    handle.logger.silly('to the file');
    handle.logger.info({ apiToken: 'abc' }, 'with file-secret inside');
    await handle.close();
    const after = localDate(new Date());

    const files = await readdir(dir);
    expect(files).toHaveLength(1);
    const [file] = files;
    expect(file).toMatch(/^svc\.\d{4}-\d{2}-\d{2}\.1\.log$/);
    expect([`svc.${before}.1.log`, `svc.${after}.1.log`]).toContain(file);

    const lines = (await readFile(join(dir, file ?? ''), 'utf8')).trim().split('\n');
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toEqual([
      expect.objectContaining({ level: 'silly', msg: 'to the file' }),
      expect.objectContaining({ level: 'info', msg: 'with [REDACTED] inside', apiToken: '[REDACTED]' }),
    ]);
    // The console stream got the same lines.
    expect(handle.out.records().map((r) => r.msg)).toEqual(['to the file', 'with [REDACTED] inside']);
  });

  it('resolves a relative logDirectory from the working directory', async () => {
    const base = await tempDir();
    const cwd = process.cwd();
    process.chdir(base);
    try {
      const handle = await open({ level: 'info', fileLogging: true, logDirectory: 'rel-log' });
      handle.logger.info('relative');
      handle.flush();
      await handle.close();
    } finally {
      process.chdir(cwd);
    }
    const files = await readdir(join(base, 'rel-log'));
    expect(files).toEqual([expect.stringMatching(/^svc\.\d{4}-\d{2}-\d{2}\.1\.log$/)]);
    expect(await readFile(join(base, 'rel-log', files[0] ?? ''), 'utf8')).toContain('"msg":"relative"');
  });

  it('writes nothing to disk without fileLogging', async () => {
    const base = await tempDir();
    const handle = await open({ level: 'info', logDirectory: join(base, 'log') });
    handle.logger.info('console only');
    await handle.close();
    expect(await readdir(base)).toEqual([]);
  });

  it('refuses a log directory that cannot be created with a LogDirectoryError naming the path and the reason', async () => {
    // A path below a regular file cannot be a directory, for root too (permission bits do not stop root).
    const base = await tempDir();
    await writeFile(join(base, 'a-file'), 'not a directory');
    const below = join(base, 'a-file', 'log');
    await expect(open({ level: 'info', fileLogging: true, logDirectory: below })).rejects.toEqual(
      new LogDirectoryError(below, 'a part of the path is a file, not a directory'),
    );
    const isFile = join(base, 'a-file');
    const refused = open({ level: 'info', fileLogging: true, logDirectory: isFile });
    await expect(refused).rejects.toBeInstanceOf(LogDirectoryError);
    await expect(refused).rejects.toMatchObject({
      directory: isFile,
      reason: 'it exists and is not a directory',
      message: `cannot write log files in ${isFile}: it exists and is not a directory`,
    });
  });

  // Root writes into a read-only directory all the same, so this one runs only as another user.
  it.skipIf(process.getuid?.() === 0)('refuses a read-only log directory (permission denied)', async () => {
    const dir = join(await tempDir(), 'read-only');
    await mkdir(dir);
    await chmod(dir, 0o500);
    await expect(open({ level: 'info', fileLogging: true, logDirectory: dir })).rejects.toMatchObject({
      name: 'LogDirectoryError',
      directory: dir,
      reason: 'permission denied',
    });
    await chmod(dir, 0o700);
  });

  it('close() may be called twice and flush() after close() does not throw', async () => {
    const handle = await open({ level: 'info', fileLogging: true, logDirectory: await tempDir() });
    handle.logger.info('x');
    await handle.close();
    await handle.close();
    expect(() => handle.flush()).not.toThrow();
  });
});

describe('pretty output', () => {
  it('prints readable lines with the custom level names, no JSON and no colours off a TTY', async () => {
    const { logger, out } = await open({ level: 'silly', pretty: true, secrets: ['pretty-secret'] });
    logger.verbose({ port: 1883 }, 'pretty verbose line');
    logger.silly('pretty silly line with pretty-secret');
    const text = out.text();
    expect(text).toMatch(/VERBOSE.*pretty verbose line/);
    expect(text).toMatch(/SILLY.*pretty silly line with \[REDACTED\]/);
    expect(text).toContain('port: 1883');
    expect(text).not.toContain('USERLVL');
    expect(text).not.toContain('"msg"');
    expect(text).not.toContain('pretty-secret');
    expect(text).not.toMatch(/\u001b\[/);
    for (const line of text.split('\n').filter((l) => l.length > 0))
      expect(line.trimStart().startsWith('{"')).toBe(false);
  });
});

describe('pretty default', () => {
  it('is pretty when the destination is a TTY and JSON otherwise', async () => {
    const tty = sink();
    Object.assign(tty.stream, { isTTY: true });
    const onTty = await createLogger({ level: 'info', destination: tty.stream });
    const plain = sink();
    const offTty = await createLogger({ level: 'info', destination: plain.stream });
    handles.push(onTty, offTty);
    onTty.logger.info('hello tty');
    offTty.logger.info('hello pipe');
    expect(tty.text().replace(/\u001b\[[0-9;]*m/g, '')).toMatch(/INFO.*hello tty/);
    expect(tty.text()).not.toContain('"msg"');
    expect(plain.records()).toEqual([expect.objectContaining({ level: 'info', msg: 'hello pipe' })]);
  });
});

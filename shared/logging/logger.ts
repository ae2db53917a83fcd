/**
 * The service's logger: pino with Svc's six levels, JSON lines (or pino-pretty on a TTY) on stdout,
 * optionally also JSON lines in daily-rotated files, and secrets scrubbed from every line.
 *
 * Secrets are kept out of the output in three ways:
 * 1. pino `redact` censors every key named like a secret config key (SECRET_KEYS) at depth 1 to 4;
 * 2. the configured secret values are replaced wherever they occur in a JSON string of the line
 *    (message, interpolated arguments, nested fields, child bindings, error messages and stacks);
 * 3. credentials in URLs (`scheme://user:pass@`) become `scheme://[REDACTED]@`.
 * 2 and 3 run on the serialized line (pino `hooks.streamWrite`), before it reaches any stream.
 */
import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { DestinationStream } from 'pino';
import pino from 'pino';
import type { SonicBoom } from 'sonic-boom';
import type { LogLevelName } from '../config/builders.js';
import { ALL_LEVELS, svcLogger } from './pino-core.js';

export { LOG_LEVEL_VALUES, type Logger, lineScrubber, REDACTED, redactPaths } from './pino-core.js';

import type { Logger } from './pino-core.js';

/** Default rotation: one file a day, this many kept besides the current one. */
const KEEP_FILES = 14;
/** Base name of the log files: `svc.<yyyy-MM-dd>.<n>.log`. */
const FILE_BASE = 'svc';
const FILE_DATE_FORMAT = 'yyyy-MM-dd';

export interface LoggerOptions {
  level: LogLevelName;
  /** Also write JSON lines to daily-rotated files in `logDirectory`. */
  fileLogging?: boolean;
  /** Directory of the log files (default `log`); relative paths resolve from the working directory. */
  logDirectory?: string;
  /** Human-readable lines instead of JSON. Default: whether the destination (stdout) is a TTY. */
  pretty?: boolean;
  /** Secret VALUES to scrub from every line (e.g. `secretValues(config)`). */
  secrets?: readonly string[];
  /** Where the console lines go; default stdout. */
  destination?: NodeJS.WritableStream;
  /** `name` field of every line; default `svc`. */
  name?: string;
}

export interface LoggerHandle {
  logger: Logger;
  /**
   * Writes buffered lines synchronously where the stream allows it; call right before exiting. (A
   * line whose asynchronous write is still in flight may then land after the lines behind it.)
   */
  flush(): void;
  /** Flushes and closes the log files. The console stream stays open. */
  close(): Promise<void>;
}

export async function createLogger(options: LoggerOptions): Promise<LoggerHandle> {
  const ownBooms: SonicBoom[] = [];
  const fileBooms: SonicBoom[] = [];
  const streams: DestinationStream[] = [await consoleStream(options, ownBooms)];

  if (options.fileLogging === true) {
    const file = await openLogFile(resolve(options.logDirectory ?? 'log'));
    ownBooms.push(file);
    fileBooms.push(file);
    streams.push(file);
  }

  const logger = svcLogger(
    {
      level: options.level,
      ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
      ...(options.name !== undefined ? { name: options.name } : {}),
    },
    streams,
  );

  const flush = (): void => {
    for (const boom of ownBooms) flushQuietly(boom);
  };

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      // Not flushSync on the files: while an asynchronous write is in flight, SonicBoom's flushSync
      // writes the lines queued behind it first, so the file would get them out of order. end()
      // writes everything in order, then closes.
      for (const boom of ownBooms) if (!fileBooms.includes(boom)) flushQuietly(boom);
      await Promise.all(fileBooms.map(endBoom));
    })();
    return closing;
  };

  return { logger, flush, close };
}

/**
 * JSON lines or pino-pretty, to the given destination or stdout. pino-pretty (and pino-roll below)
 * are imported only when used: a service logging JSON to a pipe does not carry them.
 */
async function consoleStream(options: LoggerOptions, ownBooms: SonicBoom[]): Promise<DestinationStream> {
  const target = options.destination;
  const tty = isTty(target ?? process.stdout);
  if (options.pretty ?? tty) {
    const { default: PinoPretty } = await import('pino-pretty');
    // In process (no worker thread) and synchronous: pino-pretty writes to the destination
    // while the log call runs, so nothing is pending at exit.
    return PinoPretty({
      destination: target ?? 1,
      sync: true,
      colorize: tty && PinoPretty.isColorSupported,
      // pino-pretty uses ONLY these levels when given (useOnlyCustomProps), so all are listed.
      customLevels: ALL_LEVELS,
      customColors: 'silly:gray,trace:gray,debug:blue,verbose:cyan,info:green,warn:yellow,error:red,fatal:bgRed',
      translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
      ignore: 'pid,hostname',
    });
  }
  if (target !== undefined) return target;
  const stdout = pino.destination({ dest: 1, sync: true });
  ownBooms.push(stdout);
  return stdout;
}

function isTty(stream: NodeJS.WritableStream): boolean {
  return 'isTTY' in stream && stream.isTTY === true;
}

/** The log directory cannot take log files: it cannot be created, or a file in it cannot be opened. */
export class LogDirectoryError extends Error {
  override readonly name = 'LogDirectoryError';
  constructor(
    /** The directory, resolved. */
    readonly directory: string,
    /** Why, in words (from the error code): "a part of the path is a file, not a directory". */
    readonly reason: string,
  ) {
    super(`cannot write log files in ${directory}: ${reason}`);
  }
}

const FS_REASONS: Readonly<Record<string, string>> = {
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'it exists and is not a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'read-only file system',
  ENOSPC: 'no space left on the device',
  EISDIR: 'the log file name is taken by a directory',
};

function fsReason(err: unknown): string {
  const code =
    typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
  if (code !== undefined) return FS_REASONS[code] ?? code;
  return err instanceof Error ? err.message : String(err);
}

/** Opens today's log file in `directory` (created if missing); rejects with LogDirectoryError. */
async function openLogFile(directory: string): Promise<SonicBoom> {
  try {
    return await openRollingFile(directory);
  } catch (err) {
    throw new LogDirectoryError(directory, fsReason(err));
  }
}

async function openRollingFile(directory: string): Promise<SonicBoom> {
  await mkdir(directory, { recursive: true });
  const { default: pinoRoll } = await import('pino-roll');
  const boom = await pinoRoll({
    file: join(directory, FILE_BASE),
    frequency: 'daily',
    // Without dateFormat pino-roll names files svc.1.log, svc.2.log, …: no date in the name.
    dateFormat: FILE_DATE_FORMAT,
    mkdir: true,
    extension: '.log',
    // removeOtherLogFiles: also prune files of earlier runs, not only those this process rolled.
    limit: { count: KEEP_FILES, removeOtherLogFiles: true },
  });
  await new Promise<void>((ready, failed) => {
    const onError = (error: Error): void => {
      boom.off('ready', onReady);
      failed(error);
    };
    const onReady = (): void => {
      boom.off('error', onError);
      ready();
    };
    boom.once('ready', onReady);
    boom.once('error', onError);
  });
  // A failing log file (disk full, directory removed) must not crash the service.
  let reported = false;
  boom.on('error', (error: Error) => {
    if (reported) return;
    reported = true;
    process.stderr.write(`svc: writing the log file failed: ${error.message}\n`);
  });
  return boom;
}

function flushQuietly(boom: SonicBoom): void {
  try {
    boom.flushSync();
  } catch {
    // Not open yet, already closed, or the fd does not take writes: nothing more to do.
  }
}

function endBoom(boom: SonicBoom): Promise<void> {
  return new Promise<void>((done) => {
    boom.once('close', () => done());
    try {
      boom.end();
    } catch {
      done();
    }
  });
}

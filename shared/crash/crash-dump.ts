/**
 * Crash dumps (platform-formats.md §10.8): on an uncaught exception (source `uncaughtException`) or an
 * explicit fatal error (source `fatal`) Svc writes a JSON and/or a text dump, logs where it went and
 * exits with code 1. Unhandled promise rejections are only logged.
 *
 * Everything here is synchronous (it runs inside an `uncaughtException` listener) and never throws.
 *
 * The 5 s bound: a JavaScript timer cannot interrupt a blocked synchronous system call (say, a write
 * to a hung network share), so the file I/O runs in a short-lived worker thread while the main thread
 * waits for it with `Atomics.wait(…, 5000)`. When the worker has not reported back by then the write
 * is abandoned: the worker is terminated (and killed by the following `process.exit(1)` anyway), the
 * result carries an error, and the crash path goes on to log and exit. Only when no worker can be
 * started at all are the files written on the main thread, without that bound.
 *
 * Redaction of message and stack, in order: configured secret values (Svc addition), then the four
 * rules of the spec — paths, URL credentials, Authorization schemes, keyword values.
 */
import * as fs from 'node:fs';
import { isAbsolute, join, posix, resolve } from 'node:path';
import { inspect, types as utilTypes } from 'node:util';
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { SvcConfig } from '../config/schema.js';
import type { Log } from '../logging/log.js';
import { EXIT_ERROR } from '../runtime/exit-codes.js';
import { SVC_NAME, SVC_VERSION } from '../version.js';

/** The spec's bound on writing a dump. */
export const CRASH_DUMP_TIMEOUT_MS = 5000;
/** Format version of the JSON dump. */
export const CRASH_DUMP_FORMAT_VERSION = '1.0';
/** `error.type` of a thrown value that is not an Error (a string, an object, …). */
export const NON_ERROR_TYPE = 'NonError';
/** Replacement of every redacted value. */
export const REDACTED = '[REDACTED]';
/** Replacement of an absolute path outside the install directory. */
export const PATH_PLACEHOLDER = '[path]';

export type CrashSource = 'uncaughtException' | 'fatal';

/** The `config` object of the JSON dump: the listed keys only, never secrets. */
export interface CrashConfigSummary {
  logLevel: SvcConfig['logLevel'];
  fileLogging: boolean;
  logDirectory: string;
  anonTelemetry: boolean;
  systemInfoEnable: boolean;
  userEventsEnable: boolean;
  tsdbEnable: boolean;
  tsdbVersion: SvcConfig['tsdbConfig']['version'];
  metricsEndpointEnable: boolean;
  mqttEnable: boolean;
  auditEventsEnable: boolean;
}

export interface CrashDumpInput {
  source: CrashSource;
  settings: SvcConfig['crashFile'];
  /** `null` when no config is loaded yet; the JSON then holds `"config": null`. */
  summary: CrashConfigSummary | null;
  /** Svc's install directory: stack paths inside it are shown relative to it. */
  installDir: string;
  /** Configured secret values (`secretValues(config)`), removed from message and stack. */
  secrets?: readonly string[];
  now?: Date;
  pid?: number;
  /** Bound on the file I/O; default {@link CRASH_DUMP_TIMEOUT_MS}. */
  timeoutMs?: number;
}

export interface CrashDumpResult {
  /** Absolute paths of the files written. */
  files: string[];
  /** Problems met; the dump is best effort. */
  errors: string[];
}

export interface CrashReport {
  version: string;
  timestamp: string;
  app: { name: string; version: string };
  runtime: { nodeVersion: string; platform: string; isSea: boolean };
  error: { type: string; message: string; stack: string };
  context: { exitCode: 1; source: CrashSource };
  config: CrashConfigSummary | null;
}

export interface RedactOptions {
  installDir: string;
  secrets?: readonly string[];
}

/** The listed config keys of the JSON dump. */
export function crashConfigSummary(config: SvcConfig): CrashConfigSummary {
  return {
    logLevel: config.logLevel,
    fileLogging: config.fileLogging,
    logDirectory: config.logDirectory,
    anonTelemetry: config.anonTelemetry,
    systemInfoEnable: config.systemInfo.enable,
    userEventsEnable: config.userEvents.enable,
    tsdbEnable: config.tsdbConfig.enable,
    tsdbVersion: config.tsdbConfig.version,
    metricsEndpointEnable: config.metricsEndpoint.enable,
    mqttEnable: config.mqttConfig.enable,
    auditEventsEnable: config.auditEvents.enable,
  };
}

// ---------------------------------------------------------------------------------------------------
// Redaction

const KEYWORDS =
  'password|passwd|pwd|secret|credential|token|api[_-]?key|api[_-]?token|access[_-]?key|auth|passphrase|client[_-]?secret';
/** A key name containing one of the keywords (`apiToken`, `db_password`, `X-Auth-Token`, …). */
const KEY = `[A-Za-z0-9_-]*?(?:${KEYWORDS})[A-Za-z0-9_-]*`;
const JSON_KEYWORD_VALUE = new RegExp(`"(${KEY})"[ \\t]*:[ \\t]*"(?:[^"\\\\\\n]|\\\\.)*"`, 'gi');
/** The value: quoted, an Authorization value already redacted by rule 3 (taken whole), or a bare word. */
const KEYWORD_VALUE = new RegExp(
  `(?<![A-Za-z0-9_-])(${KEY})[ \\t]*[=:][ \\t]*(?:"[^"\\n]*"|'[^'\\n]*'|(?:Bearer|Basic|Token) \\[REDACTED\\]|[^\\s,;&)}]+)`,
  'gi',
);
const AUTH_SCHEME = /\b(Bearer|Basic|Token)[ \t]+[A-Za-z0-9+/=._-]{8,}/gi;
const URL_CREDENTIALS = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^\s/?#@:]+:[^\s/?#]*@/g;

/** Where a path may start: POSIX root, drive letter, UNC share, file URL. */
const PATH_START = String.raw`(?:file:\/\/|\/|[A-Za-z]:[\\/]|\\\\)`;
/** A stack-frame location `(…:line:col)` or `at …:line:col`: may contain spaces, ends at `)` or the line end. */
const FRAME_LOCATION = new RegExp(String.raw`(\(|^[ \t]*at (?:async )?)(${PATH_START}[^()\n]*?)(?=\)|$)`, 'gm');
const FILE_URL = /\bfile:\/\/[^\s'"`()<>]+/g;
const WINDOWS_PATH = /(?<![A-Za-z0-9_])(?:[A-Za-z]:[\\/]|\\\\[^\s\\/'"`()<>|*?]+\\)[^\s'"`()<>|*?]*/g;
/** Not after a word, URL or base64 character (`abc+/def` is a token, not a path). */
const POSIX_PATH = /(?<![A-Za-z0-9_.~:/\\@+-])\/[^\s'"`()<>,;|*?]+/g;

/**
 * Removes what may be secret from free text (error message or stack), in the spec's order:
 * 0. every configured secret value (and its URL-encoded form) → `[REDACTED]` (Svc addition);
 * 1. paths inside `installDir` → relative to it (`/` separators), other absolute paths → `[path]`;
 * 2. `scheme://user:pass@` → `scheme://[REDACTED]@`;
 * 3. `Bearer|Basic|Token <8+ chars>` → `<word> [REDACTED]`;
 * 4. `"kw": "value"` → `"kw": "[REDACTED]"`, `kw=value` / `kw: value` → `kw=[REDACTED]`.
 */
export function redactText(text: string, opts: RedactOptions): string {
  let out = text;
  // 0. Configured secrets, longest first so a secret containing another is removed whole.
  const secrets = [...new Set(opts.secrets ?? [])].filter((s) => s.length >= 4).sort((a, b) => b.length - a.length);
  for (const secret of secrets) {
    out = out.split(secret).join(REDACTED);
    const encoded = safeEncode(secret);
    if (encoded !== secret) out = out.split(encoded).join(REDACTED);
  }
  // 1. Paths.
  const root = normaliseRoot(opts.installDir);
  const show = (raw: string): string => displayPath(raw, root);
  out = out.replace(FRAME_LOCATION, (_m, lead: string, location: string) => lead + show(location));
  out = out.replace(FILE_URL, show);
  out = out.replace(WINDOWS_PATH, show);
  out = out.replace(POSIX_PATH, show);
  // 2. URL credentials.
  out = out.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
  // 3. Authorization schemes.
  out = out.replace(AUTH_SCHEME, `$1 ${REDACTED}`);
  // 4. Keyword values: the JSON form first, then `kw=value` / `kw: value`.
  out = out.replace(JSON_KEYWORD_VALUE, `"$1": "${REDACTED}"`);
  out = out.replace(KEYWORD_VALUE, `$1=${REDACTED}`);
  return out;
}

function safeEncode(value: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    return value;
  }
}

interface Root {
  /** Normalised install dir: `/` separators, no trailing `/`; `''` for the file-system root. */
  path: string;
  caseInsensitive: boolean;
}

const looksWindows = (p: string): boolean => /^[A-Za-z]:\//.test(p) || p.startsWith('//');

function normaliseRoot(installDir: string): Root {
  const absolute =
    /^[A-Za-z]:[\\/]/.test(installDir) || installDir.startsWith('\\\\') || isAbsolute(installDir)
      ? installDir
      : resolve(installDir);
  const slashed = absolute.replace(/\\/g, '/');
  const windows = looksWindows(slashed);
  const normal = windows && slashed.startsWith('//') ? `/${posix.normalize(slashed)}` : posix.normalize(slashed);
  return { path: normal.replace(/\/+$/, ''), caseInsensitive: windows };
}

/** One absolute path (or file URL), possibly followed by `:line:col` and punctuation, as shown in a dump. */
function displayPath(raw: string, root: Root): string {
  const tail = /(?::\d+){1,2}[.,;:]*$|[.,;:]+$/.exec(raw)?.[0] ?? '';
  let path = raw.slice(0, raw.length - tail.length);
  if (path.toLowerCase().startsWith('file://')) {
    path = path.slice('file://'.length);
    try {
      path = decodeURIComponent(path);
    } catch {
      // keep it encoded
    }
    if (path.toLowerCase().startsWith('localhost/')) path = path.slice('localhost'.length);
    if (/^\/[A-Za-z]:[\\/]/.test(path)) path = path.slice(1);
    else if (!path.startsWith('/')) path = `//${path}`; // file://host/share/… is a UNC path
  }
  const relative = relativeToRoot(path, root);
  return (relative ?? PATH_PLACEHOLDER) + tail;
}

function relativeToRoot(path: string, root: Root): string | null {
  const slashed = path.replace(/\\/g, '/');
  if (looksWindows(slashed) !== root.caseInsensitive) return null;
  const normal = (slashed.startsWith('//') ? `/${posix.normalize(slashed)}` : posix.normalize(slashed)).replace(
    /\/+$/,
    '',
  );
  const a = root.caseInsensitive ? normal.toLowerCase() : normal;
  const b = root.caseInsensitive ? root.path.toLowerCase() : root.path;
  if (a === b) return '.';
  if (a.startsWith(`${b}/`)) return normal.slice(b.length + 1);
  return null;
}

// ---------------------------------------------------------------------------------------------------
// The report

export interface Described {
  type: string;
  message: string;
  stack: string;
}

/** Type, message and stack of any thrown value; Error causes are appended to the stack. */
export function describeThrown(error: unknown): Described {
  try {
    return describe(error, 0);
  } catch {
    return { type: NON_ERROR_TYPE, message: '(the thrown value could not be read)', stack: '' };
  }
}

function describe(error: unknown, depth: number): Described {
  if (error instanceof Error || utilTypes.isNativeError(error)) {
    const err: Error = error;
    const ctorName = typeof err.constructor === 'function' ? err.constructor.name : '';
    const type =
      typeof err.name === 'string' && err.name !== '' && err.name !== 'Error' ? err.name : ctorName || 'Error';
    const message = typeof err.message === 'string' ? err.message : String(err.message);
    let stack = typeof err.stack === 'string' && err.stack !== '' ? err.stack : `${type}: ${message}`;
    const cause: unknown = err.cause;
    if (cause !== undefined && depth < 3) {
      const inner = describe(cause, depth + 1);
      stack += `\nCaused by: ${inner.stack === '' ? `${inner.type}: ${inner.message}` : inner.stack}`;
    }
    return { type, message, stack };
  }
  return { type: NON_ERROR_TYPE, message: nonErrorText(error), stack: '' };
}

function nonErrorText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null || typeof value !== 'object') return String(value);
  try {
    const json = JSON.stringify(value);
    if (typeof json === 'string') return json;
  } catch {
    // circular or BigInt: fall through
  }
  return inspect(value, { depth: 4, breakLength: Infinity });
}

function isSea(): boolean {
  try {
    if (typeof process.getBuiltinModule !== 'function') return false;
    const sea = process.getBuiltinModule('node:sea');
    return typeof sea.isSea === 'function' ? sea.isSea() : false;
  } catch {
    return false;
  }
}

/** The JSON dump's content, message and stack redacted. */
export function buildCrashReport(error: unknown, input: CrashDumpInput): CrashReport {
  const described = describeThrown(error);
  const redact = (text: string): string =>
    redactText(text, { installDir: input.installDir, secrets: input.secrets ?? [] });
  return {
    version: CRASH_DUMP_FORMAT_VERSION,
    timestamp: (input.now ?? new Date()).toISOString(),
    app: { name: SVC_NAME, version: SVC_VERSION },
    runtime: { nodeVersion: process.versions.node, platform: `${process.platform}/${process.arch}`, isSea: isSea() },
    error: { type: described.type, message: redact(described.message), stack: redact(described.stack) },
    context: { exitCode: 1, source: input.source },
    config: input.summary,
  };
}

const RULE = '='.repeat(80);

/** The text dump of a report. */
export function renderCrashText(report: CrashReport): string {
  return [
    RULE,
    'SVC CRASH REPORT',
    RULE,
    `Generated: ${report.timestamp}`,
    '',
    '=== APPLICATION INFO ===',
    `Application: ${report.app.name}`,
    `Version: ${report.app.version}`,
    `Runtime version: Node.js ${report.runtime.nodeVersion}`,
    `Platform: ${report.runtime.platform}`,
    `Executable: ${report.runtime.isSea ? 'SEA (packaged)' : 'Node.js'}`,
    '',
    '=== CRASH INFO ===',
    `Error type: ${report.error.type}`,
    `Source: ${report.context.source}`,
    `Exit code: ${report.context.exitCode}`,
    '',
    '=== ERROR MESSAGE ===',
    report.error.message,
    '',
    '=== STACK TRACE ===',
    report.error.stack === '' ? '(no stack trace)' : report.error.stack,
    '',
    RULE,
    'END OF SVC CRASH REPORT',
    RULE,
    '',
  ].join('\n');
}

/** `crash_dump_<YYYYMMDD>_<HHMMSS>_<mmm>_<pid>` in local time; `_<counter>.json|.txt` follows. */
export function crashDumpBaseName(now: Date, pid: number): string {
  const p = (n: number, width = 2): string => String(n).padStart(width, '0');
  const date = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}`;
  const time = `${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  return `crash_dump_${date}_${time}_${p(now.getMilliseconds(), 3)}_${pid}`;
}

// ---------------------------------------------------------------------------------------------------
// Writing

interface WritePlan {
  dir: string;
  base: string;
  files: { ext: string; content: string }[];
}

type PlanFs = Pick<
  typeof fs,
  'mkdirSync' | 'chmodSync' | 'openSync' | 'fchmodSync' | 'writeFileSync' | 'closeSync' | 'unlinkSync'
>;

/**
 * Creates the directory (0700 when created) and the files (exclusive, 0600) of a plan; the counter
 * goes up until every file name of one counter is free. Self-contained: its source is also the body
 * of the writer thread, so it may use nothing but its arguments.
 */
function executePlan(plan: WritePlan, fsApi: PlanFs, joinPath: (dir: string, name: string) => string): CrashDumpResult {
  const files: string[] = [];
  const errors: string[] = [];
  const codeOf = (err: unknown): string =>
    typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  const text = (err: unknown): string => (err instanceof Error ? err.message : String(err));
  try {
    const created = fsApi.mkdirSync(plan.dir, { recursive: true, mode: 0o700 });
    if (created !== undefined) fsApi.chmodSync(plan.dir, 0o700); // exactly 0700, whatever the umask
  } catch (err) {
    errors.push(`cannot create the crash dump directory ${plan.dir}: ${text(err)}`);
    return { files, errors };
  }
  for (let counter = 1; counter <= 1000; counter += 1) {
    const opened: { fd: number; path: string; content: string }[] = [];
    let taken = false;
    for (const file of plan.files) {
      const path = joinPath(plan.dir, `${plan.base}_${counter}.${file.ext}`);
      try {
        opened.push({ fd: fsApi.openSync(path, 'wx', 0o600), path, content: file.content });
      } catch (err) {
        if (codeOf(err) === 'EEXIST') {
          taken = true;
          break;
        }
        errors.push(`cannot create ${path}: ${text(err)}`);
      }
    }
    if (taken) {
      for (const o of opened) {
        try {
          fsApi.closeSync(o.fd);
          fsApi.unlinkSync(o.path);
        } catch {
          // best effort: an empty file may stay
        }
      }
      continue;
    }
    for (const o of opened) {
      try {
        try {
          fsApi.fchmodSync(o.fd, 0o600); // exactly 0600, whatever the umask
        } catch {
          // not supported everywhere (Windows)
        }
        fsApi.writeFileSync(o.fd, o.content);
        files.push(o.path);
      } catch (err) {
        errors.push(`cannot write ${o.path}: ${text(err)}`);
      } finally {
        try {
          fsApi.closeSync(o.fd);
        } catch {
          // already reported or harmless
        }
      }
    }
    return { files, errors };
  }
  errors.push(`no free crash dump name for ${plan.base} after 1000 attempts`);
  return { files, errors };
}

const WRITER_SOURCE = `'use strict';
const { workerData } = require('node:worker_threads');
const { plan, state, port } = workerData;
let result;
try {
  result = (${executePlan.toString()})(plan, require('node:fs'), require('node:path').join);
} catch (err) {
  result = { files: [], errors: ['crash dump writer failed: ' + String(err)] };
}
port.postMessage(result);
Atomics.store(state, 0, 1);
Atomics.notify(state, 0);
`;

function isResult(value: unknown): value is CrashDumpResult {
  if (typeof value !== 'object' || value === null) return false;
  const { files, errors } = value as Record<string, unknown>;
  const strings = (v: unknown): boolean => Array.isArray(v) && v.every((s) => typeof s === 'string');
  return strings(files) && strings(errors);
}

/** Runs the plan on a writer thread and waits at most `timeoutMs` for it. */
function runPlan(plan: WritePlan, timeoutMs: number): CrashDumpResult {
  const { port1, port2 } = new MessageChannel();
  const state = new Int32Array(new SharedArrayBuffer(4));
  let worker: Worker;
  try {
    worker = new Worker(WRITER_SOURCE, {
      eval: true,
      workerData: { plan, state, port: port2 },
      transferList: [port2],
      execArgv: [],
      stdin: false,
    });
  } catch (err) {
    port1.close();
    const result = executePlan(plan, fs, join);
    result.errors.push(
      `crash dump written without the ${timeoutMs} ms bound (no writer thread: ${err instanceof Error ? err.message : String(err)})`,
    );
    return result;
  }
  worker.on('error', () => undefined); // a failing writer must not become a second uncaught exception
  worker.unref();
  Atomics.wait(state, 0, 0, Math.max(0, timeoutMs));
  const reply = receiveMessageOnPort(port1);
  port1.close();
  void worker.terminate().catch(() => undefined);
  const message: unknown = reply?.message;
  if (isResult(message)) return message;
  return { files: [], errors: [`crash dump write abandoned after ${timeoutMs} ms`] };
}

/**
 * Writes the crash dump files that `input.settings` asks for; synchronous, never throws.
 * The directory is `crashFileDirectory` resolved from the working directory (`''` = the working directory).
 */
export function writeCrashDump(error: unknown, input: CrashDumpInput): CrashDumpResult {
  try {
    const { settings } = input;
    if (!settings.enable) return { files: [], errors: [] };
    const now = input.now ?? new Date();
    const report = buildCrashReport(error, { ...input, now });
    const files: WritePlan['files'] = [];
    if (settings.crashFileCreateJson) files.push({ ext: 'json', content: `${JSON.stringify(report, null, 2)}\n` });
    if (settings.crashFileCreateText) files.push({ ext: 'txt', content: renderCrashText(report) });
    if (files.length === 0) return { files: [], errors: [] };
    const plan: WritePlan = {
      dir: resolve(process.cwd(), settings.crashFileDirectory),
      base: crashDumpBaseName(now, input.pid ?? process.pid),
      files,
    };
    return runPlan(plan, input.timeoutMs ?? CRASH_DUMP_TIMEOUT_MS);
  } catch (err) {
    return { files: [], errors: [`crash dump failed: ${err instanceof Error ? err.message : String(err)}`] };
  }
}

// ---------------------------------------------------------------------------------------------------
// Handlers

export interface CrashHandlerDeps {
  /** Everything but the source; called at crash time so it sees the config then loaded. */
  getInput: () => Omit<CrashDumpInput, 'source'>;
  /** A pino logger also has `flush`, called before the process exits. */
  log: Log & { flush?(): void };
  /** Default `process.exit`. */
  exit?: (code: number) => void;
  /** Called after an unhandled rejection was logged. */
  onUnhandledRejection?: (reason: unknown) => void;
}

/** Used when `getInput` itself fails: the schema defaults, no config, the working directory. */
const FALLBACK_INPUT: Omit<CrashDumpInput, 'source'> = {
  settings: { enable: true, crashFileDirectory: './crash_dumps', crashFileCreateJson: true, crashFileCreateText: true },
  summary: null,
  installDir: '.',
};

function inputOf(deps: CrashHandlerDeps): { input: Omit<CrashDumpInput, 'source'>; problem: string | null } {
  try {
    return { input: deps.getInput(), problem: null };
  } catch (err) {
    return {
      input: FALLBACK_INPUT,
      problem: `crash dump settings unavailable (${err instanceof Error ? err.message : String(err)}); defaults used`,
    };
  }
}

function safeLog(log: Log, obj: object, msg: string): void {
  try {
    log.error(obj, msg);
  } catch {
    try {
      process.stderr.write(`${msg}\n`);
    } catch {
      // nowhere left to report
    }
  }
}

function safeFlush(log: CrashHandlerDeps['log']): void {
  try {
    log.flush?.();
  } catch {
    // exiting anyway
  }
}

function crashAndExit(error: unknown, source: CrashSource, deps: CrashHandlerDeps): CrashDumpResult {
  const { input, problem } = inputOf(deps);
  const result = writeCrashDump(error, { ...input, source });
  if (problem !== null) result.errors.unshift(problem);
  const described = describeThrown(error);
  const redact = (text: string): string =>
    redactText(text, { installDir: input.installDir, secrets: input.secrets ?? [] });
  const what = source === 'fatal' ? 'Fatal error' : 'Uncaught exception';
  const where = result.files.length > 0 ? `crash dump written to ${result.files.join(', ')}` : 'no crash dump written';
  safeLog(
    deps.log,
    {
      source,
      error: { type: described.type, message: redact(described.message), stack: redact(described.stack) },
      crashDumpFiles: result.files,
      ...(result.errors.length > 0 ? { crashDumpErrors: result.errors } : {}),
    },
    `${what}: ${described.type}: ${redact(described.message)}; ${where}; exiting with code 1`,
  );
  safeFlush(deps.log);
  (deps.exit ?? ((code: number) => process.exit(code)))(EXIT_ERROR);
  return result;
}

/**
 * For code that meets an unrecoverable error: writes a dump with source `fatal`, logs, flushes and
 * exits with code 1, like an uncaught exception. Returns only when `deps.exit` returns (tests).
 */
export function fatal(error: unknown, deps: CrashHandlerDeps): CrashDumpResult {
  return crashAndExit(error, 'fatal', deps);
}

/**
 * Listens for `uncaughtException` (dump, log, flush, exit 1) and `unhandledRejection` (logged at
 * error level, redacted, not fatal). Returns the function that removes both listeners.
 */
export function installCrashHandlers(deps: CrashHandlerDeps): () => void {
  let crashing = false;
  const onException = (error: unknown): void => {
    if (crashing) {
      // An exception while crashing (only possible when exit returns): no second dump.
      safeLog(
        deps.log,
        { source: 'uncaughtException' },
        'Uncaught exception while writing a crash dump; exiting with code 1',
      );
      (deps.exit ?? ((code: number) => process.exit(code)))(EXIT_ERROR);
      return;
    }
    crashing = true;
    crashAndExit(error, 'uncaughtException', deps);
  };
  const onRejection = (reason: unknown): void => {
    const { input } = inputOf(deps);
    const described = describeThrown(reason);
    const redact = (text: string): string =>
      redactText(text, { installDir: input.installDir, secrets: input.secrets ?? [] });
    const message = redact(described.message);
    safeLog(
      deps.log,
      { reason: { type: described.type, message, stack: redact(described.stack) } },
      `Unhandled promise rejection (not fatal): ${described.type}: ${message}`,
    );
    try {
      deps.onUnhandledRejection?.(reason);
    } catch {
      // a failing callback must not turn the rejection into a crash
    }
  };
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}

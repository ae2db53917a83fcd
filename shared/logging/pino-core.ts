/**
 * The core of the service's logger, without pretty printing or log files (logger.ts adds those): pino
 * with Svc's six levels, JSON lines, and secrets scrubbed from every line (logger.ts says how). The
 * Lambda functions log through `createJsonLogger` alone, so their bundles hold neither pino-pretty
 * nor pino-roll (and its date library).
 */

import type { DestinationStream, StreamEntry } from 'pino';
import pino from 'pino';
import type { LogLevelName } from '../config/builders.js';
import { SECRET_KEYS } from '../config/secrets.js';
import { SVC_NAME } from '../version.js';

/** pino's own levels stay (trace, fatal and the four shared ones); these two are added. */
const CUSTOM_LEVELS = { silly: 5, verbose: 25 } as const;
type CustomLevelName = keyof typeof CUSTOM_LEVELS;

/** pino level numbers of Svc's levels: silly < (trace) < debug < verbose < info < warn < error (< fatal). */
export const LOG_LEVEL_VALUES = {
  silly: CUSTOM_LEVELS.silly,
  debug: 20,
  verbose: CUSTOM_LEVELS.verbose,
  info: 30,
  warn: 40,
  error: 50,
} as const satisfies Record<LogLevelName, number>;

/** Every level the logger knows, pino's and Svc's, by name. */
export const ALL_LEVELS: Readonly<Record<string, number>> = { ...pino.levels.values, ...CUSTOM_LEVELS };

export type Logger = pino.Logger<CustomLevelName, false>;

export const REDACTED = '[REDACTED]';

/** The options every Svc logger takes. */
export interface CoreLoggerOptions {
  level: LogLevelName;
  /** Secret VALUES to scrub from every line (e.g. `secretValues(config)`). */
  secrets?: readonly string[];
  /** `name` field of every line; default `svc`. */
  name?: string;
}

export function lowestLevel(): number {
  return Math.min(...Object.values(ALL_LEVELS));
}

/**
 * A Svc logger over the given streams. Every stream takes every line: the logger's level is the one
 * threshold, so changing `logger.level` at run time works for all streams. (multistream's default
 * per stream is info.)
 */
export function svcLogger(options: CoreLoggerOptions, streams: DestinationStream[]): Logger {
  const entries: StreamEntry<number>[] = streams.map((stream) => ({ stream, level: lowestLevel() }));
  return pino<CustomLevelName, false>(
    {
      name: options.name ?? SVC_NAME,
      level: options.level,
      customLevels: CUSTOM_LEVELS,
      useOnlyCustomLevels: false,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths(SECRET_KEYS), censor: REDACTED },
      hooks: { streamWrite: lineScrubber(options.secrets ?? []) },
    },
    pino.multistream(entries, { levels: { ...ALL_LEVELS } }),
  );
}

/** JSON lines on stdout, written synchronously (a Lambda function's log: nothing pending when it is frozen). */
export function createJsonLogger(options: CoreLoggerOptions): Logger {
  return svcLogger(options, [pino.destination({ dest: 1, sync: true })]);
}

/** pino redact paths of the secret keys at depth 1 to 4 (`key`, `*.key`, `*.*.key`, `*.*.*.key`). */
export function redactPaths(keys: readonly string[]): string[] {
  const paths: string[] = [];
  for (const key of keys) {
    const top = /^[A-Za-z_$][\w$]*$/.test(key) ? key : `[${JSON.stringify(key)}]`;
    const nested = top.startsWith('[') ? top : `.${top}`;
    paths.push(top, `*${nested}`, `*.*${nested}`, `*.*.*${nested}`);
  }
  return paths;
}

/** `scheme://userinfo@` in a JSON line; userinfo may contain JSON escapes but no quote, slash or space. */
const URL_CREDENTIALS = /\b([A-Za-z][A-Za-z0-9+.-]*:\/\/)(?:[^\s/?#@"\\]|\\.)+@/g;
/** A JSON string literal. */
const JSON_STRING = /"(?:[^"\\]|\\.)*"/g;

/**
 * The `streamWrite` hook: replaces the secret values (as they appear JSON-escaped) inside the
 * line's strings, and URL credentials. Without secrets, a line without `://` costs one `includes`.
 */
export function lineScrubber(secrets: readonly string[]): (line: string) => string {
  const escaped = [...new Set(secrets.filter((secret) => secret.length > 0))]
    .map((secret) => JSON.stringify(secret).slice(1, -1))
    .sort((a, b) => b.length - a.length);
  const secretPattern = escaped.length > 0 ? new RegExp(escaped.map(escapeRegExp).join('|'), 'g') : undefined;

  return (line: string): string => {
    let out = line;
    if (secretPattern !== undefined) {
      secretPattern.lastIndex = 0;
      if (secretPattern.test(out)) {
        // Only inside strings, so a secret that looks like a number or a key cannot break the JSON.
        out = out.replace(JSON_STRING, (literal) => literal.replace(secretPattern, REDACTED));
      }
    }
    if (out.includes('://')) out = out.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
    return out;
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

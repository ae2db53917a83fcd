/**
 * From a config file to plain data, safely: the file's size and encoding are checked before YAML
 * sees it, YAML problems are reported in words that quote nothing of the file, and aliases are
 * expanded here rather than by the YAML library, within a budget and without cycles.
 *
 * Why not `doc.toJS()`: the library reports an alias bomb as a bare ReferenceError, returns cyclic
 * objects for an alias inside its own anchor (which then overflow the stack of every walker),
 * shares one object between an anchor and its aliases (so cutting a disabled section could cut an
 * enabled one), and finds each alias's anchor by scanning the document, which is quadratic in the
 * number of aliases. Its `uniqueKeys` check is quadratic in the keys of a mapping, so duplicate keys
 * are found here too, with a Set.
 */
import { isUtf8 } from 'node:buffer';
import { type Document, type ErrorCode, isAlias, isMap, isNode, isScalar, isSeq, type YAMLError } from 'yaml';
import { readRegularFile } from '../util/files.js';
import { groupDigits } from '../util/numbers.js';
import type { PathSegment } from './walk.js';

/** Largest config file read (1 MiB): far above any real file (config/full.yaml, every key, is about 30 KB). */
export const MAX_CONFIG_BYTES = 1_048_576;
/** Values aliases may add to the file in total: a shared tag list reused by hundreds of servers fits, an alias bomb does not. */
export const MAX_ALIAS_VALUES = 10_000;
/** Deepest nesting of lists and mappings (the schema's deepest key is about 10 levels down). */
export const MAX_NESTING = 64;

/** A problem at a character offset of the text, optionally at a key path. */
export interface TextProblem {
  offset: number;
  path: PathSegment[];
  message: string;
  /**
   * The rest of the file can still be checked: the key is left out (a key set twice keeps its first
   * value), so the loader reports this problem with every other one instead of stopping at it.
   */
  recoverable?: boolean;
}

/** "1.0 MiB" or "512 KiB": sizes as an operator reads them. */
function size(bytes: number): string {
  return bytes >= 1_048_576 ? `${(bytes / 1_048_576).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`;
}

/** The message for a file over the limit; one wording for the file on disk and for given text. */
export function tooLarge(bytes: number): string {
  return `the file is ${size(bytes)}; a config file may be at most ${size(MAX_CONFIG_BYTES)} (${groupDigits(MAX_CONFIG_BYTES)} bytes)`;
}

/** The file's text, or what is wrong with it (with the 1-based line and column where that is known). */
export type ReadResult = { ok: true; text: string } | { ok: false; problem: string; line?: number; column?: number };

/**
 * Reads at most MAX_CONFIG_BYTES (+1, to tell that there is more) from a regular file and decodes
 * it as UTF-8. Never reads an unbounded amount: a device or a file that grows is cut off.
 */
export function readConfigBytes(file: string): ReadResult {
  const read = readRegularFile(file, MAX_CONFIG_BYTES);
  if (read.ok) return decodeUtf8(read.bytes);
  if (read.tooLarge !== undefined) return { ok: false, problem: tooLarge(read.tooLarge) };
  return { ok: false, problem: `cannot read the config file: ${read.reason}` };
}

/**
 * The text of UTF-8 bytes, or where the first invalid byte is. (Decoding leniently would turn binary
 * junk into hundreds of YAML errors about replacement characters.)
 */
export function decodeUtf8(bytes: Buffer): ReadResult {
  if (isUtf8(bytes)) return { ok: true, text: bytes.toString('utf8') };
  // In streaming mode a prefix that ends inside a character is not an error, so "this prefix
  // decodes" is monotonic: a binary search finds the first bad byte in about 20 decodes.
  const decodes = (n: number): boolean => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(0, n), { stream: true });
      return true;
    } catch {
      return false;
    }
  };
  let good = 0;
  let bad = bytes.length;
  while (bad - good > 1) {
    const mid = Math.floor((good + bad) / 2);
    if (decodes(mid)) good = mid;
    else bad = mid;
  }
  const before = new TextDecoder('utf-8').decode(bytes.subarray(0, good), { stream: true });
  const lineStart = before.lastIndexOf('\n') + 1;
  const line = before.split('\n').length;
  return {
    ok: false,
    problem: 'the file is not UTF-8 text; save it as UTF-8',
    line,
    column: before.length - lineStart + 1,
  };
}

/**
 * What each YAML error code means, in words that quote nothing of the file, for the codes whose
 * library messages quote file text (a token, an escape, a tag: possibly a secret, possibly
 * megabytes). The other codes' messages are fixed texts and are used as they are.
 */
const QUOTING_CODES: Partial<Record<ErrorCode, string>> = {
  BAD_DIRECTIVE: 'unknown or unsupported %-directive',
  BAD_DQ_ESCAPE: 'invalid escape sequence in a double-quoted string',
  BAD_SCALAR_START: 'a plain value cannot start with this character; quote the value',
  BAD_COLLECTION_TYPE: 'a tag does not fit the list or mapping it is on',
  DUPLICATE_KEY: 'keys must be unique',
  RESOURCE_EXHAUSTION: `nested too deeply (at most ${MAX_NESTING} levels)`,
  TAG_RESOLVE_FAILED: 'unknown tag (a Svc config uses no !tags; write ${env:NAME} for a value from the environment)',
};

/**
 * The document's YAML errors as problems, and its unknown tags (the library only warns and keeps
 * the text: `!env NAME` would silently become the string "NAME").
 */
export function yamlProblems(doc: Document): TextProblem[] {
  return [...doc.errors, ...doc.warnings.filter((w) => w.code === 'TAG_RESOLVE_FAILED')].map(yamlProblem);
}

/** A YAML library error as a problem: first line only, no position suffix, no quoted file text. */
function yamlProblem(error: YAMLError): TextProblem {
  let message =
    QUOTING_CODES[error.code] ??
    (error.message.split('\n')[0] ?? error.code).replace(/ at line \d+, column \d+:?$/, '');
  // UNEXPECTED_TOKEN messages end in ": <the token's source>" when they quote it (a whole line of
  // junk, for binary input); the words before it say what was wrong.
  if (error.code === 'UNEXPECTED_TOKEN') message = message.split(': ')[0] ?? message;
  return { offset: error.pos[0], path: [], message: `YAML syntax error: ${message}` };
}

/** The text of a mapping key as it becomes an object key (and a path segment). */
export function keyText(key: unknown): string | undefined {
  if (!isScalar(key)) return undefined;
  const value = key.value;
  if (value === null) return '';
  if (typeof value === 'string') return value;
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : undefined;
}

interface Anchored {
  /** The converted value, once the anchored node is complete; undefined while inside it. */
  value?: unknown;
  /** Values in it, counting what its own aliases expanded to. */
  values: number;
}

/**
 * The document's content as plain data (objects, arrays, strings, numbers, booleans, null).
 * Problems: duplicate keys, keys that are not plain text, nesting deeper than MAX_NESTING, an
 * alias without an earlier anchor or inside the value it names, and aliases adding more than
 * MAX_ALIAS_VALUES values. Each alias becomes a copy of its anchor's value.
 */
export function documentData(doc: Document): { data: unknown; problems: TextProblem[] } {
  const problems: TextProblem[] = [];
  const anchors = new Map<string, Anchored>();
  const path: PathSegment[] = [];
  let aliasBudget = MAX_ALIAS_VALUES;
  const problem = (node: unknown, message: string, at: PathSegment[] = path, recoverable = false): void => {
    problems.push({ offset: isNode(node) ? (node.range?.[0] ?? 0) : 0, path: [...at], message, recoverable });
  };

  /** Converts `node`; returns the value and how many values it holds. */
  const convert = (node: unknown, depth: number): { value: unknown; values: number } => {
    if (depth > MAX_NESTING) {
      if (depth === MAX_NESTING + 1)
        problem(node, `nested too deeply (at most ${MAX_NESTING} levels of lists and mappings)`);
      return { value: null, values: 1 };
    }
    const anchorName = (isMap(node) || isSeq(node) || isScalar(node)) && node.anchor ? node.anchor : undefined;
    const anchored: Anchored | undefined = anchorName === undefined ? undefined : { values: 0 };
    // YAML: an alias names the latest anchor of that name before it; a later one replaces it.
    if (anchorName !== undefined && anchored) anchors.set(anchorName, anchored);
    const done = (value: unknown, values: number) => {
      if (anchored) Object.assign(anchored, { value, values });
      return { value, values };
    };

    if (node === null || node === undefined) return { value: null, values: 1 };
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) {
        problem(node, 'alias to an anchor that is not defined before it');
        return { value: null, values: 1 };
      }
      if (!('value' in target)) {
        problem(node, 'alias inside the value it refers to (a cycle)');
        return { value: null, values: 1 };
      }
      if (target.values > aliasBudget) {
        if (aliasBudget >= 0)
          problem(
            node,
            `aliases expand to more than ${groupDigits(MAX_ALIAS_VALUES)} values in total (a guard against alias bombs)`,
          );
        aliasBudget = -1;
        return { value: null, values: 1 };
      }
      aliasBudget -= target.values;
      return { value: structuredClone(target.value), values: target.values };
    }
    // The core schema yields only these scalars; anything else falls through to the problem below.
    if (isScalar(node) && (node.value === null || ['string', 'number', 'boolean'].includes(typeof node.value)))
      return done(node.value, 1);
    if (isSeq(node)) {
      const out: unknown[] = [];
      let values = 1;
      node.items.forEach((item, i) => {
        path.push(i);
        const child = convert(item, depth + 1);
        path.pop();
        out.push(child.value);
        values += child.values;
      });
      return done(out, values);
    }
    if (isMap(node)) {
      const out: Record<string, unknown> = {};
      const seen = new Set<string>();
      let values = 1;
      for (const pair of node.items) {
        const key = keyText(pair.key);
        if (key === undefined) {
          problem(pair.key, 'a key must be plain text, not a list, mapping or alias', path, true);
          continue;
        }
        if (seen.has(key)) {
          problem(pair.key, 'the same key is set twice in this mapping; keys must be unique', [...path, key], true);
          continue;
        }
        seen.add(key);
        path.push(key);
        const child = convert(pair.value, depth + 1);
        path.pop();
        // A key named __proto__ is data here, never the object's prototype.
        Object.defineProperty(out, key, { value: child.value, enumerable: true, writable: true, configurable: true });
        values += child.values;
      }
      return done(out, values);
    }
    problem(node, 'a value that is not text, a number, a boolean, a list or a mapping');
    return { value: null, values: 1 };
  };

  const data = convert(doc.contents, 0).value;
  return { data, problems };
}

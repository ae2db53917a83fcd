/**
 * Shared pieces of the datagram parsers: the result type, decoding, prefix reading and previews.
 * Pure, never throws.
 */

import { sanitiseField } from '../../common/sanitise.js';
import { MAX_PREFIX_LENGTH } from './layouts.js';

export type ParseFailureReason = 'unknown_prefix' | 'malformed';

export interface ParseFailure {
  ok: false;
  /** `unknown_prefix`: field 0 is not a prefix of this listener; `malformed`: §0.4 (too few fields, …). */
  reason: ParseFailureReason;
  /** Human-readable cause, safe to log (sanitised). */
  detail: string;
  /** The first 512 sanitised characters of the datagram (§0.4), for the WARN/DEBUG log line. */
  preview: string;
}

export type ParseResult<T> = { ok: true; event: T } | ParseFailure;

/** What a listener hands to a parser: the datagram bytes as read, or an already decoded text. */
export type Datagram = Buffer | Uint8Array | string;

export const PREVIEW_LENGTH = 512;

/**
 * UTF-8 decoding of §0.4 step 1: an invalid byte sequence becomes U+FFFD. A string is taken as it is.
 * Anything else (only possible from untyped callers) gives `null`.
 */
export function decodeDatagram(datagram: unknown): string | null {
  if (typeof datagram === 'string') return datagram;
  if (Buffer.isBuffer(datagram)) return datagram.toString('utf8');
  if (datagram instanceof Uint8Array)
    return Buffer.from(datagram.buffer, datagram.byteOffset, datagram.byteLength).toString('utf8');
  return null;
}

/** Field 0 (the text before the first `;`). */
export function prefixOf(text: string): string {
  const end = text.indexOf(';');
  return end === -1 ? text : text.slice(0, end);
}

/**
 * Field 0 folded for the prefix lookup: ASCII letters lower-cased, nothing else changed (so no
 * non-ASCII character can fold onto a prefix). `null` when it is too long to be any known prefix.
 */
export function prefixKey(text: string): string | null {
  const prefix = prefixOf(text);
  if (prefix.length > MAX_PREFIX_LENGTH) return null;
  // Nearly always lower-case already: then the prefix is its own key, without a regex replace.
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix.charCodeAt(i);
    if (c >= 0x41 && c <= 0x5a) return prefix.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
  }
  return prefix;
}

/** `user_full` (§1.2, §2.2): `dir\\id` when directory and user id are both non-empty, else `''`. */
export function userFull(dir: string, id: string): string {
  return dir !== '' && id !== '' ? `${dir}\\${id}` : '';
}

export function failure(reason: ParseFailureReason, detail: string, text: string): ParseFailure {
  return { ok: false, reason, detail, preview: sanitiseField(text, PREVIEW_LENGTH) };
}

export function unknownPrefix(text: string): ParseFailure {
  return failure('unknown_prefix', `unknown prefix ${JSON.stringify(sanitiseField(prefixOf(text), 64))}`, text);
}

/** Last-resort result for a bug in a parser: parsers must never throw on any input. */
export function internalError(error: unknown, text: string): ParseFailure {
  const message = error instanceof Error ? error.message : String(error);
  return failure('malformed', `internal parser error: ${sanitiseField(message, 200)}`, text);
}

export const NOT_A_DATAGRAM = 'datagram is neither bytes nor a string';

/**
 * The frame of both parsers: decode the datagram (§0.4 step 1), run `parse` on the text, and turn
 * any exception (a parser bug) into a `malformed` result, so a parser never throws.
 */
export function parseDatagram<R extends { ok: true }>(
  datagram: Datagram,
  parse: (text: string) => R | ParseFailure,
): R | ParseFailure {
  const text = decodeDatagram(datagram);
  if (text === null) return failure('malformed', NOT_A_DATAGRAM, '');
  try {
    return parse(text);
  } catch (error) {
    return internalError(error, text);
  }
}

/**
 * Parser of UDP user-activity events (platform-formats.md §1.2, the parsing part of §1.3, §1.4 app id,
 * §1.5 user-agent text). Pure, never throws. Exclusion, counting, the app-name lookup, user-agent
 * parsing and publishing happen after this.
 */

import { uuid } from '../../common/validators.js';
import {
  type Datagram,
  failure,
  type ParseResult,
  parseDatagram,
  prefixKey,
  unknownPrefix,
  userFull,
} from './common.js';
import { decodeInto, USER_EVENT_LAYOUT, USER_EVENT_PREFIXES } from './layouts.js';
import { splitDatagram } from './split.js';

export type { UserEventType } from './layouts.js';

import type { UserActivity } from '../../../../shared/platform/events.js';

/** What the parser returns: the §1.2 keys and §1.4 app id; the app name and user agent are enrichment. */
export type UserEvent = Omit<
  UserActivity,
  'appName' | 'uaBrowserName' | 'uaBrowserMajorVersion' | 'uaOsName' | 'uaOsVersion'
> & {
  /** §1.5: the user-agent text of `message` (trimmed, `'` deleted); absent when there is none or it is empty. */
  uaText?: string;
  /** The instant the datagram was read from the socket (ms since the epoch); also the event time (§0.3). */
  receivedAtMs: number;
};

/** §1.4: `/app/<id>` up to the first `/`, `?` or `#`, when `<id>` passes `uuid`. */
export function extractAppId(context: string): string | undefined {
  if (!context.startsWith('/app/')) return undefined;
  const rest = context.slice('/app/'.length);
  const end = rest.search(/[/?#]/);
  const id = uuid(end === -1 ? rest : rest.slice(0, end));
  return id === '' ? undefined : id;
}

const UA_MARK = 'UserAgent:';

/**
 * §1.5: the text after the first `UserAgent:` up to the next `UserAgent:` or the end, trimmed, with
 * every `'` deleted (in that order). `undefined` when the message has no `UserAgent:` or the text is empty.
 */
export function extractUaText(message: string): string | undefined {
  const at = message.indexOf(UA_MARK);
  if (at === -1) return undefined;
  const start = at + UA_MARK.length;
  const next = message.indexOf(UA_MARK, start);
  const ua = message
    .slice(start, next === -1 ? undefined : next)
    .trim()
    .replaceAll("'", '');
  return ua === '' ? undefined : ua;
}

function parse(text: string, receivedAtMs: number): ParseResult<UserEvent> {
  const key = prefixKey(text);
  const messageType = key === null ? undefined : USER_EVENT_PREFIXES.get(key);
  if (messageType === undefined) return unknownPrefix(text);
  const split = splitDatagram(text, USER_EVENT_LAYOUT);
  if (!split.ok) {
    return failure('malformed', `${messageType}: expected ${USER_EVENT_LAYOUT.n} fields, got ${split.parts}`, text);
  }
  const f = decodeInto({ messageType }, split.fields, USER_EVENT_LAYOUT.fields);
  const event: UserEvent = Object.assign(f, {
    user_full: userFull(f.user_directory, f.user_id),
    receivedAtMs,
  });
  const appId = extractAppId(f.context);
  if (appId !== undefined) event.appId = appId;
  const uaText = extractUaText(f.message);
  if (uaText !== undefined) event.uaText = uaText;
  return { ok: true, event };
}

/**
 * Parses one datagram of the user-activity listener. `receivedAtMs` is the instant it was read from
 * the socket. Unknown field 0 → `unknown_prefix`; fewer than 8 fields → `malformed`.
 */
export function parseUserEvent(datagram: Datagram, receivedAtMs: number): ParseResult<UserEvent> {
  return parseDatagram(datagram, (text) => parse(text, receivedAtMs));
}

import { describe, expect, it } from 'vitest';
import { USER_EVENT_LAYOUT } from '../../../../../edge-agent/sources/udp/parse/layouts.js';
import {
  extractAppId,
  extractUaText,
  parseUserEvent,
  type UserEvent,
} from '../../../../../edge-agent/sources/udp/parse/user-event.js';
import {
  RECEIVED_AT,
  USER_CONNECTION_CLOSE,
  USER_CONNECTION_OPEN,
  USER_SESSION_START,
  USER_SESSION_STOP,
  withField,
} from './fixtures.js';

function parsed(datagram: Buffer | string): UserEvent {
  const r = parseUserEvent(datagram, RECEIVED_AT);
  if (!r.ok) throw new Error(`expected ok, got ${r.reason}: ${r.detail}`);
  return r.event;
}

const GRIN = '\u{1F600}';

describe('§1.6 example messages', () => {
  it('session start', () => {
    expect(parsed(USER_SESSION_START)).toEqual({
      messageType: 'qseow-proxy-session',
      host: 'PLAT-N1',
      command: 'Start session',
      user_directory: 'LAB',
      user_id: 'goran',
      origin: 'AppAccess',
      context: '/hub/',
      message: "Start session for user 'LAB\\goran'",
      user_full: 'LAB\\goran',
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('session stop', () => {
    expect(parsed(USER_SESSION_STOP)).toEqual({
      messageType: 'qseow-proxy-session',
      host: 'PLAT-N1',
      command: 'Stop session',
      user_directory: 'LAB',
      user_id: 'goran',
      origin: 'AppAccess',
      context: '/hub/',
      message: "Stop session for user 'LAB\\goran'",
      user_full: 'LAB\\goran',
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('connection open: 10 parts, the user agent keeps its two `;`', () => {
    expect(USER_CONNECTION_OPEN.split(';')).toHaveLength(10);
    expect(parsed(USER_CONNECTION_OPEN)).toEqual({
      messageType: 'qseow-proxy-connection',
      host: 'PLAT-N1',
      command: 'Open connection',
      user_directory: 'LAB',
      user_id: 'goran',
      origin: 'AppAccess',
      context:
        '/app/e7af59a0-c243-480d-9571-08727551a66f?reloaduri=https%3a%2f%2fplat.lab.local%2fapp%2fe7af59a0-c243-480d-9571-08727551a66f',
      message:
        "Websocket connection Opened for session '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11'. UserAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'",
      user_full: 'LAB\\goran',
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      uaText:
        'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('connection close', () => {
    expect(parsed(USER_CONNECTION_CLOSE)).toEqual({
      messageType: 'qseow-proxy-connection',
      host: 'PLAT-N2',
      command: 'Close connection',
      user_directory: 'LAB',
      user_id: 'anna',
      origin: 'AppAccess',
      context: '/app/0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      message:
        "Websocket connection Closed for session '9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f'. UserAgent: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15'",
      user_full: 'LAB\\anna',
      appId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      uaText:
        'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.2 Safari/605.1.15',
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('bytes parse like the text', () => {
    for (const d of [USER_SESSION_START, USER_CONNECTION_OPEN])
      expect(parsed(Buffer.from(d, 'utf8'))).toEqual(parsed(d));
    const u8 = new Uint8Array(Buffer.from(`xx${USER_SESSION_STOP}`, 'utf8')).subarray(2);
    expect(parseUserEvent(u8, RECEIVED_AT)).toEqual(parseUserEvent(USER_SESSION_STOP, RECEIVED_AT));
  });
});

describe('layout (§1.2)', () => {
  it('caps match the spec', () => {
    const caps = Object.fromEntries(Object.entries(USER_EVENT_LAYOUT.fields).map(([k, d]) => [k, [d.idx, d.rule.cap]]));
    expect(caps).toEqual({
      host: [1, 100],
      command: [2, 100],
      user_directory: [3, 100],
      user_id: [4, 100],
      origin: [5, 200],
      context: [6, 500],
      message: [7, 1000],
    });
    expect(USER_EVENT_LAYOUT.messageTypeCap).toBe(100);
  });

  it('prefix is compared case-insensitively and stored lower-case without slashes', () => {
    expect(parsed(USER_SESSION_START.replace('/qseow-proxy-session/', '/QSEOW-Proxy-SESSION/')).messageType).toBe(
      'qseow-proxy-session',
    );
    expect(
      parsed(USER_CONNECTION_OPEN.replace('/qseow-proxy-connection/', '/QSEOW-PROXY-CONNECTION/')).messageType,
    ).toBe('qseow-proxy-connection');
  });

  it.each([
    ['log prefix', USER_SESSION_START.replace('/qseow-proxy-session/', '/qseow-proxy/')],
    ['no slashes', USER_SESSION_START.replace('/qseow-proxy-session/', 'qseow-proxy-session')],
    ['trailing space', USER_SESSION_START.replace('/qseow-proxy-session/', '/qseow-proxy-session/ ')],
    ['control character in prefix', USER_SESSION_START.replace('/qseow-proxy-session/', '/qseow-proxy-session/\n')],
    ['dotless-i look-alike', USER_SESSION_START.replace('/qseow-proxy-session/', '/qseow-proxy-sessİon/')],
    ['empty', ''],
    ['no `;` at all', 'hello'],
    ['long garbage', 'x'.repeat(100_000)],
  ])('unknown prefix: %s', (_name, datagram) => {
    const r = parseUserEvent(datagram, RECEIVED_AT);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.reason).toBe('unknown_prefix');
      expect(r.detail).toMatch(/^unknown prefix /);
    }
  });

  it('unknown prefix result carries the first 512 sanitised characters', () => {
    const datagram = `/nope/;a\tb;${'é'.repeat(600)}`;
    expect(parseUserEvent(datagram, RECEIVED_AT)).toEqual({
      ok: false,
      reason: 'unknown_prefix',
      detail: 'unknown prefix "/nope/"',
      preview: `/nope/;ab;${'é'.repeat(502)}`,
    });
  });

  it('fewer than 8 fields is malformed', () => {
    expect(
      parseUserEvent('/qseow-proxy-session/;PLAT-N1;Start session;LAB;goran;AppAccess;/hub/', RECEIVED_AT),
    ).toEqual({
      ok: false,
      reason: 'malformed',
      detail: 'qseow-proxy-session: expected 8 fields, got 7',
      preview: '/qseow-proxy-session/;PLAT-N1;Start session;LAB;goran;AppAccess;/hub/',
    });
    const r = parseUserEvent('/qseow-proxy-connection/', RECEIVED_AT);
    expect(r.ok === false && r.reason).toBe('malformed');
  });

  it('exactly 8 empty fields parse', () => {
    expect(parsed('/qseow-proxy-session/;;;;;;;')).toEqual({
      messageType: 'qseow-proxy-session',
      host: '',
      command: '',
      user_directory: '',
      user_id: '',
      origin: '',
      context: '',
      message: '',
      user_full: '',
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('surplus `;` all go to the message (field 7)', () => {
    const e = parsed(`${withField(USER_SESSION_START, 7, "a;b;;c'd")};`);
    expect(e.message).toBe("a;b;;c'd;");
    expect(e.context).toBe('/hub/');
  });

  it('user_full only when both directory and user id are non-empty', () => {
    expect(parsed(withField(USER_SESSION_START, 3, '')).user_full).toBe('');
    expect(parsed(withField(USER_SESSION_START, 4, '')).user_full).toBe('');
    expect(parsed(withField(USER_SESSION_START, 4, '\n\t')).user_full).toBe('');
  });

  it('control characters are stripped from every field', () => {
    const datagram =
      '/qseow-proxy-session/;PLAT\r-N1;Start\tsession;LA\u0000B;gor\u007fan;App\u001fAccess;/app/\ne7af59a0-c243-480d-9571-08727551a66f;line1\r\nline2\n';
    expect(parsed(datagram)).toEqual({
      messageType: 'qseow-proxy-session',
      host: 'PLAT-N1',
      command: 'Startsession',
      user_directory: 'LAB',
      user_id: 'goran',
      origin: 'AppAccess',
      context: '/app/e7af59a0-c243-480d-9571-08727551a66f',
      message: 'line1line2',
      user_full: 'LAB\\goran',
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('length caps in code points, never splitting a surrogate pair', () => {
    const long = (n: number): string => 'a'.repeat(n - 1) + GRIN + GRIN;
    const datagram = [
      '/qseow-proxy-session/',
      long(100),
      long(100),
      long(100),
      long(100),
      long(200),
      long(500),
      long(1000),
    ].join(';');
    expect(parsed(datagram)).toEqual({
      messageType: 'qseow-proxy-session',
      host: 'a'.repeat(99) + GRIN,
      command: 'a'.repeat(99) + GRIN,
      user_directory: 'a'.repeat(99) + GRIN,
      user_id: 'a'.repeat(99) + GRIN,
      origin: 'a'.repeat(199) + GRIN,
      context: 'a'.repeat(499) + GRIN,
      message: 'a'.repeat(999) + GRIN,
      user_full: `${'a'.repeat(99)}${GRIN}\\${'a'.repeat(99)}${GRIN}`,
      receivedAtMs: RECEIVED_AT,
    });
  });

  it('invalid UTF-8 becomes U+FFFD', () => {
    const bytes = Buffer.concat([
      Buffer.from('/qseow-proxy-session/;PLAT-N1;Start session;LAB;g', 'utf8'),
      Buffer.from([0xff, 0xc3]),
      Buffer.from(';AppAccess;/hub/;msg ', 'utf8'),
      Buffer.from([0xe2, 0x82]),
    ]);
    const e = parsed(bytes);
    expect(e.user_id).toBe('g\uFFFD\uFFFD');
    expect(e.message).toBe('msg \uFFFD');
    expect(e.user_full).toBe('LAB\\g\uFFFD\uFFFD');
  });

  it('a non-datagram from an untyped caller is malformed, not a throw', () => {
    expect(parseUserEvent(42 as unknown as string, RECEIVED_AT)).toEqual({
      ok: false,
      reason: 'malformed',
      detail: 'datagram is neither bytes nor a string',
      preview: '',
    });
  });
});

describe('§1.4 app id', () => {
  const id = 'e7af59a0-c243-480d-9571-08727551a66f';
  it.each([
    [`/app/${id}`, id],
    [`/app/${id.toUpperCase()}`, id],
    [`/app/${id}?reloaduri=x`, id],
    [`/app/${id}/sheet/abc/state/analysis`, id],
    [`/app/${id}#frag`, id],
    [`/app/${id}/`, id],
    [`app/${id}`, undefined],
    [`/APP/${id}`, undefined],
    [`/hub/`, undefined],
    [`/hub/app/${id}`, undefined],
    [`/app/`, undefined],
    [`/app/not-a-uuid`, undefined],
    [`/app/${id}x`, undefined],
    [`/app//${id}`, undefined],
    [`/app/${id.slice(0, 35)}`, undefined],
    ['', undefined],
  ])('%j → %j', (context, expected) => {
    expect(extractAppId(context)).toBe(expected);
    const e = parsed(withField(USER_SESSION_START, 6, context));
    if (expected === undefined) expect(e).not.toHaveProperty('appId');
    else expect(e.appId).toBe(expected);
  });
});

describe('§1.5 user-agent text', () => {
  it.each([
    ['no user agent', 'Start session', undefined],
    ['quoted', "x. UserAgent: 'Mozilla/5.0 (X11; Linux)'", 'Mozilla/5.0 (X11; Linux)'],
    ['unquoted', 'UserAgent:curl/8.0', 'curl/8.0'],
    ['quotes inside are deleted too', "UserAgent: 'it''s'", 'its'],
    ['trimmed, then quotes deleted', "UserAgent:   ' padded '   ", ' padded '],
    ['up to the next UserAgent:', "UserAgent: 'A' UserAgent: 'B'", 'A'],
    ['empty', 'UserAgent:', undefined],
    ['blank', 'UserAgent:    ', undefined],
    ['only quotes', "UserAgent: ''", undefined],
    ['marker is case-sensitive', "useragent: 'A'", undefined],
    ['empty before the next marker', "UserAgent: UserAgent: 'B'", undefined],
  ])('%s', (_name, message, expected) => {
    expect(extractUaText(message)).toBe(expected);
    const e = parsed(withField(USER_SESSION_START, 7, message));
    if (expected === undefined) expect(e).not.toHaveProperty('uaText');
    else expect(e.uaText).toBe(expected);
  });

  it('is taken from the sanitised message (control characters removed, after the 1000 cap)', () => {
    expect(parsed(withField(USER_SESSION_START, 7, "UserAgent: 'Moz\tilla'\r\n")).uaText).toBe('Mozilla');
    expect(parsed(withField(USER_SESSION_START, 7, `${'x'.repeat(986)}UserAgent: 'abc'`)).uaText).toBe('ab');
  });
});

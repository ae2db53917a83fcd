import { describe, expect, it } from 'vitest';
import {
  decodeDatagram,
  failure,
  internalError,
  prefixKey,
  prefixOf,
  userFull,
} from '../../../../../edge-agent/sources/udp/parse/common.js';
import {
  LOG_SOURCE_BY_PREFIX,
  MAX_PREFIX_LENGTH,
  USER_EVENT_PREFIXES,
} from '../../../../../edge-agent/sources/udp/parse/layouts.js';

describe('common helpers', () => {
  it('decodeDatagram: UTF-8 with U+FFFD for invalid sequences; strings as they are; anything else null', () => {
    expect(decodeDatagram(Buffer.from([0x61, 0xff, 0x62, 0xe2, 0x82]))).toBe('a\uFFFDb\uFFFD');
    expect(decodeDatagram(Buffer.from([0xed, 0xa0, 0x80]))).toBe('\uFFFD\uFFFD\uFFFD'); // encoded surrogate
    expect(decodeDatagram(Buffer.from([0xc0, 0xaf]))).toBe('\uFFFD\uFFFD'); // overlong
    expect(decodeDatagram(new Uint8Array([0xf0, 0x9f, 0x98, 0x80]))).toBe('\u{1F600}');
    expect(decodeDatagram('\uD800x')).toBe('\uD800x');
    expect(decodeDatagram(undefined)).toBeNull();
    expect(decodeDatagram([0x61])).toBeNull();
  });

  it('prefixOf / prefixKey: field 0, ASCII letters folded, too long → null', () => {
    expect(prefixOf('/a/;b;c')).toBe('/a/');
    expect(prefixOf('/a/')).toBe('/a/');
    expect(prefixKey('/QSEOW-Engine/;x')).toBe('/qseow-engine/');
    expect(prefixKey('/qseow-engine/;x')).toBe('/qseow-engine/');
    expect(prefixKey('/qseow-enginE/;x')).toBe('/qseow-engine/');
    expect(prefixKey('/Zqseow-engine@[/;x')).toBe('/zqseow-engine@[/');
    expect(prefixKey('/QSEOW-İ/;x')).toBe('/qseow-İ/');
    expect(prefixKey(`/${'x'.repeat(MAX_PREFIX_LENGTH)};`)).toBeNull();
    expect(MAX_PREFIX_LENGTH).toBe('/qseow-proxy-connection/'.length);
  });

  it('prefix tables', () => {
    expect([...USER_EVENT_PREFIXES]).toEqual([
      ['/qseow-proxy-session/', 'qseow-proxy-session'],
      ['/qseow-proxy-connection/', 'qseow-proxy-connection'],
    ]);
    expect([...LOG_SOURCE_BY_PREFIX]).toEqual([
      ['/qseow-engine/', 'qseow-engine'],
      ['/qseow-proxy/', 'qseow-proxy'],
      ['/qseow-repository/', 'qseow-repository'],
      ['/qseow-scheduler/', 'qseow-scheduler'],
      ['/qseow-qix-perf/', 'qseow-qix-perf'],
    ]);
  });

  it('userFull', () => {
    expect(userFull('LAB', 'goran')).toBe('LAB\\goran');
    expect(userFull('', 'goran')).toBe('');
    expect(userFull('LAB', '')).toBe('');
  });

  it('failure results carry a sanitised 512-code-point preview; internal errors are malformed', () => {
    expect(failure('malformed', 'd', `a\nb${'\u{1F600}'.repeat(600)}`)).toEqual({
      ok: false,
      reason: 'malformed',
      detail: 'd',
      preview: `ab${'\u{1F600}'.repeat(510)}`,
    });
    expect(internalError(new Error('bad\nthing'), 'x')).toEqual({
      ok: false,
      reason: 'malformed',
      detail: 'internal parser error: badthing',
      preview: 'x',
    });
    expect(internalError('str', 'x').detail).toBe('internal parser error: str');
  });
});

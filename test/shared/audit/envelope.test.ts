/** The per-request helpers made cheap for issue 14 (tooDeep without strings, cached version verdicts) keep their answers. */
import { describe, expect, it } from 'vitest';
import { MAX_NESTING_DEPTH, tooDeep } from '../../../shared/audit/envelope.js';
import { evaluateClientVersion } from '../../../shared/audit/versions.js';

/** `depth` levels of nesting under `key`: [[…[1]…]]. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : [nested(depth - 1)]);

describe('tooDeep', () => {
  it('accepts exactly the limit and names the first value beyond it', () => {
    expect(tooDeep({ a: nested(MAX_NESTING_DEPTH - 1) }, MAX_NESTING_DEPTH)).toBeNull();
    expect(tooDeep({ a: nested(MAX_NESTING_DEPTH) }, MAX_NESTING_DEPTH)).toBe(`/a${'/0'.repeat(MAX_NESTING_DEPTH - 1)}`);
  });
  it('escapes ~ and / in the pointer (RFC 6901) and looks past shallow siblings', () => {
    expect(tooDeep({ flat: 1, list: [1, 'x', null, {}], 'a/b': { '~k': [[{}]] } }, 4)).toBe('/a~1b/~0k/0/0');
  });
  it('never overflows the stack, however deep the body', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(tooDeep(deep, MAX_NESTING_DEPTH)).toBe('/0'.repeat(MAX_NESTING_DEPTH));
  });
});

describe('evaluateClientVersion answers the same from its cache', () => {
  it('for a compatible, an incompatible and an invalid version, asked twice, from header or envelope', () => {
    for (let round = 0; round < 2; round++) {
      expect(evaluateClientVersion('0.3.2', undefined, '15.1.0')).toMatchObject({ clientVersion: '0.3.2', from: 'header', compatible: true });
      expect(evaluateClientVersion(undefined, '0.3.2', '15.1.0')).toMatchObject({ clientVersion: '0.3.2', from: 'envelope', compatible: true });
      // The same client version against another service version is its own verdict, not the cached one.
      expect(evaluateClientVersion('0.3.2', undefined, '16.0.0')).toMatchObject({ compatible: false, reason: expect.stringContaining('is not compatible with service 16.0.0') });
      expect(evaluateClientVersion('0.4.0', undefined, '15.1.0')).toMatchObject({ compatible: false, reason: expect.stringContaining('is not compatible with service 15.1.0') });
      expect(evaluateClientVersion('banana', undefined, '15.1.0')).toMatchObject({ compatible: false, reason: 'audit client version "banana" is not a semantic version' });
      expect(evaluateClientVersion(undefined, undefined, '15.1.0')).toEqual({ clientVersion: null, from: 'none', compatible: true });
    }
  });
});

/** The per-request helpers made cheap for issue 14 (tooDeep without strings, cached version verdicts) keep their answers. */
import { describe, expect, it } from 'vitest';
import {
  isRfc3339,
  MAX_NESTING_DEPTH,
  passedEnvelopeCheck,
  tooDeep,
  validateEnvelope,
} from '../../../shared/audit/envelope.js';
import { evaluateClientVersion } from '../../../shared/audit/versions.js';

/** `depth` levels of nesting under `key`: [[…[1]…]]. */
const nested = (depth: number): unknown => (depth === 0 ? 1 : [nested(depth - 1)]);

describe('isRfc3339: a date-time with a zone, every field in its range', () => {
  it.each([
    ['2026-11-22T10:15:22Z', true],
    ['2026-11-22t10:15:22.123456789z', true],
    ['2026-11-22T10:15:22+23:59', true],
    ['2026-11-22T10:15:22-05:30', true],
    ['2026-12-31T23:59:60Z', true], // a leap second
    ['2024-02-29T00:00:00Z', true],
    ['2000-02-29T00:00:00Z', true],
    ['2100-02-29T00:00:00Z', false],
    ['2026-02-29T00:00:00Z', false],
    ['2026-01-31T00:00:00Z', true],
    ['2026-04-31T00:00:00Z', false],
    ['2026-06-31T00:00:00Z', false],
    ['2026-09-31T00:00:00Z', false],
    ['2026-11-31T00:00:00Z', false],
    ['2026-11-30T00:00:00Z', true],
    ['2026-00-10T00:00:00Z', false],
    ['2026-13-10T00:00:00Z', false],
    ['2026-11-00T00:00:00Z', false],
    ['2026-11-22T24:00:00Z', false],
    ['2026-11-22T10:60:00Z', false],
    ['2026-11-22T10:15:61Z', false],
    ['2026-11-22T10:15:22+24:00', false],
    ['2026-11-22T10:15:22+05:60', false],
    ['2026-11-22T10:15:22', false],
    ['2026-11-22 10:15:22Z', false],
  ])('%s → %s', (text, valid) => {
    expect(isRfc3339(text)).toBe(valid);
  });
});

describe('passedEnvelopeCheck: the very objects validateEnvelope passed', () => {
  it('is true for an envelope that passed, false for one that failed, a copy of one that passed, or a non-object', () => {
    const body = {
      schemaVersion: 1,
      eventId: '7d8f3c4e-1b2a-4c5d-9e8f-0a1b2c3d4e5f',
      timestamp: '2026-11-22T10:15:22.123Z',
      type: 'event.custom',
      source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: '0.3.2' },
      payload: {},
    };
    const checked = validateEnvelope(body);
    expect(checked.ok).toBe(true);
    expect(passedEnvelopeCheck(body)).toBe(true);
    expect(passedEnvelopeCheck({ ...body })).toBe(false);
    const bad = { ...body, timestamp: 'soon' };
    expect(validateEnvelope(bad).ok).toBe(false);
    expect(passedEnvelopeCheck(bad)).toBe(false);
    expect(passedEnvelopeCheck(null)).toBe(false);
    expect(passedEnvelopeCheck('text')).toBe(false);
  });
});

describe('tooDeep', () => {
  it('accepts exactly the limit and names the first value beyond it', () => {
    expect(tooDeep({ a: nested(MAX_NESTING_DEPTH - 1) }, MAX_NESTING_DEPTH)).toBeNull();
    expect(tooDeep({ a: nested(MAX_NESTING_DEPTH) }, MAX_NESTING_DEPTH)).toBe(
      `/a${'/0'.repeat(MAX_NESTING_DEPTH - 1)}`,
    );
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
      expect(evaluateClientVersion('0.3.2', undefined, '15.1.0')).toMatchObject({
        clientVersion: '0.3.2',
        from: 'header',
        compatible: true,
      });
      expect(evaluateClientVersion(undefined, '0.3.2', '15.1.0')).toMatchObject({
        clientVersion: '0.3.2',
        from: 'envelope',
        compatible: true,
      });
      // The same client version against another service version is its own verdict, not the cached one.
      expect(evaluateClientVersion('0.3.2', undefined, '16.0.0')).toMatchObject({
        compatible: false,
        reason: expect.stringContaining('is not compatible with service 16.0.0'),
      });
      expect(evaluateClientVersion('0.4.0', undefined, '15.1.0')).toMatchObject({
        compatible: false,
        reason: expect.stringContaining('is not compatible with service 15.1.0'),
      });
      expect(evaluateClientVersion('banana', undefined, '15.1.0')).toMatchObject({
        compatible: false,
        reason: 'audit client version "banana" is not a semantic version',
      });
      expect(evaluateClientVersion(undefined, undefined, '15.1.0')).toEqual({
        clientVersion: null,
        from: 'none',
        compatible: true,
      });
    }
  });
});

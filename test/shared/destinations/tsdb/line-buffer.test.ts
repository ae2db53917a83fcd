import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineBuffer } from '../../../../shared/destinations/tsdb/line-buffer.js';
import {
  bool,
  type FieldValue,
  float,
  int,
  json,
  LineProtocolError,
  type Point,
  str,
  toLine,
} from '../../../../shared/destinations/tsdb/line-protocol.js';

const T = 1710233130000000000n;

/** Text with what string fields (and `json` fields' texts) must survive: quotes, backslashes, newlines, control characters, lone and paired surrogates, any unicode. */
const text = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({
    unit: fc.constantFrom(
      '"',
      '\\',
      'a',
      'é',
      '\n',
      '\r',
      '\t',
      '\u0000',
      '\ud800',
      '\udfff',
      '\u{1F600}',
      '\u007f',
      '\uffff',
    ),
  }),
  fc.json(),
  fc.string({ unit: 'grapheme' }),
);
const field: fc.Arbitrary<FieldValue> = fc.oneof(
  text.map(str),
  text.map(str),
  fc.tuple(fc.jsonValue(), fc.nat(40)).map(([v, max]) => json(v, max)),
  fc.integer().map(int),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(float),
  fc.boolean().map(bool),
);
const point: fc.Arbitrary<Point> = fc
  .record({
    measurement: fc.constantFrom('audit', 'm x', 'a,b'),
    tags: fc.dictionary(fc.constantFrom('t', 'app id', 'k'), fc.string({ unit: 'grapheme-ascii', minLength: 1 }), {
      minKeys: 1,
    }),
    fields: fc.dictionary(fc.constantFrom('payload', 'f', 'g', 'h i'), field, { minKeys: 1 }),
    timeNs: fc.constant(T),
  })
  .filter(writable);

/** Points line protocol can carry (a tag value may end in a backslash, say): the refused ones are tested below. */
function writable(p: Point): boolean {
  try {
    toLine(p);
    return true;
  } catch (err) {
    if (err instanceof LineProtocolError) return false;
    throw err;
  }
}

/** The old path's bytes: the line as a string (`toLine`, strings by `quoted`), encoded as UTF-8. */
const reference = (points: readonly Point[]): Buffer => Buffer.from(points.map(toLine).join('\n'), 'utf8');

describe('LineBuffer: the request bytes', () => {
  it('equal the UTF-8 of toLine, byte for byte, for random points (string fields escaped in the buffer)', () => {
    fc.assert(
      fc.property(fc.array(point, { minLength: 1, maxLength: 8 }), (points) => {
        const lines = new LineBuffer();
        const spans = points.map((p) => lines.add(p));
        expect(Buffer.from(lines.chunk(spans).body)).toEqual(reference(points));
        expect(spans.map((s) => lines.text(s))).toEqual(
          points.map((p) => Buffer.from(toLine(p), 'utf8').toString('utf8')),
        );
      }),
      { numRuns: 400 },
    );
  });

  it('escapes a string field full of quotes and backslashes, and one past the first buffer (it grows)', () => {
    const payload = JSON.stringify({ a: 'say "hi" \\ C:\\dir\\', b: '\u{1F600}é' });
    const big = `${'"\\'.repeat(40_000)}ü\ud800`;
    const points: Point[] = [
      { measurement: 'audit', tags: { t: 'a' }, fields: { payload: str(payload) }, timeNs: T },
      { measurement: 'audit', tags: { t: 'b' }, fields: { big: str(big), n: int(1) }, timeNs: T },
    ];
    const lines = new LineBuffer();
    const spans = points.map((p) => lines.add(p));
    expect(lines.text(spans[0] ?? { start: 0, end: 0 })).toBe(
      `audit,t=a payload="${payload.replace(/[\\"]/g, '\\$&')}" 1710233130000000000`,
    );
    expect(Buffer.from(lines.chunk(spans).body)).toEqual(reference(points));
  });

  it('rolls back a refused point after its string field was written: the next line follows the last good one', () => {
    const good: Point = { measurement: 'm', tags: { t: 'a' }, fields: { s: str('"x"') }, timeNs: T };
    const refused: Point = {
      measurement: 'm',
      tags: { t: 'a' },
      fields: { s: str('"long" '.repeat(100)) },
      timeNs: 2n ** 64n,
    };
    const lines = new LineBuffer();
    const first = lines.add(good);
    expect(() => lines.add(refused)).toThrow(LineProtocolError);
    const second = lines.add(good);
    expect(Buffer.from(lines.chunk([first, second]).body).toString('utf8')).toBe(`${toLine(good)}\n${toLine(good)}`);
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  float,
  int,
  intAtLeast,
  timestampForm,
  ts,
  tsToInstantMs,
  uuid,
} from '../../../../edge-agent/sources/common/validators.js';

describe('uuid', () => {
  it('accepts any version/variant and stores it lower-case', () => {
    expect(uuid('e7af59a0-c243-480d-9571-08727551a66f')).toBe('e7af59a0-c243-480d-9571-08727551a66f');
    expect(uuid('E7AF59A0-C243-480D-9571-08727551A66F')).toBe('e7af59a0-c243-480d-9571-08727551a66f');
    expect(uuid('00000000-0000-0000-0000-000000000000')).toBe('00000000-0000-0000-0000-000000000000');
    expect(uuid('ffffffff-ffff-ffff-ffff-ffffffffffff')).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
  });

  it.each([
    '',
    '0',
    'e7af59a0c243480d957108727551a66f',
    '{e7af59a0-c243-480d-9571-08727551a66f}',
    ' e7af59a0-c243-480d-9571-08727551a66f',
    'e7af59a0-c243-480d-9571-08727551a66f ',
    'e7af59a0-c243-480d-9571-08727551a66f\n',
    'e7af59a0-c243-480d-9571-08727551a66',
    'e7af59a0-c243-480d-9571-08727551a66f0',
    'g7af59a0-c243-480d-9571-08727551a66f',
    'e7af59a0_c243-480d-9571-08727551a66f',
    'e7af59a0-c243-480d-9571-08727551a66ｆ',
  ])('rejects %j', (text) => {
    expect(uuid(text)).toBe('');
  });

  it('takes mixed case, and rejects the characters next to the hex ranges and a dash out of place', () => {
    expect(uuid('e7aF59A0-c243-480D-9571-08727551a66F')).toBe('e7af59a0-c243-480d-9571-08727551a66f');
    for (const c of ['/', ':', '@', 'G', '`', 'g', '-'])
      for (const at of [0, 7, 9, 35])
        expect(
          uuid(`${'a'.repeat(at)}${c}${'a'.repeat(35 - at)}`.replace(/^(.{8}).(.{4}).(.{4}).(.{4})./, '$1-$2-$3-$4-')),
        ).toBe('');
    expect(uuid('e7af59a0-c243-480d-9571-08727551a66f'.replace(/-/g, 'a'))).toBe('');
    expect(uuid('e7af59a0c-243-480d-9571-08727551a66f')).toBe('');
  });

  it('agrees with the §0.2 regex on any 36 characters of hex digits, dashes and their neighbours', () => {
    const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
    const chars = fc.constantFrom(...'0123456789abcdefABCDEF-/:@G`gz\u00e9\u0000'.split(''));
    const shaped = fc
      .tuple(...[8, 4, 4, 4, 12].map((n) => fc.array(chars, { minLength: n, maxLength: n })))
      .map((parts) => parts.map((p) => p.join('')).join('-'));
    fc.assert(
      fc.property(
        fc.oneof(
          shaped,
          fc.array(chars, { minLength: 36, maxLength: 36 }).map((a) => a.join('')),
        ),
        (text) => {
          expect(uuid(text)).toBe(UUID.test(text) ? text.toLowerCase() : '');
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('timestamps read in any order', () => {
  it('give each text its own answer, however the reads of several texts interleave', () => {
    const pool: [string, number | null][] = [
      ['20211109T153726.028+0200', Date.parse('2021-11-09T13:37:26.028Z')],
      ['2021-11-09 15:37:26,028', null],
      ['2021-11-09T15:37:26.028-05:00', Date.parse('2021-11-09T20:37:26.028Z')],
      ['2021-11-09T15:37:26.028', null],
      ['', null],
    ];
    fc.assert(
      fc.property(fc.array(fc.nat(pool.length - 1), { minLength: 1, maxLength: 12 }), (picks) => {
        for (const i of picks) {
          const [text, instant] = pool[i] ?? ['', null];
          expect(tsToInstantMs(text)).toBe(instant);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('ts — the three platform timestamp forms', () => {
  it.each([
    ['20211109T153726.028+0200', 'compact', '2021-11-09T13:37:26.028Z'],
    ['20211109T153726.028-0500', 'compact', '2021-11-09T20:37:26.028Z'],
    ['20211109T153726.028+05:30', 'compact', '2021-11-09T10:07:26.028Z'],
    ['20211109T153726.028Z', 'compact', '2021-11-09T15:37:26.028Z'],
    ['2021-11-09T15:37:26.028+0200', 'extended', '2021-11-09T13:37:26.028Z'],
    ['2021-11-09T15:37:26.028+02:00', 'extended', '2021-11-09T13:37:26.028Z'],
    ['2021-11-09T15:37:26.028-05:00', 'extended', '2021-11-09T20:37:26.028Z'],
    ['2021-11-09T15:37:26.028-0930', 'extended', '2021-11-10T01:07:26.028Z'],
    ['2021-11-09T15:37:26.028Z', 'extended', '2021-11-09T15:37:26.028Z'],
    ['2021-11-09T23:59:59.999-23:59', 'extended', '2021-11-10T23:58:59.999Z'],
    ['2021-11-09T00:00:00.000+23:59', 'extended', '2021-11-08T00:01:00.000Z'],
    ['2021-11-09T15:37:26.028+0000', 'extended', '2021-11-09T15:37:26.028Z'],
    ['2021-11-09T15:37:26.028-00:00', 'extended', '2021-11-09T15:37:26.028Z'],
    ['20240229T000000.000+0100', 'compact', '2024-02-28T23:00:00.000Z'],
    ['2000-02-29T12:00:00.000Z', 'extended', '2000-02-29T12:00:00.000Z'],
    ['0001-01-01T00:00:00.000+0100', 'extended', '0000-12-31T23:00:00.000Z'],
    ['9999-12-31T23:59:59.999-1400', 'extended', '+010000-01-01T13:59:59.999Z'],
  ])('%s is a valid %s timestamp at %s', (text, form, instant) => {
    expect(ts(text)).toBe(text);
    expect(timestampForm(text)).toBe(form);
    expect(tsToInstantMs(text)).toBe(Date.parse(instant));
  });

  it.each(['2021-11-09 15:37:26,028', '2024-02-29 00:00:00,000', '0001-01-01 00:00:00,000', '9999-12-31 23:59:59,999'])(
    'local form %s is valid but never an instant',
    (text) => {
      expect(ts(text)).toBe(text);
      expect(timestampForm(text)).toBe('local');
      expect(tsToInstantMs(text)).toBeNull();
    },
  );

  it.each([
    // not a real calendar date
    '20230229T120000.000+0100',
    '2023-02-29T12:00:00.000+01:00',
    '2023-02-29 12:00:00,000',
    '1900-02-29T12:00:00.000Z',
    '2100-02-29 12:00:00,000',
    '2024-02-30T12:00:00.000Z',
    '2024-04-31T12:00:00.000Z',
    '2024-06-31 00:00:00,000',
    '2024-09-31T00:00:00.000-0500',
    '2024-11-31T00:00:00.000+0100',
    '2024-13-01T00:00:00.000Z',
    '2024-00-10T00:00:00.000Z',
    '2024-01-00T00:00:00.000Z',
    '2024-01-32T00:00:00.000Z',
    '0000-01-01T00:00:00.000Z',
    // not a real time
    '2024-01-01T24:00:00.000Z',
    '2024-01-01T23:60:00.000Z',
    '2024-01-01T23:59:60.000Z',
    '20240101T240000.000+0100',
    '2024-01-01 24:00:00,000',
    // offsets
    '2024-01-01T10:00:00.000+2400',
    '2024-01-01T10:00:00.000+05:60',
    '2024-01-01T10:00:00.000+5:30',
    '2024-01-01T10:00:00.000+053',
    '2024-01-01T10:00:00.000+05:3',
    '2024-01-01T10:00:00.000z',
    '2024-01-01T10:00:00.000',
    '20240101T100000.000',
    '2024-01-01T10:00:00.000 +0100',
    // shape
    '',
    '2024-01-01',
    '2024-01-01T10:00:00+0100',
    '2024-01-01T10:00:00.00+0100',
    '2024-01-01T10:00:00.0000+0100',
    '2024-01-01T10:00:00,000+0100',
    '2024-01-01 10:00:00.000',
    '2024-01-01 10:00:00,000+0100',
    '2024-01-01 10:00:00,000 ',
    ' 2024-01-01 10:00:00,000',
    '2024-01-01T10:00:00.000Z\n',
    '20240101 100000,000',
    '2024-01-01t10:00:00.000Z',
    '２０２４-01-01 10:00:00,000',
    '+2024-01-01T10:00:00.000Z',
    '12024-01-01T10:00:00.000Z',
    '2024-0101T10:00:00.000Z',
    '2024-01-01T1000:00.000Z',
  ])('rejects %j', (text) => {
    expect(ts(text)).toBe('');
    expect(timestampForm(text)).toBeNull();
    expect(tsToInstantMs(text)).toBeNull();
  });

  it('round-trips random instants and offsets in the three forms', () => {
    const pad = (v: number, w: number): string => String(v).padStart(w, '0');
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00.000Z'),
          max: new Date('9999-12-31T23:59:59.999Z'),
          noInvalidDate: true,
        }),
        fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
        fc.boolean(),
        (date, offset, colon) => {
          // Wall-clock fields at `offset` minutes east of UTC.
          const wall = new Date(date.getTime() + offset * 60_000);
          const y = wall.getUTCFullYear();
          fc.pre(y >= 1 && y <= 9999);
          const [Y, M, D, h, m, sec, ms] = [
            pad(y, 4),
            pad(wall.getUTCMonth() + 1, 2),
            pad(wall.getUTCDate(), 2),
            pad(wall.getUTCHours(), 2),
            pad(wall.getUTCMinutes(), 2),
            pad(wall.getUTCSeconds(), 2),
            pad(wall.getUTCMilliseconds(), 3),
          ];
          const abs = Math.abs(offset);
          const off = `${offset < 0 ? '-' : '+'}${pad(Math.floor(abs / 60), 2)}${colon ? ':' : ''}${pad(abs % 60, 2)}`;
          const compact = `${Y}${M}${D}T${h}${m}${sec}.${ms}${off}`;
          const extended = `${Y}-${M}-${D}T${h}:${m}:${sec}.${ms}${off}`;
          const local = `${Y}-${M}-${D} ${h}:${m}:${sec},${ms}`;
          expect(ts(compact)).toBe(compact);
          expect(ts(extended)).toBe(extended);
          expect(ts(local)).toBe(local);
          expect(tsToInstantMs(compact)).toBe(date.getTime());
          expect(tsToInstantMs(extended)).toBe(date.getTime());
          expect(tsToInstantMs(local)).toBeNull();
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('accepts exactly the real calendar days of every month', () => {
    for (const year of [1, 4, 100, 400, 1900, 2000, 2023, 2024, 2100, 9999]) {
      for (let month = 1; month <= 12; month++) {
        const last = new Date(Date.UTC(2000, month, 0)).getUTCDate(); // days in `month` of a leap year
        const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
        const days = month === 2 && !leap ? 28 : last;
        for (let day = 28; day <= 32; day++) {
          const text = `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')} 12:00:00,000`;
          expect(ts(text) === text, text).toBe(day <= days);
        }
      }
    }
  });
});

describe('ts — the reader agrees with the spec regexes of §0.2', () => {
  // §0.2's regexes verbatim: which form a text has. The reader works by position; these are the yardstick.
  const FORMS: [string, RegExp][] = [
    ['compact', /^\d{8}T\d{6}\.\d{3}(Z|[+-]\d{2}:?\d{2})$/],
    ['extended', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|[+-]\d{2}:?\d{2})$/],
    ['local', /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}$/],
  ];
  const shapeOf = (text: string) => FORMS.find(([, re]) => re.test(text))?.[0] ?? null;
  const SEEDS = [
    '20211109T153726.028+0200',
    '2021-11-09T15:37:26.028+02:00',
    '2021-11-09 15:37:26,028',
    '20240229T000000.000Z',
    '2024-02-29T23:59:59.999-0530',
  ];
  const CHARS = '0123456789T-:., Z+x\u0660\u0000';

  it('takes a text of the form of a regex exactly when it matches one (and the date and time are real), on mutated timestamps', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...SEEDS),
        fc.array(fc.tuple(fc.nat(30), fc.constantFrom(...CHARS), fc.constantFrom('set', 'insert', 'delete')), {
          maxLength: 3,
        }),
        (seed, edits) => {
          let text = seed;
          for (const [at, ch, op] of edits) {
            const i = at % (text.length + 1);
            text =
              op === 'set'
                ? text.slice(0, i) + ch + text.slice(i + 1)
                : op === 'insert'
                  ? text.slice(0, i) + ch + text.slice(i)
                  : text.slice(0, i) + text.slice(i + 1);
          }
          const form = timestampForm(text);
          const shape = shapeOf(text);
          // A valid text has the shape of its form; a text of no shape is never valid.
          if (form !== null) expect(shape).toBe(form);
          if (shape === null) expect(form).toBeNull();
          // A text of a shape with a real date, time and offset is valid.
          if (shape !== null && form === null) {
            const n = (text.match(/\d+/g) ?? []).join('');
            const [y, mo, d, h, mi, sec] = [
              n.slice(0, 4),
              n.slice(4, 6),
              n.slice(6, 8),
              n.slice(8, 10),
              n.slice(10, 12),
              n.slice(12, 14),
            ].map(Number);
            const offset = shape === 'local' ? [] : (n.slice(17).match(/\d{2}/g)?.map(Number) ?? []);
            const real =
              (y ?? 0) >= 1 &&
              (mo ?? 0) >= 1 &&
              (mo ?? 0) <= 12 &&
              (d ?? 0) >= 1 &&
              (d ?? 0) <= new Date(Date.UTC(2000, mo ?? 1, 0)).getUTCDate() + (mo === 2 ? 1 : 0) &&
              (h ?? 0) <= 23 &&
              (mi ?? 0) <= 59 &&
              (sec ?? 0) <= 59 &&
              (offset[0] ?? 0) <= 23 &&
              (offset[1] ?? 0) <= 59;
            const leapDayOfNonLeapYear =
              mo === 2 && d === 29 && !(((y ?? 0) % 4 === 0 && (y ?? 0) % 100 !== 0) || (y ?? 0) % 400 === 0);
            expect(real && !leapDayOfNonLeapYear).toBe(false);
          }
        },
      ),
      { numRuns: 20_000, seed: 14 },
    );
  });
});

describe('int', () => {
  it.each([
    ['0', 0],
    ['7', 7],
    ['-1', -1],
    ['-0', 0],
    ['007', 7],
    ['-007', -7],
    ['00000000000000000000009007199254740992', 2 ** 53],
    ['9007199254740991', Number.MAX_SAFE_INTEGER],
    ['9007199254740992', 2 ** 53],
    ['-9007199254740992', -(2 ** 53)],
    ['5242880', 5242880],
  ])('%j → %d', (text, value) => {
    expect(Object.is(int(text), value)).toBe(true);
  });

  it.each([
    '',
    '-',
    '+1',
    ' 1',
    '1 ',
    '1.0',
    '1e3',
    '0x10',
    '１',
    '9007199254740993',
    '-9007199254740993',
    '10000000000000000',
    '1'.repeat(400),
    'NaN',
    'Infinity',
    '--1',
  ])('rejects %j', (text) => {
    expect(int(text)).toBeNull();
  });

  it('agrees with BigInt inside and outside ±2^53', () => {
    const limit = 2n ** 53n;
    fc.assert(
      fc.property(fc.bigInt({ min: -(2n ** 60n), max: 2n ** 60n }), (b) => {
        expect(int(b.toString())).toBe(b >= -limit && b <= limit ? Number(b) : null);
      }),
      { numRuns: 2000 },
    );
  });

  it('intAtLeast applies the lower bound', () => {
    expect(intAtLeast('1', 1)).toBe(1);
    expect(intAtLeast('0', 1)).toBeNull();
    expect(intAtLeast('0', 0)).toBe(0);
    expect(intAtLeast('-1', 0)).toBeNull();
    expect(intAtLeast('x', 0)).toBeNull();
  });
});

describe('float', () => {
  it.each([
    ['0', 0],
    ['412.5', 412.5],
    ['-1.25', -1.25],
    ['12.0', 12],
    ['0.0', 0],
    ['-0.0', 0],
    ['007.50', 7.5],
    ['2380.3', 2380.3],
  ])('%j → %d', (text, value) => {
    expect(Object.is(float(text), value)).toBe(true);
  });

  it.each(['', '.5', '5.', '1e5', '1E5', '+1', ' 1', '1,5', 'NaN', 'Infinity', '-', '1.2.3', '0x1', '9'.repeat(400)])(
    'rejects %j',
    (text) => {
      expect(float(text)).toBeNull();
    },
  );
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LOG_LAYOUTS, USER_EVENT_LAYOUT } from '../../../../../edge-agent/sources/udp/parse/layouts.js';
import { parseLogEvent } from '../../../../../edge-agent/sources/udp/parse/log-event.js';
import {
  exceptionCheck,
  exceptionFieldCheck,
  MAX_CANDIDATES,
  nextComposition,
  partsOf,
  SOURCE_CHECKS,
  schedulerCheck,
  splitDatagram,
  splitFields,
  userTripleCheck,
} from '../../../../../edge-agent/sources/udp/parse/split.js';

describe('field-count / free-text tables (§0.4)', () => {
  it('match the spec', () => {
    expect({ n: USER_EVENT_LAYOUT.n, freeText: USER_EVENT_LAYOUT.freeText }).toEqual({ n: 8, freeText: [7] });
    const table = Object.fromEntries(
      Object.entries(LOG_LAYOUTS).map(([source, l]) => [source, { prefix: l.prefix, n: l.n, freeText: l.freeText }]),
    );
    expect(table).toEqual({
      'qseow-engine': { prefix: '/qseow-engine/', n: 19, freeText: [8] },
      'qseow-proxy': { prefix: '/qseow-proxy/', n: 16, freeText: [8, 9] },
      'qseow-repository': { prefix: '/qseow-repository/', n: 16, freeText: [8, 9] },
      'qseow-scheduler': { prefix: '/qseow-scheduler/', n: 18, freeText: [8, 9, 13, 14] },
      'qseow-qix-perf': { prefix: '/qseow-qix-perf/', n: 26, freeText: [] },
    });
    expect(SOURCE_CHECKS).toEqual({
      'qseow-engine': undefined,
      'qseow-proxy': exceptionFieldCheck,
      'qseow-repository': exceptionFieldCheck,
      'qseow-scheduler': schedulerCheck,
      'qseow-qix-perf': undefined,
    });
  });
});

describe('splitFields — §0.4 steps 1–4', () => {
  it('k < 0 is malformed', () => {
    expect(splitFields('a;b', { n: 3, freeText: [2] })).toBeNull();
    expect(splitFields('', { n: 2, freeText: [1] })).toBeNull();
    expect(splitDatagram('a;b', { n: 3, freeText: [2] })).toEqual({ ok: false, error: 'too_few', parts: 2 });
  });

  it('k = 0 takes the parts as they are (no check is run)', () => {
    expect(splitFields('a;;c', { n: 3, freeText: [1], check: () => false })).toEqual(['a', '', 'c']);
    expect(splitFields('', { n: 1, freeText: [] })).toEqual(['']);
  });

  it('k > 0 without a free-text field is malformed', () => {
    expect(splitFields('a;b;c', { n: 2, freeText: [] })).toBeNull();
    expect(splitDatagram('a;b;c', { n: 2, freeText: [] })).toEqual({ ok: false, error: 'surplus', parts: 3 });
  });

  it('one free-text field takes all the surplus; fields around it never move', () => {
    expect(splitFields('a;b;m1;m2;m3;c;d', { n: 5, freeText: [2] })).toEqual(['a', 'b', 'm1;m2;m3', 'c', 'd']);
    expect(splitFields('a;b;m1;;', { n: 3, freeText: [2] })).toEqual(['a', 'b', 'm1;;']);
    expect(splitFields(';;;', { n: 1, freeText: [0] })).toEqual([';;;']);
  });

  it('without a check, the first candidate (k,0,…) wins', () => {
    expect(splitFields('p;m;x;e;y;z', { n: 4, freeText: [1, 2] })).toEqual(['p', 'm;x;e', 'y', 'z']);
  });

  it('tries candidates in descending lexicographic order of (s_1, s_2, …)', () => {
    const seen: string[][] = [];
    splitFields('p;A;B;C;D;E;z', {
      n: 5,
      freeText: [1, 2, 3],
      check: (f) => {
        seen.push(f.slice(1, 4));
        return false;
      },
    });
    // k = 2 over three free-text fields: (2,0,0) (1,1,0) (1,0,1) (0,2,0) (0,1,1) (0,0,2)
    expect(seen).toEqual([
      ['A;B;C', 'D', 'E'],
      ['A;B', 'C;D', 'E'],
      ['A;B', 'C', 'D;E'],
      ['A', 'B;C;D', 'E'],
      ['A', 'B;C', 'D;E'],
      ['A', 'B', 'C;D;E'],
    ]);
  });

  it('the first candidate passing the check wins; none passing → the first candidate', () => {
    // 5 parts, N = 4, k = 1: candidates (1,0) = [p, a;b, c, z] and (0,1) = [p, a, b;c, z].
    const spec = { n: 4, freeText: [1, 2] };
    expect(splitFields('p;a;b;c;z', { ...spec, check: (f) => f[2] === 'b;c' })).toEqual(['p', 'a', 'b;c', 'z']);
    expect(splitFields('p;a;b;c;z', { ...spec, check: (f) => f[1] === 'a;b' })).toEqual(['p', 'a;b', 'c', 'z']);
    expect(splitFields('p;a;b;c;z', { ...spec, check: () => false })).toEqual(['p', 'a;b', 'c', 'z']);
  });

  it('a check that throws counts as failing', () => {
    expect(
      splitFields('p;a;b;z', {
        n: 3,
        freeText: [1],
        check: () => {
          throw new Error('boom');
        },
      }),
    ).toEqual(['p', 'a;b', 'z']);
  });

  it(`stops after ${MAX_CANDIDATES} candidates and falls back to the first`, () => {
    const k = 20_000;
    const text = ['p', ...Array.from({ length: k + 2 }, () => 'x'), 'z'].join(';');
    const spec = { n: 4, freeText: [1, 2] };
    // Candidate number i (1-based) is (k − i + 1, i − 1): field 2 holds i − 1 surplus `;` (`x;x;…`).
    const surplusIn2 = (f: string[]): number => ((f[2] ?? '').length - 1) / 2;
    let calls = 0;
    const last = splitFields(text, {
      ...spec,
      check: (f) => {
        calls++;
        return surplusIn2(f) === MAX_CANDIDATES - 1;
      },
    });
    expect(calls).toBe(MAX_CANDIDATES);
    expect(last).toEqual([
      'p',
      Array(k - MAX_CANDIDATES + 2)
        .fill('x')
        .join(';'),
      Array(MAX_CANDIDATES).fill('x').join(';'),
      'z',
    ]);
    calls = 0;
    const beyond = splitFields(text, {
      ...spec,
      check: (f) => {
        calls++;
        return surplusIn2(f) === MAX_CANDIDATES;
      },
    });
    expect(calls).toBe(MAX_CANDIDATES);
    expect(beyond).toEqual([
      'p',
      Array(k + 1)
        .fill('x')
        .join(';'),
      'x',
      'z',
    ]);
  });

  it('nextComposition enumerates in descending lexicographic order', () => {
    const c = [3, 0, 0];
    const all = [c.join('')];
    while (nextComposition(c)) all.push(c.join(''));
    expect(all).toEqual(['300', '210', '201', '120', '111', '102', '030', '021', '012', '003']);
    expect(nextComposition([5])).toBe(false);
    expect(nextComposition([])).toBe(false);
  });

  it('equals a naive reference implementation', () => {
    /** All compositions of k into m parts, descending lexicographic. */
    const compositions = (k: number, m: number): number[][] => {
      if (m === 1) return [[k]];
      const out: number[][] = [];
      for (let first = k; first >= 0; first--)
        for (const rest of compositions(k - first, m - 1)) out.push([first, ...rest]);
      return out;
    };
    const reference = (text: string, n: number, free: number[], check: (f: string[]) => boolean): string[] | null => {
      const parts = text.split(';');
      const k = parts.length - n;
      if (k < 0) return null;
      if (k === 0) return parts;
      if (free.length === 0) return null;
      const candidates = compositions(k, free.length)
        .slice(0, MAX_CANDIDATES)
        .map((extra) => {
          const fields: string[] = [];
          let p = 0;
          for (let i = 0; i < n; i++) {
            const j = free.indexOf(i);
            const take = 1 + (j === -1 ? 0 : (extra[j] ?? 0));
            fields.push(parts.slice(p, p + take).join(';'));
            p += take;
          }
          return fields;
        });
      return candidates.find(check) ?? candidates[0] ?? null;
    };
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('', 'a', 'b', 'Error', 'x.y', '\\'), { maxLength: 14 }),
        fc.integer({ min: 1, max: 8 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 7 }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 6 }),
        (parts, n, freeRaw, salt) => {
          const text = parts.join(';');
          const free = freeRaw.filter((i) => i < n).sort((a, b) => a - b);
          // A deterministic, arbitrary check.
          const check = (f: string[]): boolean => (f.join('|').length + salt) % 3 === 0;
          const got = splitFields(text, { n, freeText: free, check });
          expect(got).toEqual(reference(text, n, free, check));
          if (got !== null) {
            expect(got).toHaveLength(n);
            expect(got.join(';')).toBe(text);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe('exception check (§0.4 step 5)', () => {
  it.each([
    '',
    'System.Exception: x',
    'System.Net.WebException: Unable to connect',
    'System.Data.DataException: Host=db1;Port=4432 unreachable',
    'System.AggregateException',
    'MyError',
    '_Error',
    'Foo.BarError.Baz',
    'Generic`1+InnerException: x',
    'System.ExceptionFoo.IOException',
    'a.Error',
  ])('accepts %j', (text) => {
    expect(exceptionCheck(text)).toBe(true);
  });

  it.each([
    ' ',
    'Exception',
    'Error',
    'Port=4432 unreachable',
    ' account locked',
    ';',
    '1Exception',
    'System.ExceptionFoo',
    'System.Errors',
    'System Exception',
    '.Exception',
    'Ünicode.Exception',
    'x\nException',
  ])('rejects %j', (text) => {
    expect(exceptionCheck(text)).toBe(false);
  });
});

describe('user triple check (§0.4 step 5)', () => {
  it.each([
    ['', '', '', true, '(a) all empty'],
    ['', '', 'LAB\\goran', true, '(b) dir and id empty'],
    ['LAB', 'goran', 'LAB\\goran', true, '(b) halves equal'],
    ['lab', 'GORAN', 'LAB\\goran', true, '(b) case-insensitive'],
    ['LAB', 'anna', 'LAB\\goran', false, '(b) id differs'],
    ['LAB', '', 'LAB\\goran', false, '(b) only dir given'],
    ['', 'goran', 'LAB\\goran', false, '(b) only id given'],
    ['', '', 'LAB\\goran\\x', false, '(b) two backslashes'],
    ['', '', '\\goran', false, '(b) empty half'],
    ['', '', 'LAB\\', false, '(b) empty half'],
    ['', '', 'goran', false, 'user without backslash'],
    ['', '', 'Reload', false, 'a task name in the user field'],
    ['LAB', 'goran', '', true, '(c) dir and id without user'],
    ['LAB\\x', 'goran', '', false, '(c) backslash in dir'],
    ['LAB', 'go\\ran', '', false, '(c) backslash in id'],
    ['LAB', '', '', false, '(c) id empty'],
    ['', 'goran', '', false, '(c) dir empty'],
  ])('dir %j id %j user %j → %s (%s)', (dir, id, user, ok) => {
    expect(userTripleCheck(dir, id, user)).toBe(ok);
  });

  it('scheduler check combines the user triple (10–12) and the exception check (9)', () => {
    const fields = (exception: string, dir: string, id: string, user: string): string[] => {
      const f = Array.from({ length: 18 }, () => '');
      f[9] = exception;
      f[10] = dir;
      f[11] = id;
      f[12] = user;
      return f;
    };
    expect(schedulerCheck(fields('', '', '', 'LAB\\goran'))).toBe(true);
    expect(schedulerCheck(fields('System.Exception', 'LAB', 'goran', ''))).toBe(true);
    expect(schedulerCheck(fields(';', '', '', 'LAB\\goran'))).toBe(false);
    expect(schedulerCheck(fields('', '', 'LAB\\goran', 'Reload'))).toBe(false);
    expect(exceptionFieldCheck(fields('oops', '', '', ''))).toBe(false);
    expect(exceptionFieldCheck([])).toBe(true);
  });
});

describe('adversarial surplus stays cheap', () => {
  it('64 KB scheduler/proxy datagrams with thousands of `;` and long exception-like runs parse fast', () => {
    const head = '/qseow-scheduler/;1;20240312T021504.100+0100;2024-03-12 02:15:04,100;ERROR;H;L;U';
    const run = 'A'.repeat(30_000); // a long run of word characters scanned by the exception check
    const datagrams = [
      `${head};${';'.repeat(60_000)}`,
      `${head};m;${';'.repeat(40)}${run};${';'.repeat(200)}${run}`,
      `${head};m;${Array.from({ length: 300 }, () => 'B'.repeat(200)).join(';')}`,
      `/qseow-proxy/;1;t;t;L;H;S;U;m;${run};${';'.repeat(5000)}${run}`,
      // Worst case found: a 64 KB exception-like run that hundreds of the first 10,000 candidates
      // put in field 9 while their user triple passes (X, Y, X\Y repeating), so each scans it.
      `${head};m;${'A'.repeat(64_000)};${Array.from({ length: 45 }, (_, i) => ['X', 'Y', 'X\\Y'][i % 3]).join(';')}`,
    ];
    for (const d of datagrams) {
      const start = performance.now();
      const r = parseLogEvent(d, 0);
      const ms = performance.now() - start;
      expect(r.ok).toBe(true);
      expect(ms).toBeLessThan(500);
    }
  });
});

describe('partsOf', () => {
  it.each(['', ';', ';;', 'a', 'a;', ';a', 'a;;b', '/qseow-engine/;1;x;;', 'é;\ud83d\ude00;\ud800;'])(
    '%j gives the parts of a split on every `;`',
    (text) => {
      expect(partsOf(text)).toEqual(text.split(';'));
    },
  );

  it('agrees with split on any text of `;` and other characters', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(';', 'a', 'é', '\\', '\ud83d', '\u0000'), { maxLength: 40 }), (chars) => {
        const text = chars.join('');
        expect(partsOf(text)).toEqual(text.split(';'));
      }),
      { numRuns: 1000 },
    );
  });
});

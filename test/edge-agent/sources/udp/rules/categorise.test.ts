/** Categorisation of log events (platform-formats.md §2.5). */
import { describe, expect, it, vi } from 'vitest';
import {
  type CategoriseRule,
  type CategoriseSettings,
  type Category,
  categorise,
  firstValueTags,
  onceEach,
  unknownFilterTypeMessage,
} from '../../../../../edge-agent/sources/udp/rules/categorise.js';

type RuleInput = Partial<CategoriseRule> & Pick<CategoriseRule, 'filter'>;

function rule(r: RuleInput): CategoriseRule {
  return { description: '', logLevel: ['warn', 'error'], action: 'categorise', category: [], ...r };
}

function settings(rules: RuleInput[], ruleDefault: Category[] | null = null, enable = true): CategoriseSettings {
  return {
    enable,
    rules: rules.map(rule),
    ruleDefault: { enable: ruleDefault !== null, category: ruleDefault ?? [] },
  };
}

const cat = (name: string, value: string): Category => ({ name, value });
const keep = (...categories: Category[]) => ({ action: 'keep', categories });
const ev = (level: string, message: string) => ({ level, message });

describe('categorise: switches', () => {
  it('keeps every event without categories when categorise.enable is false, whatever the rules', () => {
    const s = settings([{ action: 'drop', filter: [{ type: 'so', value: 'x' }] }], [cat('c', 'default')], false);
    expect(categorise(ev('WARN', 'x'), s)).toEqual(keep());
  });

  it('keeps an event without categories when no rule applies and there is no default rule', () => {
    expect(
      categorise(
        ev('WARN', 'hello'),
        settings([{ filter: [{ type: 'so', value: 'bye' }], category: [cat('c', 'v')] }]),
      ),
    ).toEqual(keep());
  });

  it('keeps an event without categories when there are no rules at all', () => {
    expect(categorise(ev('ERROR', 'anything'), settings([]))).toEqual(keep());
  });
});

describe('categorise: level match (case-insensitive)', () => {
  const s = (logLevel: string[]) =>
    settings([{ logLevel, filter: [{ type: 'so', value: 'x' }], category: [cat('c', 'v')] }]);

  it.each([
    ['WARN', ['warn']],
    ['warn', ['WARN']],
    ['Error', ['error']],
    ['FATAL', ['fatal']],
    ['fatal', ['Fatal']],
    ['INFO', ['debug', 'info']],
  ])('level %s matches logLevel %j', (level, logLevel) => {
    expect(categorise(ev(level, 'x'), s(logLevel))).toEqual(keep(cat('c', 'v')));
  });

  it.each([
    ['ERROR', ['warn']],
    ['FATAL', ['error']],
    ['WARN', ['warning']],
    ['WARN', [' warn']],
  ])('level %s does not match logLevel %j', (level, logLevel) => {
    expect(categorise(ev(level, 'x'), s(logLevel))).toEqual(keep());
  });

  it('a drop rule for another level does not drop', () => {
    const r = settings([{ logLevel: ['error'], action: 'drop', filter: [{ type: 'so', value: 'x' }] }]);
    expect(categorise(ev('WARN', 'x'), r)).toEqual(keep());
    expect(categorise(ev('ERROR', 'x'), r)).toEqual({ action: 'drop' });
  });
});

describe('categorise: filters (case-sensitive)', () => {
  const one = (type: string, value: string) => settings([{ filter: [{ type, value }], category: [cat('c', 'v')] }]);
  const hit = (type: string, value: string, message: string): boolean => {
    const r = categorise(ev('WARN', message), one(type, value));
    return r.action === 'keep' && r.categories.length === 1;
  };

  it('sw: starts with', () => {
    expect(hit('sw', 'Access was denied', "Access was denied for User: 'LAB\\kalle'.")).toBe(true);
    expect(hit('sw', 'denied', 'Access was denied')).toBe(false);
    expect(hit('sw', 'access', 'Access was denied')).toBe(false);
  });

  it('ew: ends with', () => {
    expect(hit('ew', 'No license available.', "Access was denied for User: 'LAB\\kalle'. No license available.")).toBe(
      true,
    );
    expect(hit('ew', 'No license available', 'No license available.')).toBe(false);
    expect(hit('ew', 'AVAILABLE.', 'No license available.')).toBe(false);
  });

  it('so: contains, anywhere including start and end', () => {
    expect(hit('so', 'license', 'No license available.')).toBe(true);
    expect(hit('so', 'No', 'No license available.')).toBe(true);
    expect(hit('so', 'available.', 'No license available.')).toBe(true);
    expect(hit('so', 'License', 'No license available.')).toBe(false);
    expect(hit('so', 'licence', 'No license available.')).toBe(false);
  });

  it('an empty filter value matches every message (plain string semantics)', () => {
    expect(hit('sw', '', 'x')).toBe(true);
    expect(hit('ew', '', '')).toBe(true);
    expect(hit('so', '', 'x')).toBe(true);
  });

  it('one matching filter of several is enough', () => {
    const s = settings([
      {
        filter: [
          { type: 'sw', value: 'nope' },
          { type: 'ew', value: 'nope' },
          { type: 'so', value: 'locked' },
        ],
        category: [cat('c', 'v')],
      },
    ]);
    expect(categorise(ev('WARN', 'Login failed; account locked'), s)).toEqual(keep(cat('c', 'v')));
    expect(categorise(ev('WARN', 'Login failed'), s)).toEqual(keep());
  });

  it('matches the message field only, unsanitised text compared as is (Unicode, ;)', () => {
    const s = settings([{ filter: [{ type: 'so', value: 'ö; ä' }], category: [cat('c', 'v')] }]);
    expect(categorise(ev('WARN', 'Kö; ä'), s)).toEqual(keep(cat('c', 'v')));
  });
});

describe('categorise: unknown filter type', () => {
  it('warns and does not match', () => {
    const warn = vi.fn<(msg: string) => void>();
    const s = settings(
      [{ filter: [{ type: 'contains', value: 'x' }], category: [cat('c', 'v')] }],
      [cat('d', 'default')],
    );
    expect(categorise(ev('WARN', 'x'), s, warn)).toEqual(keep(cat('d', 'default')));
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(unknownFilterTypeMessage('contains'));
    expect(warn.mock.calls[0]?.[0]).toContain('"contains"');
  });

  it('types are case-sensitive: SW is unknown', () => {
    const warn = vi.fn<(msg: string) => void>();
    const s = settings([{ filter: [{ type: 'SW', value: 'x' }], category: [cat('c', 'v')] }]);
    expect(categorise(ev('WARN', 'x'), s, warn)).toEqual(keep());
    expect(warn).toHaveBeenCalledWith(unknownFilterTypeMessage('SW'));
  });

  it('another filter of the same rule can still match', () => {
    const warn = vi.fn<(msg: string) => void>();
    const s = settings([
      {
        filter: [
          { type: 'regex', value: '.*' },
          { type: 'so', value: 'x' },
        ],
        category: [cat('c', 'v')],
      },
    ]);
    expect(categorise(ev('WARN', 'x'), s, warn)).toEqual(keep(cat('c', 'v')));
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('an unknown drop filter never drops', () => {
    const s = settings([{ action: 'drop', filter: [{ type: 'all', value: '' }] }]);
    expect(categorise(ev('WARN', 'x'), s, () => undefined)).toEqual(keep());
  });

  it('warns once per type within one call, once per type across calls through onceEach', () => {
    const warn = vi.fn<(msg: string) => void>();
    const s = settings([
      {
        filter: [
          { type: 'xx', value: 'a' },
          { type: 'xx', value: 'b' },
        ],
      },
      {
        filter: [
          { type: 'xx', value: 'c' },
          { type: 'yy', value: 'd' },
        ],
      },
    ]);
    categorise(ev('WARN', 'm'), s, warn);
    expect(warn.mock.calls.map((c) => c[0])).toEqual([unknownFilterTypeMessage('xx'), unknownFilterTypeMessage('yy')]);

    const once = vi.fn<(msg: string) => void>();
    const deduped = onceEach(once);
    for (let i = 0; i < 5; i++) categorise(ev('WARN', 'm'), s, deduped);
    expect(once).toHaveBeenCalledTimes(2);
  });

  it('is not evaluated (no warning) for a rule whose level does not match', () => {
    const warn = vi.fn<(msg: string) => void>();
    categorise(ev('INFO', 'x'), settings([{ logLevel: ['error'], filter: [{ type: 'zz', value: 'x' }] }]), warn);
    expect(warn).not.toHaveBeenCalled();
  });

  it('works without a warn callback', () => {
    expect(categorise(ev('WARN', 'x'), settings([{ filter: [{ type: 'zz', value: 'x' }] }]))).toEqual(keep());
  });
});

describe('categorise: rule order, accumulation, duplicates', () => {
  it('accumulates the categories of every applying rule, in rule order', () => {
    const s = settings([
      { filter: [{ type: 'so', value: 'license' }], category: [cat('qs_log_category', 'license')] },
      { filter: [{ type: 'so', value: 'nothing' }], category: [cat('never', 'x')] },
      {
        filter: [{ type: 'sw', value: 'Access' }],
        category: [cat('qs_log_category', 'access-denied'), cat('team', 'ops')],
      },
    ]);
    expect(categorise(ev('WARN', 'Access was denied. No license available.'), s)).toEqual(
      keep(cat('qs_log_category', 'license'), cat('qs_log_category', 'access-denied'), cat('team', 'ops')),
    );
  });

  it('removes duplicates (same name and value), keeping the first in place; same name with another value stays', () => {
    const s = settings([
      { filter: [{ type: 'so', value: 'x' }], category: [cat('a', '1'), cat('b', '2'), cat('a', '1')] },
      { filter: [{ type: 'so', value: 'x' }], category: [cat('b', '2'), cat('a', '3'), cat('c', '4')] },
      { filter: [{ type: 'so', value: 'x' }], category: [cat('c', '4'), cat('A', '1'), cat('a', '')] },
    ]);
    expect(categorise(ev('WARN', 'x'), s)).toEqual(
      keep(cat('a', '1'), cat('b', '2'), cat('a', '3'), cat('c', '4'), cat('A', '1'), cat('a', '')),
    );
  });

  it('returns copies: changing the result does not change the settings', () => {
    const s = settings([{ filter: [{ type: 'so', value: 'x' }], category: [cat('a', '1')] }]);
    const r = categorise(ev('WARN', 'x'), s);
    if (r.action !== 'keep') throw new Error('expected keep');
    r.categories[0]!.value = 'changed';
    r.categories.push(cat('b', '2'));
    expect(s.rules[0]!.category).toEqual([cat('a', '1')]);
    expect(categorise(ev('WARN', 'x'), s)).toEqual(keep(cat('a', '1')));
  });
});

describe('categorise: drop', () => {
  it('a matching drop rule drops, even after categorise rules matched', () => {
    const s = settings([
      { filter: [{ type: 'so', value: 'x' }], category: [cat('a', '1')] },
      { action: 'drop', filter: [{ type: 'so', value: 'x' }] },
    ]);
    expect(categorise(ev('WARN', 'x'), s)).toEqual({ action: 'drop' });
  });

  it('drops at once: later rules are not evaluated (no warning from them)', () => {
    const warn = vi.fn<(msg: string) => void>();
    const s = settings([
      { action: 'drop', filter: [{ type: 'sw', value: 'Noise' }] },
      { filter: [{ type: 'bogus', value: 'x' }], category: [cat('a', '1')] },
    ]);
    expect(categorise(ev('WARN', 'Noise from the repository'), s, warn)).toEqual({ action: 'drop' });
    expect(warn).not.toHaveBeenCalled();
  });

  it('a drop rule whose filters do not match leaves the event to the other rules', () => {
    const s = settings([
      { action: 'drop', filter: [{ type: 'sw', value: 'Noise' }] },
      { filter: [{ type: 'so', value: 'x' }], category: [cat('a', '1')] },
    ]);
    expect(categorise(ev('WARN', 'x'), s)).toEqual(keep(cat('a', '1')));
  });

  it('a drop rule carrying categories still only drops', () => {
    const s = settings(
      [{ action: 'drop', category: [cat('a', '1')], filter: [{ type: 'so', value: 'x' }] }],
      [cat('d', '1')],
    );
    expect(categorise(ev('ERROR', 'x'), s)).toEqual({ action: 'drop' });
  });

  it('drops before the default rule is considered', () => {
    const s = settings([{ action: 'drop', filter: [{ type: 'so', value: 'x' }] }], [cat('d', '1')]);
    expect(categorise(ev('WARN', 'x'), s)).toEqual({ action: 'drop' });
  });
});

describe('categorise: default rule', () => {
  const defaults = [cat('qs_log_category', 'unknown'), cat('team', 'ops')];

  it('adds ruleDefault.category when no rule applied', () => {
    const s = settings(
      [{ filter: [{ type: 'so', value: 'license' }], category: [cat('qs_log_category', 'license')] }],
      defaults,
    );
    expect(categorise(ev('WARN', 'Something else'), s)).toEqual(keep(...defaults));
  });

  it('adds it also when there are no rules', () => {
    expect(categorise(ev('DEBUG', ''), settings([], defaults))).toEqual(keep(...defaults));
  });

  it('does not add it when a rule applied', () => {
    const s = settings(
      [{ filter: [{ type: 'so', value: 'license' }], category: [cat('qs_log_category', 'license')] }],
      defaults,
    );
    expect(categorise(ev('WARN', 'No license'), s)).toEqual(keep(cat('qs_log_category', 'license')));
  });

  it('a rule that applied with an empty category list still counts as matched (no default)', () => {
    const s = settings([{ filter: [{ type: 'so', value: 'x' }], category: [] }], defaults);
    expect(categorise(ev('WARN', 'x'), s)).toEqual(keep());
  });

  it('does nothing when ruleDefault.enable is false', () => {
    const s: CategoriseSettings = { enable: true, rules: [], ruleDefault: { enable: false, category: defaults } };
    expect(categorise(ev('WARN', 'x'), s)).toEqual(keep());
  });

  it('removes duplicates from the default categories too', () => {
    expect(categorise(ev('WARN', 'x'), settings([], [cat('a', '1'), cat('a', '1'), cat('a', '2')]))).toEqual(
      keep(cat('a', '1'), cat('a', '2')),
    );
  });
});

describe('firstValueTags', () => {
  it('maps each name to its first value', () => {
    expect(firstValueTags([cat('a', '1'), cat('b', '2'), cat('a', '3'), cat('c', '')])).toEqual({
      a: '1',
      b: '2',
      c: '',
    });
  });

  it('is empty for no categories', () => {
    expect(firstValueTags([])).toEqual({});
  });

  it('keeps names case-sensitive', () => {
    expect(firstValueTags([cat('a', '1'), cat('A', '2')])).toEqual({ a: '1', A: '2' });
  });

  it('treats __proto__ as an ordinary name', () => {
    const tags = firstValueTags([cat('__proto__', 'x'), cat('toString', 'y')]);
    expect(Object.getPrototypeOf(tags)).toBe(Object.prototype);
    expect(Object.keys(tags)).toEqual(['__proto__', 'toString']);
    expect(Object.getOwnPropertyDescriptor(tags, '__proto__')?.value).toBe('x');
  });

  it('applied to a categorise result gives the §6.11 tag', () => {
    const s = settings([
      { filter: [{ type: 'sw', value: 'Access was denied' }], category: [cat('qs_log_category', 'access-denied')] },
      { filter: [{ type: 'so', value: 'license' }], category: [cat('qs_log_category', 'license')] },
    ]);
    const r = categorise(ev('WARN', "Access was denied for User: 'LAB\\kalle'. No license available."), s);
    if (r.action !== 'keep') throw new Error('expected keep');
    expect(r.categories).toHaveLength(2);
    expect(firstValueTags(r.categories)).toEqual({ qs_log_category: 'access-denied' });
  });
});

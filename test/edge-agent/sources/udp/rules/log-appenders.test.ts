/**
 * The log-appender files Svc ships (docs/log-appenders, platform-formats.md §2.1 and §1.1): well-formed
 * XML, and exactly the appenders, loggers, patterns, converters and ports the parsers expect. The
 * expectations below are copied from the specification; a change to either side must change both.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const DIR = new URL('../../../../../docs/log-appenders/', import.meta.url);

// ---------------------------------------------------------------------------------------------
// A minimal XML reader: enough to prove well-formedness of these element-only files.

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
}

const NAME = '[A-Za-z_][A-Za-z0-9_.:-]*';
const ATTR = new RegExp(`\\s+(${NAME})\\s*=\\s*"([^"<]*)"`, 'gy');
const TAG = new RegExp(`<(/?)(${NAME})((?:\\s+${NAME}\\s*=\\s*"[^"<]*")*)\\s*(/?)>`, 'y');

function checkText(text: string, where: string): void {
  if (text.trim() !== '') throw new Error(`unexpected text ${JSON.stringify(text.trim().slice(0, 40))} ${where}`);
}

function checkEntities(value: string, where: string): string {
  if (/&(?!(amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/.test(value)) throw new Error(`bare & ${where}`);
  return value.replace(
    /&(amp|lt|gt|quot|apos);/g,
    (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" })[e] ?? '',
  );
}

/** Parses an element-only XML document (declaration, comments, elements, attributes; no text content). */
function parseXml(source: string): XmlElement {
  let pos = 0;
  const decl = /^<\?xml version="1\.0" encoding="UTF-8"\?>/.exec(source);
  if (!decl) throw new Error('missing or wrong XML declaration');
  pos = decl[0].length;
  const stack: XmlElement[] = [];
  let root: XmlElement | null = null;
  while (pos < source.length) {
    const lt = source.indexOf('<', pos);
    checkText(lt === -1 ? source.slice(pos) : source.slice(pos, lt), `at offset ${pos}`);
    if (lt === -1) break;
    if (source.startsWith('<!--', lt)) {
      const end = source.indexOf('-->', lt + 4);
      if (end === -1) throw new Error(`unterminated comment at ${lt}`);
      if (source.slice(lt + 4, end).includes('--')) throw new Error(`-- inside a comment at ${lt}`);
      pos = end + 3;
      continue;
    }
    TAG.lastIndex = lt;
    const m = TAG.exec(source);
    if (!m) throw new Error(`malformed tag at offset ${lt}: ${source.slice(lt, lt + 40)}`);
    const [whole, close = '', name = '', attrText = '', selfClose = ''] = m;
    pos = lt + whole.length;
    if (close) {
      if (attrText || selfClose) throw new Error(`malformed end tag </${name}>`);
      const open = stack.pop();
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name ?? 'nothing'}>`);
      continue;
    }
    const attrs: Record<string, string> = {};
    ATTR.lastIndex = 0;
    for (const a of attrText.matchAll(ATTR)) {
      const [, key = '', value = ''] = a;
      if (Object.hasOwn(attrs, key)) throw new Error(`duplicate attribute ${key} on <${name}>`);
      attrs[key] = checkEntities(value, `in ${key} of <${name}>`);
    }
    const el: XmlElement = { name, attrs, children: [] };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(el);
    else if (root) throw new Error(`second root element <${name}>`);
    else root = el;
    if (!selfClose) stack.push(el);
  }
  if (stack.length > 0) throw new Error(`unclosed <${stack.map((e) => e.name).join('>, <')}>`);
  if (!root) throw new Error('no root element');
  return root;
}

const kids = (el: XmlElement, name: string): XmlElement[] => el.children.filter((c) => c.name === name);
const only = (el: XmlElement, name: string): XmlElement => {
  const found = kids(el, name);
  if (found.length !== 1) throw new Error(`expected one <${name}> in <${el.name}>, found ${found.length}`);
  return found[0]!;
};
/** `<param name="x" value="y" />` children as a map (names are unique). */
function params(el: XmlElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of kids(el, 'param')) {
    const name = p.attrs.name ?? '';
    if (Object.hasOwn(out, name)) throw new Error(`duplicate param ${name} in <${el.name}>`);
    out[name] = p.attrs.value ?? '';
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// What the specification requires (platform-formats.md §1.1, §2.1).

const CONVERTER_TYPES: Record<string, string> = {
  rownum: 'Qlik.Sense.Logging.log4net.Layout.Pattern.CounterPatternConverter',
  hostname: 'Qlik.Sense.Logging.log4net.Layout.Pattern.HostNamePatternConverter',
  longIso8601date: 'Qlik.Sense.Logging.log4net.Layout.Pattern.Iso8601TimeOffsetPatternConverter',
  user: 'Qlik.Sense.Logging.log4net.Layout.Pattern.ServiceUserNameCachedPatternConverter',
  encodedmessage: 'Qlik.Sense.Logging.log4net.Layout.Pattern.EncodedMessagePatternConverter',
  encodedexception: 'Qlik.Sense.Logging.log4net.Layout.Pattern.EncodedExceptionPatternConverter',
};

const HEAD = '%rownum{9999};%longIso8601date;%date;%level;%hostname;%logger;%user;';
const PROXY_TAIL =
  '%encodedmessage;%encodedexception;%property{UserDirectory};%property{UserId};%property{Command};%property{Result};%property{Origin};%property{Context}';
const USER_TAIL =
  '%hostname;%property{Command};%property{UserDirectory};%property{UserId};%property{Origin};%property{Context};%message';
const PATTERNS = {
  engine: `/qseow-engine/;${HEAD}%encodedmessage;%property{ProxySessionId};%property{ActiveUserDirectory};%property{ActiveUserId};%property{EngineTimestamp};%property{ProcessId};%property{Exe Version};%property{Server Started};%property{Entry Type};%property{SessionId};%property{AppId}`,
  perf: `/qseow-qix-perf/;${HEAD}%property{ProxySessionId};%property{ActiveUserDirectory};%property{ActiveUserId};%property{EngineTimestamp};%property{SessionId};%property{DocId};%property{RequestId};%property{Method};%property{ProcessTime};%property{WorkTime};%property{LockTime};%property{ValidateTime};%property{TraverseTime};%property{Handle};%property{ObjectId};%property{NetRAM};%property{PeakRAM};%property{ObjectType}`,
  proxy: `/qseow-proxy/;${HEAD}${PROXY_TAIL}`,
  repository: `/qseow-repository/;${HEAD}${PROXY_TAIL}`,
  scheduler: `/qseow-scheduler/;${HEAD}%encodedmessage;%encodedexception;%property{UserDirectory};%property{UserId};%property{User};%property{TaskName};%property{AppName};%property{TaskId};%property{AppId};%property{ExecutionId}`,
  session: `/qseow-proxy-session/;${USER_TAIL}`,
  connection: `/qseow-proxy-connection/;${USER_TAIL}`,
};

/** Field count N of §0.4 per prefix: the pattern must produce exactly that many `;`-separated fields. */
const FIELD_COUNT: Record<string, number> = {
  '/qseow-engine/': 19,
  '/qseow-qix-perf/': 26,
  '/qseow-proxy/': 16,
  '/qseow-repository/': 16,
  '/qseow-scheduler/': 18,
  '/qseow-proxy-session/': 8,
  '/qseow-proxy-connection/': 8,
};

interface AppenderSpec {
  name: string;
  threshold: string | null;
  port: string;
  prefix: string;
  pattern: string;
  filters: { type: string; stringToMatch?: string }[];
}

const logEvent = (pattern: string, threshold = 'warn', name = 'SvcLogEvent'): AppenderSpec => ({
  name,
  threshold,
  port: '9996',
  prefix: pattern.slice(0, pattern.indexOf(';')),
  pattern,
  filters: [],
});
const userEvent = (name: string, pattern: string, prefix: string, match: [string, string]): AppenderSpec => ({
  name,
  threshold: null,
  port: '9997',
  prefix,
  pattern,
  filters: [
    { type: 'log4net.Filter.StringMatchFilter', stringToMatch: match[0] },
    { type: 'log4net.Filter.StringMatchFilter', stringToMatch: match[1] },
    { type: 'log4net.Filter.DenyAllFilter' },
  ],
});

const FILES: Record<string, { appenders: AppenderSpec[]; loggers: Record<string, string[]> }> = {
  engine: {
    appenders: [logEvent(PATTERNS.engine), logEvent(PATTERNS.perf, 'info', 'SvcApiPerf')],
    loggers: {
      'Performance.Engine': ['SvcLogEvent'],
      'System.Engine': ['SvcLogEvent'],
      'Session.Engine': ['SvcLogEvent'],
      'QixPerformance.Engine.Engine': ['SvcApiPerf'],
    },
  },
  proxy: {
    appenders: [
      userEvent('SvcUserSession', PATTERNS.session, '/qseow-proxy-session/', [
        'Start session for user',
        'Stop session for user',
      ]),
      userEvent('SvcUserConnection', PATTERNS.connection, '/qseow-proxy-connection/', [
        'connection Opened for session',
        'connection Closed for session',
      ]),
      logEvent(PATTERNS.proxy),
    ],
    loggers: {
      'AuditActivity.Proxy': ['SvcUserSession', 'SvcUserConnection'],
      'Audit.Proxy': ['SvcLogEvent'],
      AuditSecurity: ['SvcLogEvent'],
      'Security.Proxy': ['SvcLogEvent'],
      'System.Proxy': ['SvcLogEvent'],
    },
  },
  repository: {
    appenders: [logEvent(PATTERNS.repository)],
    loggers: {
      Service: ['SvcLogEvent'],
      'System.Repository': ['SvcLogEvent'],
      'UserManagement.Repository': ['SvcLogEvent'],
    },
  },
  scheduler: {
    appenders: [logEvent(PATTERNS.scheduler)],
    loggers: { Service: ['SvcLogEvent'], 'System.Scheduler': ['SvcLogEvent'] },
  },
};

/** The custom converters a pattern uses, in the order of the §2.1 table. */
function convertersUsed(pattern: string): string[] {
  return Object.keys(CONVERTER_TYPES).filter((name) => new RegExp(`%${name}(?![A-Za-z0-9])`).test(pattern));
}

// ---------------------------------------------------------------------------------------------

describe('the minimal XML reader', () => {
  const ok = '<?xml version="1.0" encoding="UTF-8"?>\n<!-- c -->\n<a x="1"><b y="&amp;" /><c></c></a>\n';

  it('reads a well-formed document', () => {
    expect(parseXml(ok)).toEqual({
      name: 'a',
      attrs: { x: '1' },
      children: [
        { name: 'b', attrs: { y: '&' }, children: [] },
        { name: 'c', attrs: {}, children: [] },
      ],
    });
  });

  it.each([
    ['no declaration', '<a />'],
    ['unbalanced', '<?xml version="1.0" encoding="UTF-8"?><a><b></a>'],
    ['unclosed', '<?xml version="1.0" encoding="UTF-8"?><a><b />'],
    ['two roots', '<?xml version="1.0" encoding="UTF-8"?><a /><b />'],
    ['text content', '<?xml version="1.0" encoding="UTF-8"?><a>text</a>'],
    ['< in an attribute', '<?xml version="1.0" encoding="UTF-8"?><a x="<SVC_HOST>" />'],
    ['bare &', '<?xml version="1.0" encoding="UTF-8"?><a x="a & b" />'],
    ['unquoted attribute', '<?xml version="1.0" encoding="UTF-8"?><a x=1 />'],
    ['duplicate attribute', '<?xml version="1.0" encoding="UTF-8"?><a x="1" x="2" />'],
    ['-- in a comment', '<?xml version="1.0" encoding="UTF-8"?><!-- a -- b --><a />'],
    ['unterminated comment', '<?xml version="1.0" encoding="UTF-8"?><a /><!-- x'],
  ])('rejects %s', (_what, text) => {
    expect(() => parseXml(text)).toThrow();
  });
});

describe('docs/log-appenders', () => {
  it('holds exactly one LocalLogConfig.xml per platform service, and the README', () => {
    const entries = readdirSync(DIR, { withFileTypes: true });
    expect(
      entries
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort(),
    ).toEqual(['engine', 'proxy', 'repository', 'scheduler']);
    expect(entries.filter((e) => e.isFile()).map((e) => e.name)).toEqual(['README.md']);
    for (const service of Object.keys(FILES))
      expect(readdirSync(new URL(`${service}/`, DIR))).toEqual(['LocalLogConfig.xml']);
  });

  it('every pattern has the field count of its source (§0.4)', () => {
    for (const pattern of Object.values(PATTERNS)) {
      const prefix = pattern.slice(0, pattern.indexOf(';'));
      expect(pattern.split(';').length, prefix).toBe(FIELD_COUNT[prefix]);
    }
  });

  describe.each(Object.entries(FILES))('%s/LocalLogConfig.xml', (service, expected) => {
    const text = readFileSync(new URL(`${service}/LocalLogConfig.xml`, DIR), 'utf8');
    const root = parseXml(text);
    const appenders = kids(root, 'appender');

    it('is well-formed, with <configuration> holding only appenders and loggers', () => {
      expect(root.name).toBe('configuration');
      expect(root.attrs).toEqual({});
      expect(new Set(root.children.map((c) => c.name))).toEqual(new Set(['appender', 'logger']));
      expect(text.endsWith('\n')).toBe(true);
      expect(text).not.toMatch(/\r|\t/);
    });

    it('has exactly the appenders of the specification', () => {
      expect(appenders.map((a) => a.attrs.name)).toEqual(expected.appenders.map((a) => a.name));
    });

    it.each(expected.appenders)(
      'appender $name: UDP, threshold, address placeholder, port, encoding, filters',
      (spec) => {
        const el = appenders.find((a) => a.attrs.name === spec.name);
        if (!el) throw new Error(`no appender ${spec.name}`);
        expect(el.attrs).toEqual({ name: spec.name, type: 'log4net.Appender.UdpAppender' });
        expect(params(el)).toEqual({
          ...(spec.threshold === null ? {} : { threshold: spec.threshold }),
          remoteAddress: 'SVC_HOST',
          remotePort: spec.port,
          encoding: 'utf-8',
        });
        expect(new Set(el.children.map((c) => c.name))).toEqual(
          new Set(['param', 'layout', ...(spec.filters.length ? ['filter'] : [])]),
        );
        const filters = kids(el, 'filter').map((f) => {
          expect(f.children.every((c) => c.name === 'param')).toBe(true);
          const p = params(f);
          return { type: f.attrs.type ?? '', ...(Object.keys(p).length ? p : {}) };
        });
        expect(filters).toEqual(spec.filters);
      },
    );

    it.each(expected.appenders)(
      'appender $name: pattern layout, exact conversion pattern, prefix and converters',
      (spec) => {
        const el = appenders.find((a) => a.attrs.name === spec.name);
        if (!el) throw new Error(`no appender ${spec.name}`);
        const layout = only(el, 'layout');
        expect(layout.attrs).toEqual({ type: 'log4net.Layout.PatternLayout' });
        expect(params(layout)).toEqual({ conversionpattern: spec.pattern });
        expect(spec.pattern.startsWith(`${spec.prefix};`)).toBe(true);

        const converters = kids(layout, 'converter').map((c) => {
          expect(c.children.every((p) => p.name === 'param')).toBe(true);
          return params(c);
        });
        const used = convertersUsed(spec.pattern);
        expect(converters).toEqual(used.map((name) => ({ name, type: CONVERTER_TYPES[name] })));
        if (spec.port === '9997') expect(used).toEqual(['hostname']);
      },
    );

    it('routes exactly the loggers of the specification to their appenders', () => {
      const loggers = kids(root, 'logger');
      const routes = Object.fromEntries(
        loggers.map((l) => {
          expect(Object.keys(l.attrs)).toEqual(['name']);
          expect(
            l.children.every(
              (c) => c.name === 'appender-ref' && Object.keys(c.attrs).join() === 'ref' && c.children.length === 0,
            ),
          ).toBe(true);
          return [l.attrs.name ?? '', l.children.map((c) => c.attrs.ref ?? '')];
        }),
      );
      expect(loggers).toHaveLength(Object.keys(expected.loggers).length);
      expect(routes).toEqual(expected.loggers);
    });

    it('every appender is referenced by a logger, every reference names an appender', () => {
      const names = new Set(appenders.map((a) => a.attrs.name));
      const refs = new Set(kids(root, 'logger').flatMap((l) => l.children.map((c) => c.attrs.ref)));
      expect(refs).toEqual(names);
    });

    it('explains the SVC_HOST placeholder in a comment', () => {
      expect(text).toMatch(/<!--[^]*SVC_HOST[^]*-->/);
      expect(text.match(/value="SVC_HOST"/g)).toHaveLength(expected.appenders.length);
    });
  });

  it('README names every file, its install path, every appender and both ports with their config keys', () => {
    const readme = readFileSync(new URL('README.md', DIR), 'utf8');
    for (const [service, { appenders }] of Object.entries(FILES)) {
      const folder = service[0]!.toUpperCase() + service.slice(1);
      expect(readme).toContain(`${service}/LocalLogConfig.xml`);
      expect(readme).toContain(`C:\\ProgramData\\Qlik\\Sense\\${folder}\\LocalLogConfig.xml`);
      for (const a of appenders) {
        expect(readme).toContain(`\`${a.name}\``);
        expect(readme).toContain(`\`${a.prefix}\``);
      }
    }
    for (const key of [
      'Svc.logEvents.udpServerConfig.portLogEvents',
      'Svc.userEvents.udpServerConfig.portUserActivityEvents',
      'serverHost',
      'allowedSources',
      'enableSourceValidation',
      '9996',
      '9997',
      'SVC_HOST',
    ])
      expect(readme).toContain(key);
  });
});

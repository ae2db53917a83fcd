/**
 * Hostile and broken config files: each is a config error with a place and a bounded message, never
 * a library exception, a stack, a hang or an echo of the file. Files are real files where the size
 * or the bytes matter.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigIssue, formatIssue } from '../../../shared/config/errors.js';
import { loadConfigFile, parseConfigText } from '../../../shared/config/load.js';
import { MAX_ALIAS_VALUES, MAX_CONFIG_BYTES, MAX_NESTING } from '../../../shared/config/read.js';

function issuesOf(run: () => unknown): ConfigIssue[] {
  try {
    run();
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
}
const lines = (text: string) => issuesOf(() => parseConfigText(text, 'svc.yaml', {})).map(formatIssue);
const fileLines = (bytes: string | Buffer, name = 'svc.yaml') => {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-read-')), name);
  writeFileSync(file, bytes);
  return { file, lines: issuesOf(() => loadConfigFile(file)).map(formatIssue) };
};

/** 9 levels of 9 aliases each: 9^9 values once expanded. */
const BILLION_LAUGHS = [
  'Svc:',
  '  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]',
  ...['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].map((name, i) => {
    const prev = 'abcdefgh'[i] ?? '';
    return `  ${name}: &${name} [${Array.from({ length: 9 }, () => `*${prev}`).join(', ')}]`;
  }),
  '',
].join('\n');

describe('the size of the file', () => {
  it(`refuses a file over ${MAX_CONFIG_BYTES} bytes without reading it all, saying how large it is and what the limit is`, () => {
    const { file, lines: found } = fileLines(Buffer.alloc(10 * 1024 * 1024, 'a'));
    expect(found).toEqual([`${file} the file is 10.0 MiB; a config file may be at most 1.0 MiB (1,048,576 bytes)`]);
  });

  it('takes a file of exactly the limit, and refuses one byte more', () => {
    const body = (bytes: number) => `Svc: {}\n${'#'.repeat(bytes - 'Svc: {}\n'.length - 1)}\n`;
    expect(fileLines(body(MAX_CONFIG_BYTES)).lines).toEqual([]);
    expect(fileLines(body(MAX_CONFIG_BYTES + 1)).lines).toEqual([
      expect.stringMatching(/the file is 1\.0 MiB; a config file may be at most 1\.0 MiB \(1,048,576 bytes\)$/),
    ]);
  });

  it('holds text given directly to the same limit', () => {
    expect(lines(`Svc: {}\n${'#'.repeat(MAX_CONFIG_BYTES)}\n`)).toEqual([
      expect.stringMatching(/^svc\.yaml the file is 1\.0 MiB; a config file may be at most/),
    ]);
  });
});

describe('the encoding of the file', () => {
  it('refuses bytes that are not UTF-8 with one problem at the first bad byte', () => {
    const bytes = Buffer.concat([
      Buffer.from('Svc:\n  logLevel: info\n  # caf'),
      Buffer.from([0xe9]),
      Buffer.from(' au lait\n'),
    ]);
    expect(fileLines(bytes).lines).toEqual([
      expect.stringMatching(/:3:8 the file is not UTF-8 text; save it as UTF-8$/),
    ]);
  });

  it('answers a megabyte of random bytes with one short problem, not a page per byte', () => {
    let seed = 42;
    const random = Buffer.alloc(MAX_CONFIG_BYTES - 1);
    for (let i = 0; i < random.length; i++) random[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    const found = fileLines(random).lines;
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/ the file is not UTF-8 text; save it as UTF-8$/);
  });

  it('accepts UTF-8 with a byte-order mark and non-ASCII text', () => {
    expect(fileLines(Buffer.from('\uFEFFSvc:\n  logDirectory: journaux-été\n')).lines).toEqual([]);
  });
});

describe('aliases', () => {
  it('stops an alias bomb at the alias that exceeds the budget, as a config problem', () => {
    const found = lines(BILLION_LAUGHS);
    expect(found).toEqual([
      expect.stringMatching(
        /^svc\.yaml:\d+:\d+ Svc\.[a-i]\[\d+\]: aliases expand to more than 10,000 values in total \(a guard against alias bombs\)$/,
      ),
    ]);
  });

  it('allows a shared list reused many times within the budget, each use an independent copy', () => {
    const servers = Array.from({ length: 300 }, (_, i) => [
      `      - host: node${i}.example.com:4747`,
      `        serverName: node${i}`,
      `        serverTags: *tags`,
    ]).flat();
    const text = [
      'Svc:',
      '  serversToMonitor:',
      '    serverTagsDefinition: [site, role]',
      '    servers:',
      '      - host: anchor.example.com:4747',
      '        serverName: anchor',
      '        serverTags: &tags {site: lab, role: engine}',
      ...servers,
      '',
    ].join('\n');
    const { config } = parseConfigText(text, 'svc.yaml', {});
    expect(config.serversToMonitor.servers).toHaveLength(301);
    expect(config.serversToMonitor.servers[300]?.serverTags).toEqual({ site: 'lab', role: 'engine' });
    expect(config.serversToMonitor.servers[1]?.serverTags).not.toBe(config.serversToMonitor.servers[2]?.serverTags);
    expect(300 * 3).toBeLessThan(MAX_ALIAS_VALUES);
  });

  it('keeps an aliased value when the anchor sits in a disabled section (the copy is not cut with it)', () => {
    const text = [
      'Svc:',
      '  heartbeat:',
      '    enable: false',
      '    remoteURL: &url https://alive.example.com/ping',
      '  monsaas:',
      '    enable: true',
      '    metric:',
      '      url: *url',
      '',
    ].join('\n');
    expect(parseConfigText(text, 'svc.yaml', {}).config.monsaas.metric.url).toBe('https://alive.example.com/ping');
  });

  it('reports an alias inside its own anchor (a cycle) and an alias to an unknown anchor', () => {
    expect(lines('Svc: &root\n  logDirectory: *root\n')).toEqual([
      'svc.yaml:2:17 Svc.logDirectory: alias inside the value it refers to (a cycle)',
    ]);
    expect(lines('Svc:\n  logDirectory: *nowhere\n')).toEqual([
      'svc.yaml:2:17 Svc.logDirectory: alias to an anchor that is not defined before it',
    ]);
  });
});

describe('nesting', () => {
  it(`refuses lists nested deeper than ${MAX_NESTING} levels, however deep`, () => {
    const deep = (n: number) => `Svc:\n  extra: ${'['.repeat(n)}${']'.repeat(n)}\n`;
    expect(lines(deep(MAX_NESTING + 5))).toEqual([
      expect.stringMatching(
        /^svc\.yaml:2:\d+ Svc\.extra(\[0\])+: nested too deeply \(at most 64 levels of lists and mappings\)$/,
      ),
    ]);
    // Deep enough to overflow the YAML library's stack: still one problem, in words.
    expect(lines(deep(100_000))).toEqual([
      expect.stringMatching(/^svc\.yaml:2:\d+ YAML syntax error: nested too deeply \(at most 64 levels\)$/),
    ]);
  });
});

describe('YAML syntax errors quote nothing of the file', () => {
  it('names the problem without the offending text, which may be a secret or a megabyte of junk', () => {
    const secret = 'Zx9-secret-token-Zx9';
    const cases = [
      `Svc:\n  auditEvents:\n    apiToken: "${secret}\\q"\n`, // bad escape
      `Svc:\n  auditEvents:\n    apiToken: ${secret}\n  ${secret}\n`, // stray scalar
      `Svc:\n  auditEvents: !${secret} {}\n`, // unknown tag
      `Svc: {}\n]${secret}${'x'.repeat(100_000)}\n`, // junk after the document
    ];
    for (const text of cases) {
      const found = lines(text);
      expect(found.length, text.slice(0, 60)).toBeGreaterThan(0);
      for (const line of found) {
        expect(line).toMatch(/^svc\.yaml:\d+:\d+ /);
        expect(line).not.toContain('Zx9');
        expect(line.length).toBeLessThan(200);
      }
    }
  });

  it("keeps the library's own words where they quote nothing", () => {
    expect(lines('Svc:\n  logLevel: info\n   bad: [1, 2\n')[0]).toBe(
      'svc.yaml:2:13 YAML syntax error: Nested mappings are not allowed in compact mappings',
    );
  });
});

describe('keys', () => {
  it('takes __proto__ as an ordinary (unknown) key, never as the prototype', () => {
    expect(lines('Svc:\n  __proto__:\n    logLevel: debug\n')).toEqual([
      expect.stringMatching(/^svc\.yaml:2:3 Svc\.__proto__: unknown key/),
    ]);
  });

  it('refuses a key that is a list or a mapping', () => {
    expect(lines('Svc:\n  ? [a, b]\n  : x\n')).toEqual([
      'svc.yaml:2:5 Svc: a key must be plain text, not a list, mapping or alias',
    ]);
  });

  it('shows control characters of a quoted key escaped, so an issue stays on one line', () => {
    expect(lines('Svc:\n  "log\\nLevel": info\n')).toEqual([
      'svc.yaml:2:3 Svc.log\\nLevel: unknown key; did you mean "logLevel"?',
    ]);
  });
});

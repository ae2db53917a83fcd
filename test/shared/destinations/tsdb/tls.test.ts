/**
 * `Svc.tsdbConfig.tls`: the CA file is checked once, in-process and as an operator meets it from
 * `svc validate-config` and `svc local` as real child processes (exit 1, the key, the path and the
 * reason, no stack); a good file is added to the system's roots.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getCACertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import { loadTsdbTls, tsdbTls } from '../../../../shared/destinations/tsdb/tls.js';
import { SVC_BIN } from '../../../support/svc-process.js';
import { tsdbConfig } from './helpers.js';

let dir: string;
let caPem: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsdb-tls-config-'));
  caPem = makeCertificates(['127.0.0.1']).ca.cert;
  mkdirSync(join(dir, 'certs'));
  writeFileSync(join(dir, 'certs', 'ca.pem'), caPem);
  writeFileSync(join(dir, 'not-pem.txt'), 'hello\n');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const config = (tls: { enable?: boolean; caFile?: string; rejectUnauthorized?: boolean }) =>
  tsdbConfig({ version: 1, port: 8086, tls: { enable: true, ...tls } });

describe('loadTsdbTls', () => {
  it('is plain http while tls (or the tsdb) is off, whatever caFile says', () => {
    expect(loadTsdbTls(config({ enable: false, caFile: join(dir, 'missing.pem') }))).toEqual({ ok: true, tls: null });
    expect(loadTsdbTls({ ...config({ caFile: join(dir, 'missing.pem') }), enable: false })).toEqual({
      ok: true,
      tls: null,
    });
  });

  it("without caFile: Node's own roots, and rejectUnauthorized as configured", () => {
    expect(loadTsdbTls(config({ rejectUnauthorized: false }))).toEqual({
      ok: true,
      tls: { ca: undefined, rejectUnauthorized: false, caFile: null },
    });
  });

  it("a CA file is added to the system's roots; a relative path starts from the working directory", () => {
    const loaded = loadTsdbTls(config({ caFile: 'certs/ca.pem' }), dir);
    if (!loaded.ok || loaded.tls === null) throw new Error('expected TLS settings');
    expect(loaded.tls.caFile).toBe(join(dir, 'certs', 'ca.pem'));
    expect(loaded.tls.rejectUnauthorized).toBe(true);
    const defaults = getCACertificates('default');
    expect(loaded.tls.ca).toHaveLength(defaults.length + 1);
    expect(loaded.tls.ca?.at(-1)).toBe(caPem.trim());
  });

  it.each([
    ['a missing file', () => join(dir, 'missing.pem'), (f: string) => `cannot read ${JSON.stringify(f)}: no such file`],
    ['a directory', () => dir, (f: string) => `cannot read ${JSON.stringify(f)}: is a directory`],
    [
      'a file that is no PEM certificate',
      () => join(dir, 'not-pem.txt'),
      (f: string) => `${JSON.stringify(f)} is not a PEM certificate (no "-----BEGIN CERTIFICATE-----" block)`,
    ],
  ])('%s is a problem naming the key, the path and the reason', (_what, file, message) => {
    expect(loadTsdbTls(config({ caFile: file() }))).toEqual({
      ok: false,
      problems: [{ severity: 'error', path: ['tsdbConfig', 'tls', 'caFile'], message: message(file()) }],
    });
    // A writer made anyway (a writer Lambda's cold start) refuses with the same words.
    expect(() => tsdbTls(config({ caFile: file() }))).toThrow(`Svc.tsdbConfig.tls.caFile: ${message(file())}`);
  });
});

describe('svc validate-config and svc local refuse an unusable tsdb CA file', () => {
  function svc(command: string, lines: string[]): { run: SpawnSyncReturns<string>; file: string } {
    const file = join(mkdtempSync(join(dir, 'cfg-')), 'svc.yaml');
    writeFileSync(
      file,
      ['Svc:', '  uptimeMonitor: { enable: false }', '  systemInfo: { enable: false }', ...lines, ''].join('\n'),
    );
    const run = spawnSync(SVC_BIN, [command, '--config', file], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '' },
      timeout: 20_000,
    });
    return { run, file };
  }
  const tsdb = (caFile: string) => [
    '  tsdbConfig:',
    '    enable: true',
    '    tls:',
    '      enable: true',
    `      caFile: ${JSON.stringify(caFile)}`,
  ];

  for (const command of ['validate-config', 'local'] as const) {
    it(`\`svc ${command}\` exits 1 naming the key, the path and the reason`, () => {
      const missing = join(dir, 'missing.pem');
      const { run, file } = svc(command, tsdb(missing));
      expect(run.stderr).toBe(
        `svc: the configuration in ${file} cannot be used (1 problem):\n  ${file} Svc.tsdbConfig.tls.caFile: cannot read ${JSON.stringify(missing)}: no such file\n`,
      );
      expect(run.status).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr).not.toMatch(/^\s+at |Error:|node:internal/m);
    });
  }

  it('accepts a good file, a relative path resolved from the working directory', () => {
    const { run, file } = svc('validate-config', tsdb('certs/ca.pem'));
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(`${file}: configuration is valid\n`);
    expect(run.status).toBe(0);
  });
});

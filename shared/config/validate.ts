/**
 * The config validator: ajv over the TypeBox schema (schema.ts), with Svc's annotation keywords.
 *
 * A service does not compile it at start: `npm run build` generates its code once
 * (validator-source.ts, scripts/build-config-validator.mjs) into
 * dist/shared/config/config-validator.generated.cjs, from the same schema and the same ajv options,
 * and a start loads that file. Compiling at start cost ≈ 0.3 s of CPU and ≈ 30 MB more peak RSS
 * (ajv's schema environments and code generation for the whole config schema, bench/memory.mjs),
 * and kept ajv's compiler among the modules of every start. The build also writes V8's code cache
 * of that file (GENERATED_CACHE_FILE): V8 compiling the generated code's one ≈ 1 MB function took
 * ≈ 11 MB of malloc'ed compiler memory at start, which glibc then kept as ≈ 10 MB of idle RSS (the
 * space is freed, but later allocations sit above it). Where no generated file is next to
 * this module (the sources run by vitest) the validator is compiled at run time with `makeAjv`,
 * the function the generator uses; test/shared/config/validator.test.ts checks that both agree.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { compileFunction } from 'node:vm';
import later from '@breejs/later';
import type * as AjvModule from 'ajv';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { KeywordCxt } from 'ajv/dist/compile/validate/index.js';
import { isSingleExecutable, readAsset } from '../runtime/single-executable.js';
import { MAX_QUOTED_CHARS, quote } from './errors.js';
import { ConfigFileSchema, type SvcConfig } from './schema.js';

export interface ConfigFile {
  Svc: SvcConfig;
}

/** Where a text schedule stops parsing, or -1 when it parses. */
export function scheduleErrorPosition(text: string): number {
  return later.parse.text(text).error;
}

/** The x-schedule keyword's message for a text that stops parsing at `position`. */
function scheduleMessage(text: string, position: number): string {
  return `cannot be parsed as a text schedule from position ${position} (${quote(text.slice(position, position + MAX_QUOTED_CHARS + 1))})`;
}

/**
 * The functions the validator calls: handed to the generated code (whose source can only name
 * them) and used by the run-time compile, so both run the same checks.
 */
export const VALIDATOR_FUNCTIONS = {
  formats: { ip: (value: string): boolean => isIP(value) !== 0 },
  scheduleErrorPosition,
  scheduleMessage,
};
export type ValidatorFunctions = typeof VALIDATOR_FUNCTIONS;
/** The name the generated code gives VALIDATOR_FUNCTIONS (the factory's parameter). */
export const FUNCTIONS_NAME = 'validatorFunctions';

const require = createRequire(import.meta.url);

/**
 * The ajv instance for the config schema. `code.optimize` only where the code is generated for
 * the build (where its cost is paid once); at run time ajv's optimisation passes cost more than they
 * save for a validator that runs once or twice (≈ 40 % of the compile time, ≈ 9 MB of peak): they
 * drop unused names and inline constants, and the checks are the same either way.
 *
 * ajv is loaded with `require` here, not imported, so a start that loads the generated validator
 * never loads ajv's compiler.
 */
export function makeAjv(forBuild: boolean): Ajv {
  const { Ajv: AjvClass, _, Name } = require('ajv') as typeof AjvModule;
  const fns = new Name(FUNCTIONS_NAME);
  const ajv = new AjvClass({
    allErrors: true,
    useDefaults: true,
    coerceTypes: false,
    verbose: true,
    strict: true,
    strictRequired: false,
    code: { optimize: forBuild, source: forBuild, formats: _`${fns}.formats` },
  });
  ajv.addFormat('ip', VALIDATOR_FUNCTIONS.formats.ip);
  for (const keyword of ['x-gate', 'x-only-when', 'x-secret', 'x-secret-values', 'x-expect', 'x-required'])
    ajv.addKeyword({ keyword });
  // A `code` keyword, not a `validate` function: generated code can call a function only by a name
  // in its scope (the `code` of a scope value), which ajv has no way to give a `validate` keyword.
  ajv.addKeyword({
    keyword: 'x-schedule',
    type: 'string',
    schemaType: 'boolean',
    code(cxt: KeywordCxt) {
      const { gen, data } = cxt;
      const at = gen.scopeValue('func', {
        ref: VALIDATOR_FUNCTIONS.scheduleErrorPosition,
        code: _`${fns}.scheduleErrorPosition`,
      });
      const position = gen.const('position', _`${at}(${data})`);
      cxt.setParams({ position });
      cxt.fail(_`${position} !== -1`);
    },
    error: {
      message: ({ gen, data, params }) => {
        const say = gen.scopeValue('func', {
          ref: VALIDATOR_FUNCTIONS.scheduleMessage,
          code: _`${fns}.scheduleMessage`,
        });
        return _`${say}(${data}, ${params['position'] ?? -1})`;
      },
      params: ({ params }) => _`{position: ${params['position'] ?? -1}}`,
    },
  });
  return ajv;
}

/** The generated file, built by scripts/build-config-validator.mjs next to this module in dist/. */
export const GENERATED_FILE = 'config-validator.generated.cjs';
/** V8's code cache of GENERATED_FILE, written by the same build step (`codeCache` of runGenerated). */
export const GENERATED_CACHE_FILE = 'config-validator.generated.v8cache';

/** Whether V8 took the code cache; undefined when none was given (nothing to say). */
export type CodeCacheUse = 'accepted' | 'rejected' | undefined;

export interface GeneratedRun {
  /** What the file's `module.exports` was set to: the validator factory. */
  factory: unknown;
  codeCache: CodeCacheUse;
  /** With `produceCache`: V8's code cache of the compiled file (the build writes it). */
  producedCache: Buffer | undefined;
}

/**
 * Runs the generated file's source as a CommonJS module body, compiled by `vm.compileFunction`
 * rather than loaded by `require`, for two reasons:
 * - the code cache: it takes V8's cachedData, which skips compiling the ≈ 1 MB function (the file
 *   is shaped to be compiled whole at once, validator-source.ts); a cache V8 rejects (another Node
 *   version, other V8 flags such as --expose-gc) only means it compiles as before;
 * - nothing keeps it: `require` left the module reachable from the module cache (through its own
 *   require of ajv's ucs2length, whose module points back at its parent), so the validator's code
 *   and ≈ 1.9 MB source string stayed for the life of the process. A `vm.Script` would keep them
 *   too, in V8's compilation cache (which only a memory-pressure GC clears). A compiled function is
 *   held only by what it makes.
 */
export function runGenerated(
  source: string,
  filename: string,
  options: { cachedData?: Buffer; produceCache?: boolean } = {},
): GeneratedRun {
  const { cachedData, produceCache = false } = options;
  const body = compileFunction(source, ['module', 'exports', 'require'], {
    filename,
    produceCachedData: produceCache,
    ...(cachedData === undefined ? {} : { cachedData }),
  });
  const module: { exports: unknown } = { exports: {} };
  Reflect.apply(body, undefined, [module, module.exports, require]);
  const codeCache: CodeCacheUse =
    cachedData === undefined ? undefined : body.cachedDataRejected === true ? 'rejected' : 'accepted';
  return { factory: module.exports, codeCache, producedCache: body.cachedData };
}

/** What the last load of the generated validator did with the code cache (tests read it). */
export let generatedCodeCache: CodeCacheUse;

/** The generated file's source and code cache: the single executable's assets, else the files next to this module. */
function generatedFiles(): { path: string; source: string; cachedData: Buffer | undefined } | undefined {
  // The release build puts both files in the executable under their own names (scripts/release/executables.mjs).
  if (isSingleExecutable())
    return {
      path: GENERATED_FILE,
      source: readAsset(GENERATED_FILE).toString('utf8'),
      cachedData: readAsset(GENERATED_CACHE_FILE),
    };
  let path: string;
  try {
    path = require.resolve(`./${GENERATED_FILE}`);
  } catch {
    return undefined;
  }
  let cachedData: Buffer | undefined;
  try {
    cachedData = readFileSync(require.resolve(`./${GENERATED_CACHE_FILE}`));
  } catch {
    // No code cache (a build from before it existed): V8 compiles the source.
    cachedData = undefined;
  }
  return { path, source: readFileSync(path, 'utf8'), cachedData };
}

/** The generated validator, when the build made one; else undefined. */
function generatedValidator(): ValidateFunction<ConfigFile> | undefined {
  const files = generatedFiles();
  if (files === undefined) return undefined;
  const { path, source, cachedData } = files;
  const { factory, codeCache } = runGenerated(source, path, cachedData === undefined ? {} : { cachedData });
  generatedCodeCache = codeCache;
  if (typeof factory !== 'function')
    throw new Error(`${path} does not export the validator factory: rebuild with npm run build`);
  return (factory as (fns: ValidatorFunctions) => ValidateFunction<ConfigFile>)(VALIDATOR_FUNCTIONS);
}

/** The validator compiled now, without the build's generated file. */
export function compileValidator(): ValidateFunction<ConfigFile> {
  return makeAjv(false).compile<ConfigFile>(ConfigFileSchema);
}

/**
 * The validator, held weakly: a service validates its config at start (and once more after
 * fetching secrets), then never again, so the validator (its code, its closure over the schema) is
 * left to the garbage collector after start instead of living as long as the process. While it is
 * alive (tests, `svc validate-config`, the second load at start) it is reused.
 */
let current: WeakRef<ValidateFunction<ConfigFile>> | undefined;

function configValidator(): ValidateFunction<ConfigFile> {
  const alive = current?.deref();
  if (alive !== undefined) return alive;
  const validate = generatedValidator() ?? compileValidator();
  current = new WeakRef(validate);
  return validate;
}

/** Validates and fills in defaults in place. */
export function validateConfigFile(
  data: unknown,
): { ok: true; value: ConfigFile } | { ok: false; errors: ErrorObject[] } {
  const validate = configValidator();
  if (validate(data)) return { ok: true, value: data };
  return { ok: false, errors: validate.errors ?? [] };
}

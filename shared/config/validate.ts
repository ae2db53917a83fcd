/**
 * The config validator: ajv over the TypeBox schema (schema.ts), with Svc's annotation keywords.
 *
 * A service does not compile it at start: `npm run build` generates its code once
 * (validator-source.ts, scripts/build-config-validator.mjs) into
 * dist/shared/config/config-validator.generated.cjs, from the same schema and the same ajv options,
 * and a start loads that file. Compiling at start cost ≈ 0.3 s of CPU and ≈ 30 MB more peak RSS
 * (ajv's schema environments and code generation for the whole config schema, bench/memory.mjs),
 * and kept ajv's compiler among the modules of every start. Where no generated file is next to
 * this module (the sources run by vitest) the validator is compiled at run time with `makeAjv`,
 * the function the generator uses; test/shared/config/validator.test.ts checks that both agree.
 */
import { isIP } from 'node:net';
import { createRequire } from 'node:module';
import type * as AjvModule from 'ajv';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import type { KeywordCxt } from 'ajv/dist/compile/validate/index.js';
import later from '@breejs/later';
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
  for (const keyword of ['x-gate', 'x-only-when', 'x-secret', 'x-secret-values', 'x-expect', 'x-required']) ajv.addKeyword({ keyword });
  // A `code` keyword, not a `validate` function: generated code can call a function only by a name
  // in its scope (the `code` of a scope value), which ajv has no way to give a `validate` keyword.
  ajv.addKeyword({
    keyword: 'x-schedule',
    type: 'string',
    schemaType: 'boolean',
    code(cxt: KeywordCxt) {
      const { gen, data } = cxt;
      const at = gen.scopeValue('func', { ref: VALIDATOR_FUNCTIONS.scheduleErrorPosition, code: _`${fns}.scheduleErrorPosition` });
      const position = gen.const('position', _`${at}(${data})`);
      cxt.setParams({ position });
      cxt.fail(_`${position} !== -1`);
    },
    error: {
      message: ({ gen, data, params }) => {
        const say = gen.scopeValue('func', { ref: VALIDATOR_FUNCTIONS.scheduleMessage, code: _`${fns}.scheduleMessage` });
        return _`${say}(${data}, ${params['position'] ?? -1})`;
      },
      params: ({ params }) => _`{position: ${params['position'] ?? -1}}`,
    },
  });
  return ajv;
}

/** The generated file, built by scripts/build-config-validator.mjs next to this module in dist/. */
export const GENERATED_FILE = 'config-validator.generated.cjs';

/** The generated validator, when the build made one; else undefined. */
function generatedValidator(): ValidateFunction<ConfigFile> | undefined {
  let path: string;
  try {
    path = require.resolve(`./${GENERATED_FILE}`);
  } catch {
    return undefined;
  }
  const factory: unknown = require(path);
  // Out of the require cache at once: the factory (and its ≈ 1 MB of code) is then held only by
  // the validator it makes, which is held weakly (below).
  Reflect.deleteProperty(require.cache, path);
  if (typeof factory !== 'function') throw new Error(`${path} does not export the validator factory: rebuild with npm run build`);
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
export function validateConfigFile(data: unknown): { ok: true; value: ConfigFile } | { ok: false; errors: ErrorObject[] } {
  const validate = configValidator();
  if (validate(data)) return { ok: true, value: data };
  return { ok: false, errors: validate.errors ?? [] };
}

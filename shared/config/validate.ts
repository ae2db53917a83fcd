/** The compiled config validator: ajv over the TypeBox schema, with Svc's annotation keywords. */
import { isIP } from 'node:net';
import { Ajv, type ErrorObject, type SchemaValidateFunction, type ValidateFunction } from 'ajv';
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

/**
 * `code.optimize: false`: ajv's optimisation passes over the generated code (≈ 0.9 MB of it for the
 * whole config schema) cost more than they save for a validator that runs once or twice: without
 * them the compile takes ≈ 40 % less time and ≈ 9 MB less peak memory at start (bench/memory.mjs),
 * and validates the same (the passes only drop unused names and inline constants).
 */
function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, verbose: true, strict: true, strictRequired: false, code: { optimize: false } });
  ajv.addFormat('ip', (value: string) => isIP(value) !== 0);
  for (const keyword of ['x-gate', 'x-only-when', 'x-secret', 'x-secret-values', 'x-expect', 'x-required']) ajv.addKeyword({ keyword });
  const validateSchedule: SchemaValidateFunction = (_schema: boolean, data: string) => {
    const position = scheduleErrorPosition(data);
    if (position === -1) return true;
    validateSchedule.errors = [
      { keyword: 'x-schedule', message: `cannot be parsed as a text schedule from position ${position} (${quote(data.slice(position, position + MAX_QUOTED_CHARS + 1))})`, params: { position } },
    ];
    return false;
  };
  ajv.addKeyword({ keyword: 'x-schedule', type: 'string', schemaType: 'boolean', errors: true, validate: validateSchedule });
  return ajv;
}

/**
 * The compiled validator, held weakly: a service validates its config at start (and once more after
 * fetching secrets), then never again, so the validator and its ajv instance (≈ 5 MB of heap: the
 * generated code and ajv's schema caches) are left to the garbage collector after start instead of
 * living as long as the process. While it is alive (tests, `svc validate-config`, the second load at
 * start) it is reused; after a collection it is compiled again (≈ 0.3 s).
 */
let compiled: WeakRef<ValidateFunction<ConfigFile>> | undefined;

function configValidator(): ValidateFunction<ConfigFile> {
  const alive = compiled?.deref();
  if (alive !== undefined) return alive;
  const validate = makeAjv().compile<ConfigFile>(ConfigFileSchema);
  compiled = new WeakRef(validate);
  return validate;
}

/** Validates and fills in defaults in place. */
export function validateConfigFile(data: unknown): { ok: true; value: ConfigFile } | { ok: false; errors: ErrorObject[] } {
  const validate = configValidator();
  if (validate(data)) return { ok: true, value: data };
  return { ok: false, errors: validate.errors ?? [] };
}

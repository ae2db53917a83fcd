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

function makeAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false, verbose: true, strict: true, strictRequired: false });
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

let compiled: ValidateFunction<ConfigFile> | undefined;

/** Validates and fills in defaults in place. */
export function validateConfigFile(data: unknown): { ok: true; value: ConfigFile } | { ok: false; errors: ErrorObject[] } {
  const validate = (compiled ??= makeAjv().compile<ConfigFile>(ConfigFileSchema));
  if (validate(data)) return { ok: true, value: data };
  return { ok: false, errors: validate.errors ?? [] };
}

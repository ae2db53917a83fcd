/**
 * The shape checks of the platform APIs' answers: one ajv validator per TypeBox schema, compiled
 * once. A body that fails is an InvalidResponseError (§10.9 category `invalid_response`) that says
 * where and what: `/mem/free must be number`. Only paths and the schema's words are quoted, never a
 * value of the body (see http.ts on why messages carry no response text).
 */
import { createRequire } from 'node:module';
import type { Static, TSchema } from '@sinclair/typebox';
import type * as AjvModule from 'ajv';
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { invalidBody, type JsonResponse } from './http.js';

const require = createRequire(import.meta.url);
let ajv: Ajv | undefined;

/**
 * ajv, made at the first check that runs: the pollers' modules are imported by every start (the
 * start-up checks of startup.ts use their helpers), but a start whose config runs no poller loads
 * neither ajv's compiler nor compiles a schema (`require`: a check runs synchronously).
 */
function pollerAjv(): Ajv {
  if (ajv === undefined) {
    const { Ajv: AjvClass } = require('ajv') as typeof AjvModule;
    ajv = new AjvClass({ allErrors: true, coerceTypes: false, strict: true, allowUnionTypes: true });
  }
  return ajv;
}

/** At most this many problems are named in one message. */
const SHOWN = 3;

/** `where what` for each of the first problems. */
export function describeProblems(errors: readonly ErrorObject[] | null | undefined): string {
  const all = errors ?? [];
  const texts = all.slice(0, SHOWN).map((e) => {
    const where = e.instancePath || '/';
    if (e.keyword === 'required') return `${where} must have property "${String(e.params['missingProperty'])}"`;
    return `${where} ${e.message ?? 'is invalid'}`;
  });
  const more = all.length > SHOWN ? ` and ${all.length - SHOWN} more` : '';
  return `${texts.join('; ') || 'does not have the expected shape'}${more}`;
}

/** A check of a value against `schema`: the value typed, or the problems in words. */
export function shapeCheck<S extends TSchema>(
  schema: S,
): (value: unknown) => { ok: true; value: Static<S> } | { ok: false; problem: string } {
  let validate: ValidateFunction<Static<S>> | undefined;
  return (value) => {
    // Compiled at the first body checked, once.
    validate ??= pollerAjv().compile<Static<S>>(schema);
    return validate(value) ? { ok: true, value } : { ok: false, problem: describeProblems(validate.errors) };
  };
}

/** A check of a response body: the body typed, or an InvalidResponseError naming the problems. */
export function bodyCheck<S extends TSchema>(
  schema: S,
  what: string,
): (response: JsonResponse, timeoutMs: number) => Static<S> {
  const check = shapeCheck(schema);
  return (response, timeoutMs) => {
    const result = check(response.body);
    if (!result.ok) throw invalidBody(response, `the body is not ${what}: ${result.problem}`, timeoutMs);
    return result.value;
  };
}

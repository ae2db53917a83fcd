/**
 * The shape checks of the platform APIs' answers: one ajv validator per TypeBox schema, compiled
 * once. A body that fails is an InvalidResponseError (§10.9 category `invalid_response`) that says
 * where and what: `/mem/free must be number`. Only paths and the schema's words are quoted, never a
 * value of the body (see http.ts on why messages carry no response text).
 */
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv, type ErrorObject } from 'ajv';
import { invalidBody, type JsonResponse } from './http.js';

const ajv = new Ajv({ allErrors: true, coerceTypes: false, strict: true, allowUnionTypes: true });

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
export function shapeCheck<S extends TSchema>(schema: S): (value: unknown) => { ok: true; value: Static<S> } | { ok: false; problem: string } {
  const validate = ajv.compile<Static<S>>(schema);
  return (value) => (validate(value) ? { ok: true, value } : { ok: false, problem: describeProblems(validate.errors) });
}

/** A check of a response body: the body typed, or an InvalidResponseError naming the problems. */
export function bodyCheck<S extends TSchema>(schema: S, what: string): (response: JsonResponse, timeoutMs: number) => Static<S> {
  const check = shapeCheck(schema);
  return (response, timeoutMs) => {
    const result = check(response.body);
    if (!result.ok) throw invalidBody(response, `the body is not ${what}: ${result.problem}`, timeoutMs);
    return result.value;
  };
}

/**
 * `${env:NAME}` values: the one syntax and the one conversion, shared by the YAML loader (load.ts)
 * and the functions' loader of the resolved config document (resolved-load.ts).
 */
import type { SchemaNode } from './walk.js';

/** A whole value `${env:NAME}`; the variable's name is the first group. */
export const ENV_REF = /^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$/;

/** The variable named by `${env:NAME}`, or undefined when `value` is not such a reference. */
export function envRefName(value: string): string | undefined {
  return ENV_REF.exec(value)?.[1];
}

/**
 * A variable's text as the key's schema wants it: a number or a boolean where the schema says so and
 * the text is one, else the text (validation then reports a wrong type against the key).
 */
export function convertForSchema(text: string, schema: SchemaNode | undefined): unknown {
  const type = schema?.type;
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text.trim());
  if (type === 'boolean' && /^(true|false)$/i.test(text.trim())) return text.trim().toLowerCase() === 'true';
  return text;
}

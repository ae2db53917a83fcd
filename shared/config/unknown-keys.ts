/**
 * Keys the schema does not know, anywhere in the file: a typo such as `enabel` in a section left
 * off leaves the section off, and since a disabled section's values are not checked (file convention
 * 4 of configuration-reference.md), nothing else would tell the operator. The loader reports an
 * unknown key inside a section in use as an error (the schema's); one inside a disabled section as a
 * warning, with the closest known key.
 */
import { isRecord } from '../util/records.js';
import { closest } from './closest.js';
import type { PathSegment, SchemaNode } from './walk.js';

/** A key the schema has no place for, and what it may have meant. */
export interface UnknownKey {
  /** The key's path, from the file's root (`Svc` first). */
  path: PathSegment[];
  /** The known key of that mapping closest to it, if one is close. */
  suggestion: string | undefined;
  /** The keys that mapping knows. */
  known: string[];
}

/** Every key of `data` (the whole file, before disabled sections are cut) that `schema` does not know, in file order. */
export function unknownKeys(data: unknown, schema: SchemaNode, path: PathSegment[] = []): UnknownKey[] {
  if (Array.isArray(data)) {
    const items = schema.items;
    return items ? data.flatMap((item: unknown, i) => unknownKeys(item, items, [...path, i])) : [];
  }
  if (!isRecord(data) || schema.properties === undefined) return [];
  const properties = schema.properties;
  const found: UnknownKey[] = [];
  for (const [key, value] of Object.entries(data)) {
    const child = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (child !== undefined) found.push(...unknownKeys(value, child, [...path, key]));
    else if (schema.additionalProperties === false && !matchesPattern(schema, key)) {
      const known = Object.keys(properties);
      found.push({ path: [...path, key], suggestion: closest(key, known), known });
    }
  }
  return found;
}

function matchesPattern(schema: SchemaNode, key: string): boolean {
  return Object.keys(schema.patternProperties ?? {}).some((pattern) => new RegExp(pattern, 'u').test(key));
}

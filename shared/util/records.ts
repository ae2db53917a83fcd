/** Reading untyped data (parsed JSON, YAML, free-form payloads) without casts. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` (object keys, array indexes), or undefined where the path leaves the data. */
export function getPath(data: unknown, path: readonly (string | number)[]): unknown {
  let cursor: unknown = data;
  for (const seg of path) {
    if (typeof seg === 'number') cursor = Array.isArray(cursor) ? cursor[seg] : undefined;
    else cursor = isRecord(cursor) ? cursor[seg] : undefined;
  }
  return cursor;
}

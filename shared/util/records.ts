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

/**
 * Sets the value at `path` (object keys, array indexes) where every step but the last exists;
 * returns whether it did (false where the path leaves the data).
 */
export function setPath(data: unknown, path: readonly (string | number)[], value: unknown): boolean {
  const last = path[path.length - 1];
  const parent = getPath(data, path.slice(0, -1));
  if (typeof last === 'number' && Array.isArray(parent) && last < parent.length) parent[last] = value;
  else if (typeof last === 'string' && isRecord(parent))
    Object.defineProperty(parent, last, { value, enumerable: true, writable: true, configurable: true });
  else return false;
  return true;
}

/** Which config values are secrets, derived from the schema's `x-secret` annotations. */

import { isRecord } from '../util/records.js';
import { ConfigFileSchema } from './schema.js';
import { childSchema, type PathSegment, type SchemaNode, visitSchema } from './walk.js';

const ROOT = ConfigFileSchema as SchemaNode;

/**
 * Secret keys whose name is too common to censor by name in log lines: `url` (the alert channels'
 * URLs, Svc.alerts.channels[].url) would hide every URL a log line carries, a poll's or a heartbeat's.
 * Their values are still scrubbed from every line, dump and view (secretValues).
 */
const COMMON_KEY_NAMES: ReadonlySet<string> = new Set(['url']);

/** Names of the keys that hold secrets anywhere in the config (apiToken, password, …), as log lines censor them by name. */
export const SECRET_KEYS: readonly string[] = (() => {
  const names = new Set<string>();
  visitSchema(ROOT, (node, path) => {
    const last = path[path.length - 1];
    if (node['x-secret'] && typeof last === 'string' && !COMMON_KEY_NAMES.has(last)) names.add(last);
  });
  return [...names].sort();
})();

/**
 * Whether the value at `path` (below the file's root, `Svc` first) is a secret: a key marked
 * `x-secret`, or any value inside a mapping marked `x-secret-values` (server headers).
 */
export function isSecretPath(path: readonly PathSegment[]): boolean {
  let node: SchemaNode | undefined = ROOT;
  for (const seg of path) {
    if (node === undefined) return false;
    if (node['x-secret'] || (node['x-secret-values'] && typeof seg === 'string')) return true;
    node = childSchema(node, seg);
  }
  return node?.['x-secret'] === true;
}

/**
 * Every secret value of a loaded config of at least `minLength` characters, longest first, so logs
 * and dumps can scrub them from free text. (Free-text scrubbing skips shorter ones by default: a
 * 2-character secret would be replaced inside ordinary words.)
 */
export function secretValues(config: unknown, minLength = 4): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, schema: SchemaNode | undefined): void => {
    if (schema === undefined) return;
    if (typeof value === 'string') {
      if (schema['x-secret'] && value.length >= minLength) found.add(value);
      return;
    }
    if (Array.isArray(value)) return value.forEach((item) => walk(item, schema.items));
    if (!isRecord(value)) return;
    for (const [key, child] of Object.entries(value)) {
      const sub = childSchema(schema, key);
      if (schema['x-secret-values'] && typeof child === 'string' && child.length >= minLength) found.add(child);
      walk(child, sub);
    }
  };
  walk({ Svc: config }, ROOT);
  return [...found].sort((a, b) => b.length - a.length);
}

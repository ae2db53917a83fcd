/** Which config values are secrets, derived from the schema's `x-secret` annotations. */
import { ConfigFileSchema } from './schema.js';
import { isRecord } from '../util/records.js';
import { visitSchema, type SchemaNode } from './walk.js';

const ROOT = ConfigFileSchema as SchemaNode;

/** Names of the keys that hold secrets anywhere in the config (apiToken, password, …). */
export const SECRET_KEYS: readonly string[] = (() => {
  const names = new Set<string>();
  visitSchema(ROOT, (node, path) => {
    const last = path[path.length - 1];
    if (node['x-secret'] && typeof last === 'string') names.add(last);
  });
  return [...names].sort();
})();

/** Every non-empty secret value of a loaded config, longest first, so logs and dumps can scrub them from free text. */
export function secretValues(config: unknown): string[] {
  const found = new Set<string>();
  const walk = (value: unknown, schema: SchemaNode | undefined): void => {
    if (schema === undefined) return;
    if (typeof value === 'string') {
      if (schema['x-secret'] && value.length >= 4) found.add(value);
      return;
    }
    if (Array.isArray(value)) return value.forEach((item) => walk(item, schema.items));
    if (!isRecord(value)) return;
    for (const [key, child] of Object.entries(value)) {
      const sub = schema.properties?.[key] ?? Object.values(schema.patternProperties ?? {})[0];
      if (schema['x-secret-values'] && typeof child === 'string' && child.length >= 4) found.add(child);
      walk(child, sub);
    }
  };
  walk({ Svc: config }, ROOT);
  return [...found].sort((a, b) => b.length - a.length);
}

/** Reading the config schema as plain JSON schema: sub-schemas by path, annotations, descriptions. */

import { isRecord } from '../util/records.js';

export type PathSegment = string | number;

/** The subset of JSON schema the config schema uses, read structurally. */
export interface SchemaNode {
  type?: string;
  description?: string;
  default?: unknown;
  enum?: readonly unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  minItems?: number;
  pattern?: string;
  format?: string;
  properties?: Record<string, SchemaNode>;
  patternProperties?: Record<string, SchemaNode>;
  additionalProperties?: boolean | SchemaNode;
  items?: SchemaNode;
  'x-gate'?: string[];
  'x-only-when'?: { key: string; value: unknown };
  'x-secret'?: boolean;
  'x-required'?: boolean;
  'x-secret-values'?: boolean;
  'x-schedule'?: boolean;
  'x-expect'?: string;
}

/** The schema of the value at `seg` inside a value that `node` governs, if any. */
export function childSchema(node: SchemaNode, seg: PathSegment): SchemaNode | undefined {
  if (typeof seg === 'number') return node.items;
  return node.properties?.[seg] ?? Object.values(node.patternProperties ?? {})[0];
}

/** The schema that governs the value at `path` below `root`, if any. */
export function schemaAt(root: SchemaNode, path: readonly PathSegment[]): SchemaNode | undefined {
  let node: SchemaNode | undefined = root;
  for (const seg of path) {
    if (node === undefined) return undefined;
    node = childSchema(node, seg);
  }
  return node;
}

/** `Svc.serversToMonitor.servers[0].host` */
export function displayPath(path: readonly PathSegment[]): string {
  return path.reduce<string>(
    (acc, seg) => (typeof seg === 'number' ? `${acc}[${seg}]` : acc === '' ? seg : `${acc}.${seg}`),
    '',
  );
}

/** Splits a JSON pointer (`/Svc/servers/0/host`) into segments; digits in arrays become numbers. */
export function pointerToPath(pointer: string, data: unknown): PathSegment[] {
  if (pointer === '') return [];
  const out: PathSegment[] = [];
  let cursor: unknown = data;
  for (const raw of pointer.slice(1).split('/')) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(cursor) && /^\d+$/.test(seg)) {
      out.push(Number(seg));
      cursor = cursor[Number(seg)];
    } else {
      out.push(seg);
      cursor = isRecord(cursor) ? cursor[seg] : undefined;
    }
  }
  return out;
}

/** Visits every schema node with its path; arrays are visited as `[]` (index -1). */
export function visitSchema(
  node: SchemaNode,
  visit: (node: SchemaNode, path: PathSegment[]) => void,
  path: PathSegment[] = [],
): void {
  visit(node, path);
  for (const [key, child] of Object.entries(node.properties ?? {})) visitSchema(child, visit, [...path, key]);
  for (const child of Object.values(node.patternProperties ?? {})) visitSchema(child, visit, [...path, '*']);
  if (node.items) visitSchema(node.items, visit, [...path, -1]);
}

/** Describes what a schema accepts, for docs and error messages: "an integer between 1 and 65535". */
export function describeSchema(node: SchemaNode): string {
  if (node['x-expect']) return node['x-expect'];
  if (node.enum) return `one of ${node.enum.map((v) => String(v)).join(', ')}`;
  switch (node.type) {
    case 'integer':
    case 'number': {
      const noun = node.type === 'integer' ? 'an integer' : 'a number';
      if (node.minimum !== undefined && node.maximum !== undefined)
        return `${noun} between ${node.minimum} and ${node.maximum}`;
      if (node.minimum !== undefined) return `${noun} of at least ${node.minimum}`;
      return noun;
    }
    case 'boolean':
      return 'true or false';
    case 'string':
      if (node.format === 'uri') return 'an absolute URL';
      return node.minLength ? 'a non-empty string' : 'a string';
    case 'array': {
      const list = node.minItems ? `a list of at least ${node.minItems} item${node.minItems > 1 ? 's' : ''}` : 'a list';
      return node.items && node.items.type !== 'object' ? `${list}, each ${describeSchema(node.items)}` : list;
    }
    case 'object':
      return node.properties ? 'a section (key: value settings)' : 'a mapping of names to text values';
    default:
      return 'a valid value';
  }
}

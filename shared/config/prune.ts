/**
 * Settings of a disabled feature are neither validated nor used (configuration-reference.md, file
 * convention 4). Before validation every disabled section is cut down to its switches; validation
 * then fills in the defaults, and problems reported inside a disabled section are dropped.
 */
import { getPath, isRecord } from '../util/records.js';
import type { PathSegment, SchemaNode } from './walk.js';

function switchValue(section: Record<string, unknown>, schema: SchemaNode, relPath: string): unknown {
  const segs = relPath.split('.');
  const given = getPath(section, segs);
  if (given !== undefined) return given;
  let node: SchemaNode | undefined = schema;
  for (const seg of segs) node = node?.properties?.[seg];
  return node?.default;
}

/** Copies the values at `relPaths` (and only those) out of `section`. */
function keepOnly(section: Record<string, unknown>, relPaths: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const rel of relPaths) {
    const segs = rel.split('.');
    const value = getPath(section, segs);
    if (value === undefined) continue;
    let target = out;
    for (const seg of segs.slice(0, -1)) {
      const next = isRecord(target[seg]) ? target[seg] : {};
      target[seg] = next;
      target = next;
    }
    target[segs[segs.length - 1] ?? ''] = value;
  }
  return out;
}

/**
 * Cuts disabled sections of `data` (mutated) down to their switches. Returns the paths of the
 * disabled sections; a problem under one of them (other than at a switch) is not reported.
 */
export function pruneDisabled(data: unknown, schema: SchemaNode, path: PathSegment[] = []): PathSegment[][] {
  const disabled: PathSegment[][] = [];
  if (Array.isArray(data) && schema.items) {
    data.forEach((item, i) => disabled.push(...pruneDisabled(item, schema.items as SchemaNode, [...path, i])));
    return disabled;
  }
  if (!isRecord(data) || !schema.properties) return disabled;
  const gate = schema['x-gate'];
  if (gate && !gate.some((rel) => switchValue(data, schema, rel) === true)) {
    const kept = keepOnly(data, gate);
    for (const key of Object.keys(data)) delete data[key];
    Object.assign(data, kept);
    disabled.push(path);
    return disabled;
  }
  for (const [key, child] of Object.entries(schema.properties)) {
    const onlyWhen = child['x-only-when'];
    if (onlyWhen && switchValue(data, schema, onlyWhen.key) !== onlyWhen.value) {
      delete data[key];
      disabled.push([...path, key]);
      continue;
    }
    // An absent section is an empty one: its defaults apply, and so does its switch.
    if (data[key] === undefined && child.type === 'object' && child.properties) data[key] = {};
    if (data[key] !== undefined) disabled.push(...pruneDisabled(data[key], child, [...path, key]));
  }
  return disabled;
}

/**
 * Paths of the `x-required` strings left empty in the sections that are in use. The walk goes top
 * down and stops at a disabled section, so one lookup per node (not one per disabled section)
 * decides: linear however many list items were disabled.
 */
export function emptyRequired(data: unknown, schema: SchemaNode, disabled: readonly PathSegment[][]): PathSegment[][] {
  const skip = new Set(disabled.map((path) => JSON.stringify(path)));
  const out: PathSegment[][] = [];
  const walk = (value: unknown, node: SchemaNode, path: PathSegment[]): void => {
    if (skip.has(JSON.stringify(path))) return;
    if (node['x-required'] && value === '') out.push(path);
    else if (Array.isArray(value) && node.items) {
      const items = node.items;
      value.forEach((item, i) => walk(item, items, [...path, i]));
    } else if (isRecord(value) && node.properties) {
      for (const [key, child] of Object.entries(node.properties)) walk(value[key], child, [...path, key]);
    }
  };
  walk(data, schema, []);
  return out;
}

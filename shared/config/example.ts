/**
 * Renders config/full.yaml from the schema: every key with its default and a comment, lists empty
 * with a commented example item. A test fails when the file is stale.
 */
import { stringify } from 'yaml';
import { notBuiltFeature } from './rules.js';
import { ConfigFileSchema } from './schema.js';
import { describeSchema, type SchemaNode } from './walk.js';

const ROOT = (ConfigFileSchema as SchemaNode).properties?.['Svc'] as SchemaNode;

function scalar(value: unknown): string {
  return stringify(value, { lineWidth: 0 }).trimEnd();
}

/** A plausible value for a list: the schema's `examples`, or one item built from its item schema. */
function exampleList(list: SchemaNode & { examples?: unknown[] }): unknown[] {
  const given = list.examples?.[0];
  return Array.isArray(given) ? given : [exampleItem(list.items)];
}

function exampleItem(item: SchemaNode | undefined): unknown {
  if (!item) return '';
  if (item.type === 'object' && item.properties) {
    const out: Record<string, unknown> = {};
    for (const [key, prop] of Object.entries(item.properties)) {
      out[key] =
        prop.default !== undefined
          ? prop.default
          : prop.type === 'array'
            ? []
            : prop.type === 'string'
              ? `<${key}>`
              : prop.type === 'boolean'
                ? false
                : 0;
    }
    return out;
  }
  return item.type === 'string' ? '<value>' : 0;
}

function comment(node: SchemaNode, indent: string, path: readonly string[]): string[] {
  const parts = [node.description ?? ''];
  const notBuilt = notBuiltFeature(path);
  if (notBuilt) parts.push(`not built yet (${notBuilt}): no effect`);
  if (node.type !== 'object') parts.push(`accepts ${describeSchema(node)}`);
  if (node['x-secret'])
    parts.push('secret: write ${env:NAME}, ${aws-secret:<name>} or ${aws-ssm:<parameter>} rather than the value');
  if (node['x-required']) parts.push('must be set when this section is used');
  if (node['x-only-when'])
    parts.push(`used only when ${node['x-only-when'].key} is ${String(node['x-only-when'].value)}`);
  return [`${indent}# ${parts.filter(Boolean).join('; ')}`];
}

function section(node: SchemaNode, indent: string, path: readonly string[] = []): string[] {
  const out: string[] = [];
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    out.push(...comment(child, indent, [...path, key]));
    if (child.type === 'object' && child.properties) {
      out.push(`${indent}${key}:`, ...section(child, `${indent}  `, [...path, key]));
    } else if (child.type === 'array') {
      out.push(`${indent}${key}: []`);
      const example = stringify({ [key]: exampleList(child) }, { lineWidth: 0 })
        .trimEnd()
        .split('\n');
      out.push(`${indent}# for example:`, ...example.map((line) => `${indent}#   ${line}`));
    } else if (child.type === 'object') {
      out.push(`${indent}${key}: {}`);
    } else {
      out.push(`${indent}${key}: ${scalar(child.default)}`);
    }
  }
  return out;
}

export function renderFullConfig(): string {
  return [
    '# Every Svc setting with its default and what it means. Generated from shared/config/schema.ts',
    '# by `npm run docs:config`; docs/configuration.md is the same reference as a table.',
    '# A real config file needs only the keys that differ from these defaults (`Svc: {}` is valid).',
    'Svc:',
    ...section(ROOT, '  '),
    '',
  ].join('\n');
}

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigDocs } from '../../../shared/config/docs.js';
import { ConfigFileSchema } from '../../../shared/config/schema.js';
import { visitSchema } from '../../../shared/config/walk.js';

describe('docs/configuration.md', () => {
  it('is generated from the schema and up to date (run `npm run docs:config` after changing the schema)', () => {
    expect(readFileSync(new URL('../../../docs/configuration.md', import.meta.url), 'utf8')).toBe(renderConfigDocs());
  });

  it('documents every leaf setting with its default', () => {
    const docs = renderConfigDocs();
    visitSchema(ConfigFileSchema, (node, path) => {
      if (path.length < 2 || path.includes('*') || node.type === 'object' || path[path.length - 1] === -1) return;
      const list = node.type === 'array' && node.items?.type === 'object' ? '[]' : '';
      const key = `${path.slice(1).map((seg) => (seg === -1 ? '[]' : String(seg))).join('.').replace(/\.\[\]/g, '[]')}${list}`;
      expect(docs, key).toContain(`| \`${key}\` |`);
      if (!path.includes(-1)) expect(node.description ?? '', `${key} has a description`).not.toBe('');
    });
  });
});

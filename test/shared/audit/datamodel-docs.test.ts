import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AUDIT_COLUMNS } from '../../../shared/audit/datamodel.js';
import { renderDataModelDocs } from '../../../shared/audit/datamodel-docs.js';

describe('docs/data-model.md', () => {
  it('is generated from the data model and up to date (run `npm run docs:config`)', () => {
    expect(readFileSync(new URL('../../../docs/data-model.md', import.meta.url), 'utf8')).toBe(renderDataModelDocs());
  });

  it('never uses one name as both a tag and a field', () => {
    const names = AUDIT_COLUMNS.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

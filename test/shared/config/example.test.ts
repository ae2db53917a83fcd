import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderFullConfig } from '../../../shared/config/example.js';
import { loadConfigFile } from '../../../shared/config/load.js';
import { ConfigFileSchema } from '../../../shared/config/schema.js';
import { visitSchema } from '../../../shared/config/walk.js';
import { getPath } from '../../../shared/util/records.js';

const fullYaml = new URL('../../../config/full.yaml', import.meta.url);

describe('config/full.yaml', () => {
  it('is generated from the schema and up to date (run `npm run docs:config` after changing the schema)', () => {
    expect(readFileSync(fullYaml, 'utf8')).toBe(renderFullConfig());
  });

  it('is a valid config file', () => {
    expect(loadConfigFile('config/full.yaml').config.logLevel).toBe('info');
  });

  it('holds every key of the schema, each with a comment line above it', () => {
    const text = readFileSync(fullYaml, 'utf8');
    const data: unknown = parse(text);
    const textLines = text.split('\n');
    visitSchema(ConfigFileSchema, (_node, path) => {
      if (path.length < 2 || path.some((seg) => typeof seg === 'number' || seg === '*')) return;
      expect(getPath(data, path), path.join('.')).not.toBeUndefined();
    });
    textLines.forEach((line, i) => {
      if (/^\s*[A-Za-z]\w*:/.test(line)) expect(textLines[i - 1] ?? '', `comment above line ${i + 1}`).toMatch(/^\s*#/);
    });
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderConfigDocs } from '../../../shared/config/docs.js';
import { MAX_PRINTED_ISSUES, MAX_QUOTED_CHARS } from '../../../shared/config/errors.js';
import { MAX_ALIAS_VALUES, MAX_CONFIG_BYTES, MAX_NESTING } from '../../../shared/config/read.js';
import { NOT_BUILT } from '../../../shared/config/rules.js';
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
      const key = `${path
        .slice(1)
        .map((seg) => (seg === -1 ? '[]' : String(seg)))
        .join('.')
        .replace(/\.\[\]/g, '[]')}${list}`;
      expect(docs, key).toContain(`| \`${key}\` |`);
      if (!path.includes(-1)) expect(node.description ?? '', `${key} has a description`).not.toBe('');
    });
  });
});

describe('README.md says what works today', () => {
  const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');
  /** The text from a heading line to the next heading of the same or a higher level. */
  const section = (heading: string): string => {
    const start = readme.indexOf(`\n${heading}\n`);
    expect(start, heading).toBeGreaterThan(-1);
    const level = heading.split(' ')[0] ?? '##';
    const rest = readme.slice(start + heading.length + 2);
    const end = rest.search(new RegExp(`^#{1,${level.length}} `, 'm'));
    return end === -1 ? rest : rest.slice(0, end);
  };

  it('lists under "Not built yet" exactly the keys of NOT_BUILT (building a feature removes both)', () => {
    const named = new Set([...section('### Not built yet').matchAll(/`(Svc\.[A-Za-z.]+)`/g)].map((m) => m[1]));
    expect(named).toEqual(new Set(NOT_BUILT.map(({ key }) => `Svc.${key.join('.')}`)));
  });

  it('claims the self-report features, the config view, the container health endpoint and forwarding to the cloud among what Svc does', () => {
    const claims = section('## What Svc is').split('### Not built yet')[0] ?? '';
    expect(claims).toContain('Today it:');
    for (const key of [
      'Svc.heartbeat',
      'Svc.uptimeMonitor',
      'Svc.systemInfo',
      'Svc.anonTelemetry',
      'Svc.configVisualisation',
      'Svc.containerHealthCheck',
      'Svc.cloud',
    ])
      expect(claims).toContain(`\`${key}\``);
  });

  it('states the limits the loader enforces', () => {
    const configuration = section('## Configuration');
    expect(configuration).toContain(`at most 1 MiB (${MAX_CONFIG_BYTES.toLocaleString('en-US')} bytes)`);
    expect(configuration).toContain(`at most ${MAX_ALIAS_VALUES.toLocaleString('en-US')} values`);
    expect(configuration).toContain(`nest at most ${MAX_NESTING} levels`);
    expect(configuration).toContain(`prints the first ${MAX_PRINTED_ISSUES} problems`);
    expect(configuration).toContain(`quotes at most ${MAX_QUOTED_CHARS} characters`);
  });
});

/** The field catalog: docs/alerts.md's table is the catalog, the health fields follow the metrics endpoint's list, links carry the labels. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIELDS, fieldSpec, pageLink } from '../../../../shared/alerts/rules/fields.js';
import { HEALTH_GAUGES } from '../../../../shared/platform/metrics-endpoint.js';

/** A row of the docs' table as the catalog writes it. */
function row(field: (typeof FIELDS)[number]): string {
  const page =
    field.page.query.length > 0
      ? `${field.page.path}?${field.page.query.map((q) => `${q}=…`).join('&')}`
      : field.page.path;
  return `| \`${field.name}\` | ${field.labels.join(', ')} | ${field.kind} | ${field.description} | \`${page}\` |`;
}

describe('the field catalog', () => {
  it('is the table of docs/alerts.md, row for row', () => {
    const docs = readFileSync(new URL('../../../../docs/alerts.md', import.meta.url), 'utf8');
    const table = docs.slice(docs.indexOf('| field | labels | kind | what it is | page |'));
    const rows = table.split('\n').slice(2);
    const end = rows.findIndex((line) => !line.startsWith('|'));
    expect(rows.slice(0, end)).toEqual(FIELDS.map(row));
  });

  it('has health.<name> for every health gauge of the metrics endpoint, reading the same value', () => {
    for (const gauge of HEALTH_GAUGES) {
      const spec = fieldSpec(`health.${gauge.name.slice('svc_'.length)}`);
      expect(spec?.labels).toEqual(['server']);
    }
    expect(fieldSpec('health.cpu_total')?.kind).toBe('gauge');
  });

  it('names each server by the label server, and no field twice', () => {
    const names = FIELDS.map((field) => field.name);
    expect(new Set(names).size).toBe(names.length);
    for (const field of FIELDS) {
      expect(field.labels).not.toContain('server_name');
      expect(field.labels).not.toContain('host');
    }
  });

  it('links to the page of the field with the labels it filters on', () => {
    expect(pageLink('server.up', { server: 'Node 2', alertname: 'serverDown' })).toBe('/servers?server=Node+2');
    expect(
      pageLink('logEvents', { source: 'engine', level: 'ERROR', server: 'Node1', category: 'qs_log_category=license' }),
    ).toBe('/logs?server=Node1&source=engine&level=ERROR&category=qs_log_category%3Dlicense');
    expect(pageLink('logEvents', { source: 'proxy', level: 'WARN' })).toBe('/logs?source=proxy&level=WARN');
    expect(pageLink('udp.dropped', { listener: 'log_events', reason: 'size' })).toBe('/status');
    expect(pageLink('no.such', {})).toBe('/alerts');
  });
});

/**
 * The Grafana dashboards in docs/grafana/ name only what Svc writes: every measurement, field and tag
 * an InfluxQL query of the InfluxDB dashboard names is in docs/data-model.md (read by the layout the
 * page states), and every metric the Prometheus dashboard names is on a running metrics endpoint.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string): unknown => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));

interface Panel {
  title?: string;
  type: string;
  targets?: { query?: string; expr?: string }[];
}

function panelsOf(dashboard: unknown): Panel[] {
  if (typeof dashboard !== 'object' || dashboard === null || !('panels' in dashboard) || !Array.isArray(dashboard.panels)) throw new Error('not a dashboard');
  return dashboard.panels as Panel[];
}

/** Measurement → its tags and fields, from docs/data-model.md (both of its table layouts). */
function documentedModel(): Map<string, { tags: Set<string>; fields: Set<string> }> {
  const text = readFileSync(new URL('../../docs/data-model.md', import.meta.url), 'utf8');
  const model = new Map<string, { tags: Set<string>; fields: Set<string> }>();
  // The audit measurement: `| `column` | tag | …` or `| `column` | field, <type> | …`.
  const audit = { tags: new Set<string>(), fields: new Set<string>() };
  for (const m of text.matchAll(/^\| `([a-z_]+)` \| (tag|field, [a-z]+)/gm)) (m[2] === 'tag' ? audit.tags : audit.fields).add(m[1] ?? '');
  model.set('audit_events', audit);
  // The platform measurements: a `### `name`[, `name`]` heading, then `| tag|field | `name` | … |` rows.
  for (const section of text.split(/^### /m).slice(1)) {
    const names = [...(section.split('\n')[0] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] ?? '');
    const entry = { tags: new Set<string>(), fields: new Set<string>() };
    for (const m of section.matchAll(/^\| (tag|field) \| `([A-Za-z_]+)` \|/gm)) (m[1] === 'tag' ? entry.tags : entry.fields).add(m[2] ?? '');
    for (const name of names) model.set(name, entry);
  }
  return model;
}

/** What one InfluxQL query names: its measurements, and the quoted identifiers of SELECT, WHERE and GROUP BY. */
function namesIn(query: string): { measurements: string[]; selected: string[]; conditions: string[]; groups: string[] } {
  const from = /\bFROM ((?:"[^"]+"(?:, )?)+)/.exec(query)?.[1] ?? '';
  const select = /^SELECT (.*?) FROM /.exec(query)?.[1] ?? '';
  const where = /\bWHERE (.*?)(?: GROUP BY | ORDER BY |$)/.exec(query)?.[1] ?? '';
  const group = /\bGROUP BY (.*?)(?: fill\(| ORDER BY |$)/.exec(query)?.[1] ?? '';
  const quoted = (text: string) => [...text.matchAll(/"([^"$]+)"/g)].map((m) => m[1] ?? '');
  // Aliases (`AS "name"`) are not names of the data.
  const unaliased = (text: string) => text.replace(/\bAS "[^"]+"/g, '');
  return { measurements: quoted(from), selected: quoted(unaliased(select)), conditions: quoted(where), groups: quoted(group) };
}

describe('the InfluxDB dashboard (docs/grafana/svc-influxdb.json)', () => {
  const model = documentedModel();
  const queries = panelsOf(read('docs/grafana/svc-influxdb.json')).flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title ?? '', query: t.query ?? '' })));

  it('has queries for health, sessions, user events, log events, engine performance, Svc itself and errors', () => {
    const measurements = new Set(queries.flatMap(({ query }) => namesIn(query).measurements));
    for (const m of ['cpu', 'mem', 'apps', 'session', 'users', 'cache', 'saturated', 'server_info', 'user_session_summary', 'user_events', 'log_event', 'rejected_event_count', 'event_count', 'log_events_queue', 'user_events_queue', 'svc_errors']) {
      expect(measurements, m).toContain(m);
    }
  });

  it('names only measurements, fields and tags that docs/data-model.md lists', () => {
    expect(model.size).toBeGreaterThan(15);
    for (const { panel, query } of queries) {
      const names = namesIn(query);
      expect(names.measurements.length, `${panel}: ${query}`).toBeGreaterThan(0);
      for (const measurement of names.measurements) {
        const documented = model.get(measurement);
        expect(documented, `${panel}: measurement ${measurement}`).toBeDefined();
        if (!documented) continue;
        for (const name of names.selected) expect(documented.fields.has(name) || documented.tags.has(name), `${panel}: ${measurement}.${name} (selected)`).toBe(true);
        for (const name of names.conditions) expect(documented.tags.has(name) || documented.fields.has(name), `${panel}: ${measurement}.${name} (where)`).toBe(true);
        for (const name of names.groups) expect(documented.tags.has(name), `${panel}: ${measurement}.${name} (group by: must be a tag)`).toBe(true);
      }
    }
  });

  it('is importable: a data source input, variables, and every panel on the InfluxQL data source', () => {
    const dashboard = read('docs/grafana/svc-influxdb.json') as { __inputs: { name: string; pluginId: string }[]; uid: string };
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_INFLUXDB', pluginId: 'influxdb' })]);
    expect(dashboard.uid).toBe('svc-influxdb');
    for (const panel of panelsOf(dashboard)) if (panel.type !== 'row') expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
  });
});

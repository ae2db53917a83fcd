/**
 * The Grafana dashboards in docs/grafana/ name only what Svc writes: every measurement, field and tag
 * an InfluxQL query of the InfluxDB dashboard names is in docs/data-model.md (read by the layout the
 * page states), and every metric the Prometheus dashboard names is on a running metrics endpoint.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Demo, startDemo } from '../support/demo.js';
import { sleep } from '../support/ports.js';
import { type Exposition, scrape } from '../support/prometheus.js';

const read = (path: string): unknown => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));

interface Panel {
  title?: string;
  type: string;
  targets?: { query?: string; expr?: string; legendFormat?: string }[];
}

function panelsOf(dashboard: unknown): Panel[] {
  if (
    typeof dashboard !== 'object' ||
    dashboard === null ||
    !('panels' in dashboard) ||
    !Array.isArray(dashboard.panels)
  )
    throw new Error('not a dashboard');
  return dashboard.panels as Panel[];
}

/** Measurement → its tags and fields, from docs/data-model.md (both of its table layouts). */
function documentedModel(): Map<string, { tags: Set<string>; fields: Set<string> }> {
  const text = readFileSync(new URL('../../docs/data-model.md', import.meta.url), 'utf8');
  const model = new Map<string, { tags: Set<string>; fields: Set<string> }>();
  // The audit measurement: `| `column` | tag | …` or `| `column` | field, <type> | …`.
  const audit = { tags: new Set<string>(), fields: new Set<string>() };
  for (const m of text.matchAll(/^\| `([a-z_]+)` \| (tag|field, [a-z]+)/gm))
    (m[2] === 'tag' ? audit.tags : audit.fields).add(m[1] ?? '');
  model.set('audit_events', audit);
  // The platform measurements: a `### `name`[, `name`]` heading, then `| tag|field | `name` | … |` rows.
  for (const section of text.split(/^### /m).slice(1)) {
    const names = [...(section.split('\n')[0] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1] ?? '');
    const entry = { tags: new Set<string>(), fields: new Set<string>() };
    for (const m of section.matchAll(/^\| (tag|field) \| `([A-Za-z_]+)` \|/gm))
      (m[1] === 'tag' ? entry.tags : entry.fields).add(m[2] ?? '');
    for (const name of names) model.set(name, entry);
  }
  return model;
}

/** What one InfluxQL query names: its measurements, and the quoted identifiers of SELECT, WHERE and GROUP BY. */
function namesIn(query: string): {
  measurements: string[];
  selected: string[];
  conditions: string[];
  groups: string[];
} {
  const from = /\bFROM ((?:"[^"]+"(?:, )?)+)/.exec(query)?.[1] ?? '';
  const select = /^SELECT (.*?) FROM /.exec(query)?.[1] ?? '';
  const where = /\bWHERE (.*?)(?: GROUP BY | ORDER BY |$)/.exec(query)?.[1] ?? '';
  const group = /\bGROUP BY (.*?)(?: fill\(| ORDER BY |$)/.exec(query)?.[1] ?? '';
  const quoted = (text: string) => [...text.matchAll(/"([^"$]+)"/g)].map((m) => m[1] ?? '');
  // Aliases (`AS "name"`) are not names of the data.
  const unaliased = (text: string) => text.replace(/\bAS "[^"]+"/g, '');
  return {
    measurements: quoted(from),
    selected: quoted(unaliased(select)),
    conditions: quoted(where),
    groups: quoted(group),
  };
}

describe('the InfluxDB dashboard (docs/grafana/svc-influxdb.json)', () => {
  const model = documentedModel();
  const queries = panelsOf(read('docs/grafana/svc-influxdb.json')).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: p.title ?? '', query: t.query ?? '' })),
  );

  it('has queries for health, sessions, user events, log events, engine performance, Svc itself and errors', () => {
    const measurements = new Set(queries.flatMap(({ query }) => namesIn(query).measurements));
    for (const m of [
      'cpu',
      'mem',
      'apps',
      'session',
      'users',
      'cache',
      'saturated',
      'server_info',
      'user_session_summary',
      'user_events',
      'log_event',
      'rejected_event_count',
      'event_count',
      'log_events_queue',
      'user_events_queue',
      'svc_errors',
    ]) {
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
        for (const name of names.selected)
          expect(
            documented.fields.has(name) || documented.tags.has(name),
            `${panel}: ${measurement}.${name} (selected)`,
          ).toBe(true);
        for (const name of names.conditions)
          expect(
            documented.tags.has(name) || documented.fields.has(name),
            `${panel}: ${measurement}.${name} (where)`,
          ).toBe(true);
        for (const name of names.groups)
          expect(documented.tags.has(name), `${panel}: ${measurement}.${name} (group by: must be a tag)`).toBe(true);
      }
    }
  });

  it('is importable: a data source input, variables, and every panel on the InfluxQL data source', () => {
    const dashboard = read('docs/grafana/svc-influxdb.json') as {
      __inputs: { name: string; pluginId: string }[];
      uid: string;
    };
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ name: 'DS_INFLUXDB', pluginId: 'influxdb' })]);
    expect(dashboard.uid).toBe('svc-influxdb');
    for (const panel of panelsOf(dashboard))
      if (panel.type !== 'row') expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
  });
});

describe('the Prometheus dashboard (docs/grafana/svc-prometheus.json)', () => {
  const targets = panelsOf(read('docs/grafana/svc-prometheus.json')).flatMap((p) =>
    (p.targets ?? []).map((t) => ({ panel: p.title ?? '', expr: t.expr ?? '', legend: t.legendFormat ?? '' })),
  );
  const metricsIn = (expr: string) => [...new Set([...expr.matchAll(/\b(svc_[a-z0-9_]+)/g)].map((m) => m[1] ?? ''))];
  let demo: Demo;
  let metrics: Exposition;

  // A running endpoint with something in every kind of series: `svc demo` with one server failing,
  // so the failure counters and the tracked errors have samples too.
  beforeAll(async () => {
    demo = await startDemo(['--servers', '3', '--fail', 'node3=http-500', '--report', '0']);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const scraped = await scrape(demo.metricsUrl);
      metrics = scraped.metrics;
      const ready =
        metrics.series('svc_cpu_total').length === 2 &&
        metrics.series('svc_errors_tracked_total').some((s) => s.value > 0) &&
        metrics.series('svc_udp_datagrams_received_total').length === 2;
      if (ready) break;
      if (Date.now() > deadline)
        throw new Error(`the demo's endpoint did not fill in 60 s:\n${scraped.body}\n${demo.output()}`);
      await sleep(250);
    }
  }, 90_000);

  afterAll(async () => {
    await demo.remove();
  });

  it('names only metrics that a running metrics endpoint serves (with HELP and TYPE)', () => {
    const named = new Set(targets.flatMap(({ expr }) => metricsIn(expr)));
    expect(named.size).toBeGreaterThan(20);
    for (const name of named) {
      expect(metrics.help.has(name), `${name} is not on the endpoint`).toBe(true);
      expect(metrics.type.has(name), name).toBe(true);
    }
  });

  it('shows in its legends only labels that the series of its metrics carry', () => {
    let checked = 0;
    for (const { panel, expr, legend } of targets) {
      const labels = [...legend.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1] ?? '');
      const series = metricsIn(expr).flatMap((name) => metrics.series(name));
      // A counter with no sample yet (no datagram dropped) has no labels to check.
      if (labels.length === 0 || series.length === 0) continue;
      checked += 1;
      for (const label of labels)
        expect(
          series.some((s) => label in s.labels),
          `${panel}: {{${label}}} in ${expr}`,
        ).toBe(true);
    }
    expect(checked).toBeGreaterThan(15);
  });

  it('has a server variable over the servers the endpoint reports', () => {
    const dashboard = read('docs/grafana/svc-prometheus.json') as {
      templating: { list: { name: string; query: unknown }[] };
      __inputs: { pluginId: string }[];
    };
    expect(dashboard.__inputs).toEqual([expect.objectContaining({ pluginId: 'prometheus' })]);
    const server = dashboard.templating.list.find((v) => v.name === 'server');
    expect(JSON.stringify(server?.query)).toContain('label_values(svc_cpu_total, server_name)');
    expect(new Set(metrics.series('svc_cpu_total').map((s) => s.labels['server_name']))).toEqual(
      new Set(['node1', 'node2']),
    );
  });
});

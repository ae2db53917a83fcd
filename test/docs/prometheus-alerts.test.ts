/**
 * docs/prometheus/alerts.yml, Svc's built-in alert pack as Prometheus alerting rules: Debian's
 * promtool checks it and runs its unit tests (docs/prometheus/alerts.test.yml), and what the rules
 * and the unit tests' input series name is on a real metrics endpoint: every metric, every label
 * (with the same label set for an input series), and the values the rules select on. So the rules
 * cannot drift from the endpoint, and every alert about a server carries `server`.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { captureLog } from '../support/audit.js';
import { type MetricsRig, RIG_SERVER, startMetricsRig } from '../support/metrics-rig.js';
import { findExecutable, trackChild } from '../support/ports.js';
import { type Exposition, scrape } from '../support/prometheus.js';

const REPOSITORY = fileURLToPath(new URL('../../', import.meta.url));
const RULES = 'docs/prometheus/alerts.yml';
const UNIT_TESTS = 'docs/prometheus/alerts.test.yml';

/** The alerts of the issue (docs/prometheus/README.md's table), in the file's order. */
const BUILT_IN = [
  'serverDown',
  'engineMemoryHigh',
  'engineCpuHigh',
  'sessionsDroppedToZero',
  'errorLogRise',
  'udpDatagramsDropped',
  'destinationFailing',
  'queueBackingUp',
  'deadLetters',
  'clientCertificateExpiring',
];

/** Runs promtool in the repository; its exit code and output. */
async function promtool(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  const child = trackChild(spawn(findExecutable('promtool'), args, { cwd: REPOSITORY }));
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  return { code, output };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function recordAt(value: unknown, where: string): Record<string, unknown> {
  if (!isRecord(value)) throw new Error(`${where} is not a mapping`);
  return value;
}

function listAt(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${where} is not a list`);
  return value;
}

function textAt(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new Error(`${where} is not a string`);
  return value;
}

interface Rule {
  alert: string;
  expr: string;
  labels: Record<string, unknown>;
  annotations: Record<string, unknown>;
}

function readYaml(path: string): unknown {
  return parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'));
}

function rulesOf(document: unknown): Rule[] {
  const groups = listAt(recordAt(document, RULES)['groups'], `${RULES} groups`);
  return groups.flatMap((group, g) =>
    listAt(recordAt(group, `group ${g}`)['rules'], `group ${g} rules`).map((value, r) => {
      const rule = recordAt(value, `rule ${r}`);
      return {
        alert: textAt(rule['alert'], `rule ${r} alert`),
        expr: textAt(rule['expr'], `rule ${r} expr`),
        labels: recordAt(rule['labels'], `rule ${r} labels`),
        annotations: recordAt(rule['annotations'], `rule ${r} annotations`),
      };
    }),
  );
}

interface Selector {
  name: string;
  matchers: { label: string; op: string; value: string }[];
}

/** The metric selectors of a PromQL expression (Svc's metrics all start with `svc_`). */
function selectorsIn(expr: string): Selector[] {
  return [...expr.matchAll(/\b(svc_[a-z_]+)(?:\{([^}]*)\})?/g)].map((m) => ({
    name: m[1] ?? '',
    matchers: [...(m[2] ?? '').matchAll(/([a-z_]+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)].map((l) => ({
      label: l[1] ?? '',
      op: l[2] ?? '',
      value: l[3] ?? '',
    })),
  }));
}

/** Label names a rule reads beside its selectors: on()/by() lists, label_replace sources, annotation templates. */
function labelsReadBy(rule: Rule): string[] {
  const grouped = [...rule.expr.matchAll(/\b(?:on|by|ignoring|without)\s*\(([^)]*)\)/g)].flatMap((m) =>
    (m[1] ?? '').split(',').map((l) => l.trim()),
  );
  const replaced = [...rule.expr.matchAll(/"[a-z_]+",\s*"\$1",\s*"([a-z_]+)"/g)].map((m) => m[1] ?? '');
  const templated = Object.values(rule.annotations).flatMap((text) =>
    [...String(text).matchAll(/\$labels\.([a-z_]+)/g)].map((m) => m[1] ?? ''),
  );
  return [...grouped, ...replaced, ...templated].filter((l) => l !== '');
}

/** The labels label_replace adds (its destination). */
const labelsAddedBy = (rule: Rule): string[] =>
  [...rule.expr.matchAll(/label_replace\([\s\S]*?"([a-z_]+)",\s*"\$1"/g)].map((m) => m[1] ?? '');

/** The label names of a metric on the endpoint (all its samples have the same set). */
function labelNamesOf(metrics: Exposition, name: string): string[] {
  const sets = new Set(metrics.series(name).map((s) => Object.keys(s.labels).sort().join(',')));
  expect([...sets], `${name}: one label set`).toHaveLength(1);
  return ([...sets][0] ?? '').split(',').filter((l) => l !== '');
}

let rig: MetricsRig;
let metrics: Exposition;

beforeAll(async () => {
  const log = await captureLog('debug');
  rig = await startMetricsRig(log.logger);
  // A polled server and a session sample, as the pollers give them: the polled gauges are there.
  rig.pollSink.health(
    {
      serverName: RIG_SERVER.server_name,
      tags: RIG_SERVER,
      uptime: '',
      body: {
        version: '12.1306.0',
        started: '20240312T081512.000+0100',
        mem: { committed: 2048, allocated: 4096, free: 8192 },
        apps: { active_docs: [], in_memory_docs: [], loaded_docs: [], calls: 0, selections: 0 },
        cpu: { total: 7.5 },
        session: { active: 1, total: 2 },
        users: { active: 1, total: 2 },
        cache: { hits: 0, lookups: 0, added: 0, replaced: 0, bytes_added: 0 },
        saturated: false,
      },
    },
    Date.now(),
  );
  ({ metrics } = await scrape(rig.url));
});

afterAll(async () => {
  await rig?.stop();
});

describe('docs/prometheus/alerts.yml', () => {
  it('passes promtool check rules', async () => {
    const { code, output } = await promtool(['check', 'rules', RULES]);
    expect(code, output).toBe(0);
    expect(output).toContain('SUCCESS: 11 rules found');
  });

  it('passes promtool test rules: each alert quiet before its for, firing after, with server where it should, and resolved', async () => {
    const { code, output } = await promtool(['test', 'rules', UNIT_TESTS]);
    expect(code, output).toBe(0);
    expect(output).toContain('SUCCESS');
  });

  it('holds one rule per built-in alert of group svc, each with severity, summary and description', () => {
    const document = readYaml(RULES);
    const groups = listAt(recordAt(document, RULES)['groups'], 'groups');
    expect(groups.map((g) => recordAt(g, 'group')['name'])).toEqual(['svc']);
    const rules = rulesOf(document);
    expect([...new Set(rules.map((r) => r.alert))]).toEqual(BUILT_IN);
    for (const rule of rules) {
      expect(['warning', 'critical'], rule.alert).toContain(rule.labels['severity']);
      expect(Object.keys(rule.annotations).sort(), rule.alert).toEqual(['description', 'summary']);
    }
  });

  it('names only metrics, labels and label values of the real endpoint; an alert about a server carries server', () => {
    for (const rule of rulesOf(readYaml(RULES))) {
      const selectors = selectorsIn(rule.expr);
      expect(selectors.length, rule.alert).toBeGreaterThan(0);
      const known = new Set(labelsAddedBy(rule));
      for (const { name, matchers } of selectors) {
        expect(metrics.type.get(name), `${rule.alert}: ${name} on the endpoint`).toBeDefined();
        const names = labelNamesOf(metrics, name);
        for (const label of names) known.add(label);
        for (const { label, op, value } of matchers) {
          expect(names, `${rule.alert}: ${name} has ${label}`).toContain(label);
          const values = new Set(metrics.series(name).map((s) => s.labels[label]));
          // An equality or an alternation of plain values: each one is a value the endpoint shows.
          const wanted = op === '=' ? [value] : op === '=~' ? value.split('|') : [];
          for (const v of wanted) expect([...values], `${rule.alert}: ${name}{${label}="${v}"}`).toContain(v);
        }
      }
      for (const label of labelsReadBy(rule)) expect([...known], `${rule.alert} reads ${label}`).toContain(label);
      // About a server: its metrics carry server_name, so it must add server and name it in its summary.
      if (selectors.some(({ name }) => labelNamesOf(metrics, name).includes('server_name'))) {
        expect(labelsAddedBy(rule), rule.alert).toContain('server');
        expect(String(rule.annotations['summary']), rule.alert).toContain('{{ $labels.server }}');
      }
    }
  });

  it("feeds the unit tests series shaped like the endpoint's: its metric names and label sets", () => {
    const tests = listAt(recordAt(readYaml(UNIT_TESTS), UNIT_TESTS)['tests'], 'tests');
    const series = tests.flatMap((test, t) =>
      listAt(recordAt(test, `test ${t}`)['input_series'], `test ${t} input_series`).map((s) =>
        textAt(recordAt(s, 'input series')['series'], `test ${t} series`),
      ),
    );
    expect(series.length).toBeGreaterThan(BUILT_IN.length);
    // Labels whose values the endpoint fixes (the others name servers, queues and destinations of a config).
    const enumerated = ['kind', 'listener', 'reason', 'source', 'level'];
    for (const text of series) {
      const [selector] = selectorsIn(text);
      if (!selector) throw new Error(`no Svc metric in ${text}`);
      expect(
        selector.matchers.map((m) => m.label).sort(),
        `${text}: the label set of ${selector.name} on the endpoint`,
      ).toEqual(labelNamesOf(metrics, selector.name).sort());
      for (const { label, value } of selector.matchers.filter((m) => enumerated.includes(m.label)))
        expect(
          metrics.series(selector.name).map((s) => s.labels[label]),
          `${text}: ${label}="${value}"`,
        ).toContain(value);
    }
  });
});

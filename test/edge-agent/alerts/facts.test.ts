/**
 * The alert facts over real parts: a real UDP log-event listener fed real log datagrams counts
 * `logEvents` by source, level, server (the configured name of the host) and category, without
 * changing the metrics endpoint's counts per source and level; the pollers run against the
 * platform simulator over mutual TLS, and their PollSink gives `server.up` 1, then 0 (and a failed
 * poll) when the simulator's failure switch fails a server, then 1 again when it heals. The
 * evaluator on top fires and resolves serverDown from these facts (times passed in, no waiting for
 * `for`), and an operator's rule on ERROR log events fires with a link to the log page.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AlertFacts, AlertPollSink } from '../../../edge-agent/alerts/facts.js';
import { Observed } from '../../../edge-agent/endpoints/observed.js';
import { type PlatformSimulator, startPlatformSimulator } from '../../../edge-agent/simulate/platform/server.js';
import { healthPoller } from '../../../edge-agent/sources/platform/health.js';
import { sessionPoller } from '../../../edge-agent/sources/platform/sessions.js';
import { polledServers } from '../../../edge-agent/sources/platform/startup.js';
import { loadClientTls } from '../../../edge-agent/sources/platform/tls.js';
import { LogLevelCounts, OTHER } from '../../../edge-agent/sources/udp/log-levels.js';
import type { AlertRecord, FactSample } from '../../../shared/alerts/model.js';
import { ruleDefinitions } from '../../../shared/alerts/rules/definitions.js';
import { Evaluator } from '../../../shared/alerts/rules/evaluator.js';
import { FIELD_NAMES } from '../../../shared/alerts/rules/fields.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { alertsConfig } from '../../shared/alerts/rules/support.js';
import { captureLog } from '../../support/audit.js';
import { silentLog } from '../../support/log.js';
import { logListener } from '../../support/metrics-rig.js';
import { LOOPBACK } from '../../support/ports.js';
import { eventually, sendDatagrams, svcConfig } from '../../support/udp.js';
import { LOG_ENGINE, LOG_PROXY, LOG_REPOSITORY, withField } from '../sources/udp/parse/fixtures.js';

const MINUTE = 60_000;
const valueOf = (samples: readonly FactSample[], labels: Record<string, string>): number | undefined =>
  samples.find((s) => Object.entries(labels).every(([name, value]) => s.labels[name] === value))?.value;

describe('logEvents from a real UDP listener', () => {
  const started: Component[] = [];
  afterAll(async () => {
    for (const component of started.reverse()) await component.stop();
  });

  it('counts by source, level, server and category; the metrics counts stay per source and level', async () => {
    const config = svcConfig([
      '  serversToMonitor:',
      '    servers:',
      '      - {host: plat-n1.lab.local, serverName: Node1, serverDescription: Central}',
      '  logEvents:',
      '    source: {engine: {enable: true}, proxy: {enable: true}, repository: {enable: true}}',
      `    udpServerConfig: {serverHost: ${LOOPBACK}}`,
      '    categorise:',
      '      enable: true',
      '      rules:',
      '        - {logLevel: [warn, error], action: categorise, category: [{name: qs_log_category, value: license}], filter: [{type: so, value: license}]}',
      '        - {logLevel: [warn], action: categorise, category: [{name: access, value: denied}], filter: [{type: so, value: denied}]}',
    ]);
    const errors = new ErrorTracker({ enabled: true, log: silentLog });
    const levels = new LogLevelCounts(config.serversToMonitor.servers);
    const listener = logListener(config, (await captureLog('info')).logger, errors, levels);
    await listener.start();
    started.push(listener);
    const observed = new Observed();
    observed.listener(listener);
    observed.logEvents = levels;
    const facts = new AlertFacts({ observed, errors, polls: new AlertPollSink() });
    const evaluator = new Evaluator(
      ruleDefinitions(
        alertsConfig(
          'rules:',
          '  - name: repositoryErrors',
          '    expr: {field: logEvents, where: {level: ERROR|FATAL, source: repository}, by: [server, source, level], aggregate: increase, window: 5m, op: ">=", threshold: 2}',
          '    summary: "{{value}} ERROR events from the {{source}} of {{server}}"',
        ),
      ),
      [],
      { startedAt: Date.now() },
    );
    const t0 = Date.now();
    evaluator.evaluate(facts.at(t0));

    // The host field (5) is PLAT-N1 in the fixtures: the configured plat-n1.lab.local is another host.
    await sendDatagrams(listener.port, [
      withField(LOG_ENGINE, 5, 'plat-n1.lab.local'),
      withField(LOG_ENGINE, 5, 'PLAT-N9'),
      withField(LOG_PROXY, 5, 'PLAT-N1.lab.local:4747'),
      withField(LOG_REPOSITORY, 5, 'plat-n1.lab.local'),
      withField(LOG_REPOSITORY, 5, 'plat-n1.lab.local'),
    ]);
    await eventually(() => listener.totals().processed === 5, 5_000, 'five datagrams handled');

    const samples = facts.at(t0 + MINUTE).samples('logEvents');
    expect(
      samples
        .map(({ labels, value }) => `${labels.source} ${labels.level} ${labels.server} "${labels.category}" ${value}`)
        .sort(),
    ).toEqual([
      'engine WARN Node1 "" 1',
      'engine WARN PLAT-N9 "" 1',
      'proxy WARN Node1 "access=denied" 1',
      'proxy WARN Node1 "qs_log_category=license" 1',
      'repository ERROR Node1 "" 2',
    ]);
    // The metrics endpoint's counts: one event per datagram, whatever its categories.
    const perLevel = [...levels.counts()].filter((c) => c.events > 0).map((c) => `${c.source} ${c.level} ${c.events}`);
    expect(perLevel.sort()).toEqual(['engine WARN 2', 'proxy WARN 1', 'repository ERROR 2']);

    const { transitions } = evaluator.evaluate(facts.at(t0 + MINUTE));
    expect(transitions.fired.map((a) => [a.rule, a.summary, a.link])).toEqual([
      [
        'repositoryErrors',
        '2 ERROR events from the repository of Node1',
        '/logs?server=Node1&source=repository&level=ERROR',
      ],
    ]);
  });

  it('counts the pairs of server and category past its cap under other', () => {
    const levels = new LogLevelCounts([], 2);
    for (const host of ['a', 'b', 'c', 'd']) levels.count('qseow-engine', 'ERROR', host);
    levels.count('qseow-engine', 'WARN', 'a');
    expect([...levels.details()].map((c) => [c.level, c.server, c.category, c.events])).toEqual([
      ['ERROR', 'a', '', 1],
      ['ERROR', 'b', '', 1],
      ['ERROR', OTHER, OTHER, 2],
      ['WARN', 'a', '', 1],
    ]);
  });
});

describe('the PollSink against the platform simulator', () => {
  let dir: string;
  let sim: PlatformSimulator;
  const started: Component[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'alert-facts-'));
    sim = await startPlatformSimulator({ servers: 2, stepMs: 0, seed: 31, certDir: join(dir, 'certs') });
  });
  afterAll(async () => {
    for (const component of started.reverse()) await component.stop();
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives server.up 1 once polled, 0 while the simulator fails the server, and 1 again when it heals', async () => {
    const { config } = parseConfigText(sim.configYaml, 'sim.yaml', {});
    const loaded = loadClientTls(config.cert, config.serversToMonitor.rejectUnauthorized, 'the test presents it');
    if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
    const errors = new ErrorTracker({ enabled: true, log: silentLog });
    const sink = new AlertPollSink(polledServers(config));
    const deps = { tls: loaded.tls, sink, errors, log: silentLog };
    const health = healthPoller({
      ...deps,
      settings: { ...config.serversToMonitor, pollingInterval: 200 },
      appNames: null,
    });
    const sessions = sessionPoller({
      ...deps,
      settings: { ...config.userSessions, pollingInterval: 200 },
      servers: config.serversToMonitor.servers,
    });
    const facts = new AlertFacts({ observed: new Observed(), errors, polls: sink });
    const [first, second] = sim.servers.map((server) => server.name);
    if (first === undefined || second === undefined) throw new Error('the simulator has two servers');
    const up = (server: string) => valueOf(facts.at(Date.now()).samples('server.up'), { server });

    // Before any poll: no server.up, but the failed-poll counters are there at 0.
    expect(facts.at(Date.now()).samples('server.up')).toEqual([]);
    expect(valueOf(facts.at(Date.now()).samples('polls.failed'), { kind: 'health', server: first })).toBe(0);
    expect(valueOf(facts.at(Date.now()).samples('polls.failed'), { kind: 'sessions', server: first })).toBe(0);

    await health.start();
    started.push(health);
    await sessions.start();
    started.push(sessions);
    await eventually(() => up(first) === 1 && up(second) === 1, 10_000, 'both servers up');
    await eventually(
      () => facts.at(Date.now()).samples('sessions.count').length === 2 * sim.virtualProxies.length,
      10_000,
      'a session sample per server and virtual proxy',
    );
    const now = facts.at(Date.now());
    const cpu = valueOf(now.samples('health.cpu_total'), { server: first });
    expect(cpu).toBeTypeOf('number');
    const ratio = valueOf(now.samples('server.memoryUsedRatio'), { server: first }) ?? -1;
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThan(1);
    for (const sample of now.samples('sessions.users'))
      expect(sample.value).toBeLessThanOrEqual(valueOf(now.samples('sessions.count'), sample.labels) ?? -1);

    const t0 = Date.now();
    const evaluator = new Evaluator(ruleDefinitions(alertsConfig()), [], { startedAt: t0 });
    const serverDown = (records: readonly AlertRecord[]) => records.filter((a) => a.rule === 'serverDown');
    expect(serverDown(evaluator.evaluate(facts.at(t0)).transitions.active)).toEqual([]);

    sim.fail(first, 'http-500');
    await eventually(() => up(first) === 0, 10_000, `${first} down`);
    expect(up(second)).toBe(1);
    const down = facts.at(Date.now());
    expect(valueOf(down.samples('health.cpu_total'), { server: first })).toBeUndefined();
    expect(valueOf(down.samples('polls.failed'), { kind: 'health', server: first })).toBeGreaterThan(0);
    expect(valueOf(down.samples('polls.failed'), { kind: 'health', server: second })).toBe(0);

    // serverDown over these facts, at times passed in: pending now, firing 2 minutes on.
    const pending = evaluator.evaluate(facts.at(t0 + MINUTE)).transitions;
    expect(serverDown(pending.active).map((a) => [a.labels.server, a.phase])).toEqual([[first, 'pending']]);
    const firing = evaluator.evaluate(facts.at(t0 + 3 * MINUTE)).transitions;
    expect(serverDown(firing.fired).map((a) => [a.rule, a.labels.server, a.link])).toEqual([
      ['serverDown', first, `/servers?server=${first}`],
    ]);

    sim.heal(first);
    await eventually(() => up(first) === 1, 10_000, `${first} up again`);
    const healed = evaluator.evaluate(facts.at(t0 + 4 * MINUTE)).transitions;
    expect(serverDown(healed.resolved).map((a) => [a.rule, a.labels.server])).toEqual([['serverDown', first]]);
  });
});

describe('AlertFacts', () => {
  it('reads every field of the catalog', () => {
    const facts = new AlertFacts({
      observed: new Observed(),
      errors: new ErrorTracker({ enabled: true, log: silentLog }),
      polls: new AlertPollSink(),
    });
    expect([...facts.fields].sort()).toEqual([...FIELD_NAMES].sort());
  });
});

/**
 * The evaluator's rules of time and state over constructed facts: `for` from the first evaluation
 * that held, resolution at the first that does not, counters (new series from 0, resets), the
 * baseline, `and` joins, restored state after a restart, bounded memory, and a failing rule.
 */
import { describe, expect, it } from 'vitest';
import type { AlertRecord, Condition, FactSample, RuleDefinition } from '../../../../shared/alerts/model.js';
import { alertFingerprint } from '../../../../shared/alerts/notification.js';
import { ruleDefinitions } from '../../../../shared/alerts/rules/definitions.js';
import { Evaluator, NO_DATA, RULE_REMOVED } from '../../../../shared/alerts/rules/evaluator.js';
import { activeAt, alertsConfig, events, factsAt, MINUTE, run, T0 } from './support.js';

/** A rule of the operator's own with these conditions. */
function rule(name: string, conditions: Partial<Condition>[], forMs = 0): RuleDefinition {
  const full = conditions.map(
    (c): Condition => ({
      field: 'health.cpu_total',
      where: {},
      by: ['server'],
      aggregate: 'last',
      windowMs: 0,
      op: '>',
      threshold: 0,
      baseline: null,
      ...c,
    }),
  );
  return {
    name,
    id: name,
    builtIn: false,
    severity: 'warning',
    conditions: full,
    forMs,
    labels: { team: 'bi' },
    summary: '{{alertname}} on {{server}}: {{value}} over {{threshold}}',
    text: '',
  };
}

const cpu = (values: Record<string, number>): { 'health.cpu_total': FactSample[] } => ({
  'health.cpu_total': Object.entries(values).map(([server, value]) => ({ labels: { server }, value })),
});

describe('Evaluator', () => {
  it('counts for from the first evaluation at which the condition held, and resolves at the first that does not', () => {
    const evaluator = new Evaluator([rule('hot', [{ threshold: 80 }], 2 * MINUTE)], [], { startedAt: T0 });
    const steps = run(evaluator, 0, 10, (m) => cpu({ a: m >= 3 && m < 8 ? 90 : 10 }));
    expect(activeAt(steps, 3, 'hot').map((a) => a.phase)).toEqual(['pending']);
    expect(activeAt(steps, 4, 'hot').map((a) => a.phase)).toEqual(['pending']);
    expect(events(steps, 'hot')).toEqual({ fired: ['5 server=a'], resolved: ['8 server=a'] });
    const firing = activeAt(steps, 5, 'hot')[0];
    expect(firing?.labels).toEqual({ alertname: 'hot', severity: 'warning', team: 'bi', server: 'a' });
    expect(firing?.fingerprint).toBe(
      alertFingerprint({ alertname: 'hot', severity: 'warning', team: 'bi', server: 'a' }),
    );
    expect(firing?.summary).toBe('hot on a: 90 over 80');
    expect(activeAt(steps, 8, 'hot')).toEqual([]);
  });

  it('fires at once with for 0, and drops a pending alert that clears without any history', () => {
    const evaluator = new Evaluator(
      [rule('now', [{ threshold: 80 }]), rule('later', [{ threshold: 80 }], 5 * MINUTE)],
      [],
      {
        startedAt: T0,
      },
    );
    const steps = run(evaluator, 0, 4, (m) => cpu({ a: m === 1 || m === 2 ? 90 : 10 }));
    expect(events(steps, 'now')).toEqual({ fired: ['1 server=a'], resolved: ['3 server=a'] });
    expect(events(steps, 'later')).toEqual({ fired: [], resolved: [] });
    expect(activeAt(steps, 2, 'later').map((a) => a.phase)).toEqual(['pending']);
    expect(activeAt(steps, 3, 'later')).toEqual([]);
  });

  it('reads counters from 0 for series that appear later, and adds a value that went down as a reset', () => {
    const increase = rule('grew', [
      { field: 'errors', by: ['type'], aggregate: 'increase', windowMs: 5 * MINUTE, op: '>', threshold: 0 },
    ]);
    const steps = run(new Evaluator([increase], [], { startedAt: T0 }), 0, 12, (m) => ({
      errors: [
        // Present at the first evaluation with 100: no increase.
        { labels: { type: 'HEALTH_API' }, value: 100 },
        // Appears at minute 2 with 4: its first events are an increase.
        ...(m >= 2 ? [{ labels: { type: 'PROXY_API' }, value: 4 }] : []),
        // 10, then 3 at minute 8 (its counter restarted): an increase of 3, not -7.
        { labels: { type: 'QRS_API' }, value: m < 8 ? 10 : 3 },
      ],
    }));
    expect(events(steps, 'grew')).toEqual({
      fired: ['2 type=PROXY_API', '8 type=QRS_API'],
      resolved: ['7 type=PROXY_API'],
    });
    expect(activeAt(steps, 8, 'grew').find((a) => a.labels.type === 'QRS_API')?.value).toBe(3);
  });

  it('reads a counter with last as its count since the start, not its increase', () => {
    const total = rule('manyFailures', [{ field: 'polls.failed', by: ['server'], op: '>=', threshold: 10 }]);
    const steps = run(new Evaluator([total], [], { startedAt: T0 }), 0, 1, (m) => ({
      'polls.failed': [
        { labels: { kind: 'health', server: 'a' }, value: 8 + m },
        { labels: { kind: 'sessions', server: 'a' }, value: 1 },
      ],
    }));
    expect(events(steps, 'manyFailures').fired).toEqual(['1 server=a']);
    expect(activeAt(steps, 1, 'manyFailures')[0]?.value).toBe(10);
  });

  it('adds up the series by the labels kept, each counter with its own increase', () => {
    const byServer = rule('logs', [
      {
        field: 'logEvents',
        where: { level: ['ERROR', 'FATAL'] },
        by: ['server'],
        aggregate: 'increase',
        windowMs: 5 * MINUTE,
        op: '>=',
        threshold: 10,
      },
    ]);
    const sample = (level: string, category: string, value: number) => ({
      labels: { source: 'engine', level, server: 'Node1', category },
      value,
    });
    const steps = run(new Evaluator([byServer], [], { startedAt: T0 }), 0, 3, (m) => ({
      logEvents: [
        sample('ERROR', '', 100 + 4 * m),
        sample('FATAL', 'license=yes', 2 * m),
        sample('WARN', '', 1000 * m),
        // A category seen only from minute 2: all its 3 events count.
        ...(m >= 2 ? [sample('ERROR', 'disk=full', 3)] : []),
      ],
    }));
    // At 1: 4 + 2 = 6; at 2: 8 + 4 + 3 = 15.
    expect(activeAt(steps, 1, 'logs')).toEqual([]);
    expect(activeAt(steps, 2, 'logs').map((a) => [a.labels.server, a.value])).toEqual([['Node1', 15]]);
  });

  it('requires a rise against the baseline window before the window', () => {
    const rise = rule('rise', [
      {
        field: 'errors',
        by: ['type'],
        aggregate: 'perMinute',
        windowMs: 5 * MINUTE,
        op: '>',
        threshold: 1,
        baseline: { factor: 2, windowMs: 10 * MINUTE },
      },
    ]);
    // 3 a minute for 20 minutes (above 1, but not twice the 3 before once there is a before), then 9 a minute.
    const total = (m: number) => (m <= 20 ? 3 * m : 60 + 9 * (m - 20));
    const steps = run(new Evaluator([rise], [], { startedAt: T0 }), 0, 26, (m) => ({
      errors: [{ labels: { type: 'HEALTH_API' }, value: total(m) }],
    }));
    expect(activeAt(steps, 19, 'rise')).toEqual([]);
    expect(activeAt(steps, 24, 'rise').map((a) => a.value)).toEqual([(total(24) - total(19)) / 5]);
  });

  it('joins and conditions on the labels of the first condition', () => {
    const both = rule('busyAndFull', [
      { field: 'health.cpu_total', threshold: 80 },
      { field: 'server.memoryUsedRatio', threshold: 0.8 },
      // No label in common: any series of it will do.
      { field: 'certificate.daysLeft', by: ['file'], op: '<', threshold: 1000 },
    ]);
    const steps = run(new Evaluator([both], [], { startedAt: T0 }), 0, 1, (m) => ({
      ...cpu({ a: 90, b: 90, c: 10 }),
      'server.memoryUsedRatio': [
        { labels: { server: 'a' }, value: 0.9 },
        { labels: { server: 'b' }, value: 0.5 },
        { labels: { server: 'c' }, value: 0.9 },
      ],
      'certificate.daysLeft': m === 0 ? [{ labels: { file: 'x.pem' }, value: 20 }] : [],
    }));
    expect(activeAt(steps, 0, 'busyAndFull').map((a) => a.labels.server)).toEqual(['a']);
    expect(activeAt(steps, 1, 'busyAndFull')).toEqual([]);
  });

  it('reports a rule that cannot be evaluated and goes on with the others', () => {
    const broken = rule('broken', [{ field: 'no.such.field' }]);
    const evaluator = new Evaluator([broken, rule('hot', [{ threshold: 80 }])], [], { startedAt: T0 });
    const { transitions, evaluations } = evaluator.evaluate(factsAt(T0, cpu({ a: 90 })));
    expect(evaluations.map((e) => [e.ruleId, e.error, e.series, e.firing])).toEqual([
      ['broken', 'unknown field "no.such.field"', 0, 0],
      ['hot', null, 1, 1],
    ]);
    expect(transitions.fired.map((a) => a.rule)).toEqual(['hot']);
  });

  it('forgets the series not seen for longer than their window', () => {
    const increase = rule('grew', [
      { field: 'udp.dropped', by: [], aggregate: 'increase', windowMs: 5 * MINUTE, op: '>', threshold: 1e9 },
    ]);
    const evaluator = new Evaluator([increase], [], { startedAt: T0 });
    // 1000 new series a minute, each seen once.
    run(evaluator, 0, 30, (m) => ({
      'udp.dropped': Array.from({ length: 1000 }, (_, i) => ({
        labels: { listener: `l${m}`, reason: `r${i}` },
        value: 1,
      })),
    }));
    // Those of the last 5 minutes and the one before at most.
    expect(evaluator.seriesCount).toBeLessThanOrEqual(7000);
    expect(evaluator.seriesCount).toBeGreaterThanOrEqual(5000);
  });
});

describe('Evaluator after a restart', () => {
  const rules = () => ruleDefinitions(alertsConfig());
  const restored = (overrides: Partial<AlertRecord> & Pick<AlertRecord, 'ruleId' | 'labels'>): AlertRecord => ({
    fingerprint: alertFingerprint(overrides.labels),
    rule: overrides.ruleId,
    severity: 'critical',
    summary: 'before the restart',
    link: '/servers?server=Node1',
    phase: 'firing',
    activeSince: T0 - 30 * MINUTE,
    firedAt: T0 - 28 * MINUTE,
    value: 0,
    lastSeenAt: T0 - MINUTE,
    ...overrides,
  });
  const serverDown = restored({
    ruleId: 'serverDown',
    labels: { alertname: 'serverDown', severity: 'critical', server: 'Node1' },
  });

  it('neither fires again what fired before, nor resolves it for lack of data; it resolves after the no-data limit', () => {
    const evaluator = new Evaluator(rules(), [serverDown], { startedAt: T0 });
    // Node1 is not polled (no server.up) after the start; Node2 answers from minute 3.
    const steps = run(evaluator, 0, 12, (m) => ({
      'server.up': m < 3 ? [] : [{ labels: { server: 'Node2' }, value: 1 }],
    }));
    expect(steps.flatMap((s) => s.transitions.fired)).toEqual([]);
    expect(activeAt(steps, 5, 'serverDown')).toEqual([serverDown]);
    const resolvedAt = steps.find((s) => s.transitions.resolved.length > 0);
    expect(resolvedAt?.minute).toBe(6);
    expect(resolvedAt?.transitions.resolvedDetail).toEqual({ [serverDown.fingerprint]: NO_DATA });
  });

  it('keeps a restored firing alert whose condition holds, with its times, and does not fire it again', () => {
    const evaluator = new Evaluator(rules(), [serverDown], { startedAt: T0 });
    const steps = run(evaluator, 0, 3, () => ({ 'server.up': [{ labels: { server: 'Node1' }, value: 0 }] }));
    expect(steps.flatMap((s) => s.transitions.fired)).toEqual([]);
    expect(activeAt(steps, 3, 'serverDown')[0]).toMatchObject({
      phase: 'firing',
      activeSince: serverDown.activeSince,
      firedAt: serverDown.firedAt,
      lastSeenAt: T0 + 3 * MINUTE,
      summary: 'Server Node1 does not answer its health check',
    });
  });

  it('waits for the window to fill since the start before resolving a restored alert of a counter', () => {
    const failing = restored({
      ruleId: 'destinationFailing',
      labels: { alertname: 'destinationFailing', severity: 'critical', queue: 'platform', destination: 'tsdb' },
    });
    const evaluator = new Evaluator(rules(), [failing], { startedAt: T0 });
    // The counter started again at 0 and no write failed since.
    const steps = run(evaluator, 0, 6, () => ({
      'destination.failedWrites': [{ labels: { queue: 'platform', destination: 'tsdb' }, value: 0 }],
    }));
    expect(activeAt(steps, 4, 'destinationFailing').map((a) => a.phase)).toEqual(['firing']);
    expect(events(steps, 'destinationFailing')).toEqual({
      fired: [],
      resolved: ['5 queue=platform,destination=tsdb'],
    });
  });

  it('resolves at once a restored alert whose condition no longer holds when the window needs no past', () => {
    const evaluator = new Evaluator(rules(), [serverDown], { startedAt: T0 });
    const steps = run(evaluator, 0, 0, () => ({ 'server.up': [{ labels: { server: 'Node1' }, value: 1 }] }));
    expect(events(steps, 'serverDown')).toEqual({ fired: [], resolved: ['0 server=Node1'] });
    expect(steps[0]?.transitions.resolvedDetail).toBeUndefined();
  });

  it('counts for of a restored pending alert from when it first held, before the restart', () => {
    const pending = restored({
      ruleId: 'engineCpuHigh',
      labels: { alertname: 'engineCpuHigh', severity: 'warning', server: 'Node1' },
      phase: 'pending',
      firedAt: null,
      activeSince: T0 - 4 * MINUTE,
    });
    const evaluator = new Evaluator(rules(), [pending], { startedAt: T0 });
    const steps = run(evaluator, 0, 1, () => ({ 'health.cpu_total': [{ labels: { server: 'Node1' }, value: 95 }] }));
    expect(activeAt(steps, 0, 'engineCpuHigh').map((a) => [a.phase, a.activeSince])).toEqual([
      ['pending', T0 - 4 * MINUTE],
    ]);
    expect(events(steps, 'engineCpuHigh').fired).toEqual(['1 server=Node1']);
  });

  it('drops a restored pending alert whose series is absent, and resolves the firing ones of a removed rule', () => {
    const pending = restored({
      ruleId: 'engineCpuHigh',
      labels: { alertname: 'engineCpuHigh', severity: 'warning', server: 'Node1' },
      phase: 'pending',
      firedAt: null,
    });
    const gone = restored({ ruleId: 'oldRule', labels: { alertname: 'oldRule', severity: 'warning' } });
    const evaluator = new Evaluator(rules(), [pending, gone], { startedAt: T0 });
    const { transitions } = evaluator.evaluate(factsAt(T0, {}));
    expect(transitions.active).toEqual([]);
    expect(transitions.resolved).toEqual([gone]);
    expect(transitions.resolvedDetail).toEqual({ [gone.fingerprint]: RULE_REMOVED });
  });
});

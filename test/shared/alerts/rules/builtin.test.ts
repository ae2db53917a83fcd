/**
 * The built-in pack over constructed facts, evaluated every minute of fake time: each rule quiet,
 * pending, firing and resolved at the minutes docs/prometheus/alerts.test.yml expects of the same
 * rules in Prometheus (the same input series, read as Svc's fields).
 */
import { describe, expect, it } from 'vitest';
import type { FactSample } from '../../../../shared/alerts/model.js';
import { ruleDefinitions } from '../../../../shared/alerts/rules/definitions.js';
import { Evaluator } from '../../../../shared/alerts/rules/evaluator.js';
import { activeAt, alertsConfig, events, MINUTE, piecewise, run, T0 } from './support.js';

const evaluator = () => new Evaluator(ruleDefinitions(alertsConfig()), [], { startedAt: T0 });
const perServer = (values: Record<string, number | null>): FactSample[] =>
  Object.entries(values).flatMap(([server, value]) => (value === null ? [] : [{ labels: { server }, value }]));

describe('the built-in pack', () => {
  it('serverDown: pending when a poll fails, firing after 2 minutes, resolved by the first poll that answers', () => {
    const steps = run(evaluator(), 0, 12, (m) => ({
      'server.up': perServer({ Node1: m >= 5 && m < 10 ? 0 : 1, Node2: 1, Node3: m < 3 ? null : 1 }),
    }));
    expect(activeAt(steps, 4, 'serverDown')).toEqual([]);
    expect(activeAt(steps, 6, 'serverDown').map((a) => a.phase)).toEqual(['pending']);
    expect(events(steps, 'serverDown')).toEqual({ fired: ['7 server=Node1'], resolved: ['10 server=Node1'] });
    const firing = activeAt(steps, 8, 'serverDown')[0];
    expect(firing).toMatchObject({
      ruleId: 'serverDown',
      severity: 'critical',
      labels: { alertname: 'serverDown', severity: 'critical', server: 'Node1' },
      summary: 'Server Node1 does not answer its health check',
      link: '/servers?server=Node1',
      phase: 'firing',
      activeSince: T0 + 5 * MINUTE,
      firedAt: T0 + 7 * MINUTE,
      value: 0,
    });
  });

  it('engineMemoryHigh and engineCpuHigh: above the threshold for 5 minutes', () => {
    const steps = run(evaluator(), 0, 22, (m) => ({
      'server.memoryUsedRatio': perServer({ Node1: m >= 2 && m < 12 ? 0.95 : 0.5, Node2: 0.9 }),
      'health.cpu_total': perServer({ Node1: m >= 5 && m < 20 ? 95 : 50, Node2: m === 3 ? 99 : 10 }),
    }));
    expect(events(steps, 'engineMemoryHigh')).toEqual({ fired: ['7 server=Node1'], resolved: ['12 server=Node1'] });
    expect(events(steps, 'engineCpuHigh')).toEqual({ fired: ['10 server=Node1'], resolved: ['20 server=Node1'] });
    expect(activeAt(steps, 9, 'engineCpuHigh').map((a) => a.phase)).toEqual(['pending']);
    expect(activeAt(steps, 10, 'engineCpuHigh')[0]?.summary).toBe('Engine CPU high on Node1: 95 %');
    expect(activeAt(steps, 8, 'engineMemoryHigh')[0]?.summary).toBe(
      'Engine memory high on Node1: 0.95 of committed plus free memory committed',
    );
  });

  it('sessionsDroppedToZero: a server that had at least 5 sessions in 30 minutes has none for 2 minutes', () => {
    // Node1: '0x4 6x10 0x5 3x10'; Node2: '4x10 0x20' (never had 5).
    const steps = run(evaluator(), 0, 30, (m) => ({
      'health.session_total': perServer({
        Node1: piecewise(m, [
          [0, () => 0],
          [5, () => 6],
          [16, () => 0],
          [22, () => 3],
        ]),
        Node2: m <= 10 ? 4 : 0,
      }),
    }));
    expect(activeAt(steps, 17, 'sessionsDroppedToZero').map((a) => a.phase)).toEqual(['pending']);
    expect(events(steps, 'sessionsDroppedToZero')).toEqual({
      fired: ['18 server=Node1'],
      resolved: ['22 server=Node1'],
    });
  });

  it('errorLogRise: ERROR events of one source above 1 a minute and 3 times the hour before, for 5 minutes', () => {
    // engine: '0+1x70 75+5x19 170x30' split over two servers and categories; proxy '0+2x120'; engine WARN '0+50x120'.
    const engine = (m: number) =>
      piecewise(m, [
        [0, (x) => x],
        [71, (x) => 75 + 5 * (x - 71)],
        [91, () => 170],
      ]);
    const steps = run(evaluator(), 0, 120, (m) => ({
      logEvents: [
        {
          labels: { source: 'engine', level: 'ERROR', server: 'Node1', category: '' },
          value: Math.floor(engine(m) / 2),
        },
        {
          labels: { source: 'engine', level: 'ERROR', server: 'Node2', category: 'license=yes' },
          value: Math.ceil(engine(m) / 2),
        },
        { labels: { source: 'proxy', level: 'ERROR', server: 'Node1', category: '' }, value: 2 * m },
        { labels: { source: 'engine', level: 'WARN', server: 'Node1', category: '' }, value: 50 * m },
      ],
    }));
    expect(activeAt(steps, 70, 'errorLogRise')).toEqual([]);
    expect(activeAt(steps, 80, 'errorLogRise').map((a) => a.phase)).toEqual(['pending']);
    // The proxy's steady 2 a minute never fires: in the first two windows after the start there is
    // too little of the hour before to call anything a rise, and after them the hour before has it too.
    // The engine fires once its rate is 3 times that of the hour before, and resolves when it is not.
    expect(events(steps, 'errorLogRise')).toEqual({
      fired: ['81 source=engine,level=ERROR'],
      resolved: ['90 source=engine,level=ERROR'],
    });
    const firing = activeAt(steps, 81, 'errorLogRise')[0];
    expect(firing?.summary).toBe('ERROR log events rising from the engine: 5 a minute');
    expect(firing?.link).toBe('/logs?source=engine&level=ERROR');
    expect(activeAt(steps, 105, 'errorLogRise')).toEqual([]);
  });

  it('errorLogRise after a start: a steady source is not a rise; a rise after two windows is, against the part of the hour counted', () => {
    const steady = run(evaluator(), 0, 40, (m) => ({
      logEvents: [{ labels: { source: 'scheduler', level: 'ERROR', server: 'Node1', category: '' }, value: 5 * m }],
    }));
    expect(events(steady, 'errorLogRise')).toEqual({ fired: [], resolved: [] });
    // 1 a minute for 20 minutes, then 10 a minute: the 10 minutes counted before the window are the baseline.
    const rising = run(evaluator(), 0, 40, (m) => ({
      logEvents: [
        {
          labels: { source: 'scheduler', level: 'ERROR', server: 'Node1', category: '' },
          value: m <= 20 ? m : 20 + 10 * (m - 20),
        },
      ],
    }));
    // At minute 23 the last 10 minutes hold 37 events (3.7 a minute), over 3 times the 1 a minute of
    // minutes 0 to 13: pending, then firing 5 minutes later.
    expect(events(rising, 'errorLogRise').fired).toEqual(['28 source=scheduler,level=ERROR']);
  });

  it('udpDatagramsDropped: any drop in 5 minutes fires at once, and resolves 5 minutes after the last', () => {
    const steps = run(evaluator(), 0, 25, (m) => ({
      'udp.dropped': [
        { labels: { listener: 'log_events', reason: 'queue_full' }, value: m <= 5 ? 0 : 3 },
        { labels: { listener: 'log_events', reason: 'size' }, value: 0 },
      ],
    }));
    expect(events(steps, 'udpDatagramsDropped')).toEqual({
      fired: ['6 listener=log_events,reason=queue_full'],
      resolved: ['11 listener=log_events,reason=queue_full'],
    });
    expect(activeAt(steps, 6, 'udpDatagramsDropped')[0]?.summary).toBe(
      'UDP datagrams dropped by the log_events listener (queue_full): 3 in the last 5m',
    );
  });

  it('destinationFailing: failed writes in every 5 minutes for 5 minutes; one failure does not fire', () => {
    // tsdb: '0x4 10+10x20 210x20'; mqtt: '0x4 1x40'.
    const steps = run(evaluator(), 0, 44, (m) => ({
      'destination.failedWrites': [
        { labels: { queue: 'platform', destination: 'tsdb' }, value: m < 5 ? 0 : Math.min(210, 10 + 10 * (m - 5)) },
        { labels: { queue: 'platform', destination: 'mqtt' }, value: m < 5 ? 0 : 1 },
      ],
    }));
    expect(activeAt(steps, 9, 'destinationFailing').map((a) => [a.phase, a.labels.destination])).toEqual([
      ['pending', 'tsdb'],
      ['pending', 'mqtt'],
    ]);
    expect(events(steps, 'destinationFailing')).toEqual({
      fired: ['10 queue=platform,destination=tsdb'],
      resolved: ['30 queue=platform,destination=tsdb'],
    });
    expect(activeAt(steps, 10, 'destinationFailing')[0]?.summary).toBe(
      'Destination tsdb (platform queue) is failing: 50 failed writes in the last 5m',
    );
  });

  it('queueBackingUp and deadLetters: fire at once; dead letters resolve an hour after the last', () => {
    const steps = run(evaluator(), 0, 70, (m) => ({
      'queue.oldestAgeSeconds': [
        { labels: { queue: 'platform', destination: 'tsdb' }, value: m >= 3 && m < 6 ? 400 : 20 },
      ],
      'queue.deadLettered': [{ labels: { queue: 'platform', destination: 'tsdb' }, value: m >= 5 ? 2 : 0 }],
    }));
    expect(events(steps, 'queueBackingUp')).toEqual({
      fired: ['3 queue=platform,destination=tsdb'],
      resolved: ['6 queue=platform,destination=tsdb'],
    });
    expect(events(steps, 'deadLetters')).toEqual({
      fired: ['5 queue=platform,destination=tsdb'],
      resolved: ['65 queue=platform,destination=tsdb'],
    });
  });

  it('clientCertificateExpiring: warning under 30 days, then critical under 7 (one at a time)', () => {
    const days = [40, 20, 20, 5, 5];
    const steps = run(evaluator(), 0, 4, (m) => ({
      'certificate.daysLeft': [{ labels: { file: '/certs/client.pem' }, value: days[m] ?? 0 }],
    }));
    const at = (m: number) => activeAt(steps, m, 'clientCertificateExpiring').map((a) => [a.severity, a.phase]);
    expect(at(0)).toEqual([]);
    expect(at(1)).toEqual([['warning', 'firing']]);
    expect(at(3)).toEqual([['critical', 'firing']]);
    expect(events(steps, 'clientCertificateExpiring')).toEqual({
      fired: ['1 file=/certs/client.pem', '3 file=/certs/client.pem'],
      resolved: ['3 file=/certs/client.pem'],
    });
    expect(activeAt(steps, 1, 'clientCertificateExpiring')[0]?.summary).toBe(
      'The platform client certificate /certs/client.pem expires in 20 days',
    );
  });

  it('a built-in rule switched off is not evaluated, and thresholds and for come from the config', () => {
    const rules = ruleDefinitions(
      alertsConfig(
        'builtIn:',
        '  serverDown: {enable: false}',
        '  engineCpuHigh: {threshold: 50, for: 1m}',
        'rules: []',
      ),
    );
    expect(rules.map((rule) => rule.id)).not.toContain('serverDown');
    const steps = run(new Evaluator(rules, [], { startedAt: T0 }), 0, 3, () => ({
      'server.up': perServer({ Node1: 0 }),
      'health.cpu_total': perServer({ Node1: 60 }),
    }));
    expect(events(steps, 'engineCpuHigh').fired).toEqual(['1 server=Node1']);
    expect(events(steps, 'serverDown').fired).toEqual([]);
  });
});

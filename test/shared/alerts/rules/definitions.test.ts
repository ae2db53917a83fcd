/** The rule definitions from the config: the operator's rules, the words of a rule, and summaries. */
import { describe, expect, it } from 'vitest';
import {
  BUILT_IN_RULE_NAMES,
  formatValue,
  placeholders,
  renderSummary,
  ruleDefinitions,
} from '../../../../shared/alerts/rules/definitions.js';
import { alertsConfig } from './support.js';

describe('ruleDefinitions', () => {
  it("takes the operator's enabled rules with durations in ms and a|b split, after the built-in pack", () => {
    const rules = ruleDefinitions(
      alertsConfig(
        'rules:',
        '  - name: mine',
        '    expr: {field: logEvents, where: {level: ERROR|FATAL, source: engine}, by: [server], aggregate: perMinute, window: 10m, baseline: {factor: 2, window: 30m}}',
        '    and: [{field: server.up, op: "==", threshold: 1}]',
        '    for: 90s',
        '    severity: critical',
        '    labels: {team: bi}',
        '    summary: "{{server}}"',
        '  - {name: off, enable: false, expr: {field: server.up}, summary: "{{server}}"}',
      ),
    );
    const builtIn = rules.filter((rule) => rule.builtIn);
    expect(new Set(builtIn.map((rule) => rule.name))).toEqual(new Set(BUILT_IN_RULE_NAMES));
    expect(builtIn.filter((rule) => rule.name === 'clientCertificateExpiring').map((rule) => rule.id)).toEqual([
      'clientCertificateExpiring:warning',
      'clientCertificateExpiring:critical',
    ]);
    const own = rules.filter((rule) => !rule.builtIn);
    expect(own).toEqual([
      {
        name: 'mine',
        id: 'mine',
        builtIn: false,
        severity: 'critical',
        conditions: [
          {
            field: 'logEvents',
            where: { level: ['ERROR', 'FATAL'], source: ['engine'] },
            by: ['server'],
            aggregate: 'perMinute',
            windowMs: 600_000,
            op: '>',
            threshold: 0,
            baseline: { factor: 2, windowMs: 1_800_000 },
          },
          {
            field: 'server.up',
            where: {},
            by: [],
            aggregate: 'last',
            windowMs: 300_000,
            op: '==',
            threshold: 1,
            baseline: null,
          },
        ],
        forMs: 90_000,
        labels: { team: 'bi' },
        summary: '{{server}}',
        text: 'perMinute(logEvents{level=ERROR|FATAL, source=engine} by server over 10m) > 0 and > 2 × the 30m before and server.up == 1 for 90s',
      },
    ]);
  });

  it('says the built-in rules in words', () => {
    const text = Object.fromEntries(ruleDefinitions(alertsConfig()).map((rule) => [rule.id, rule.text]));
    expect(text.serverDown).toBe('server.up by server == 0 for 2m');
    expect(text.sessionsDroppedToZero).toBe(
      'health.session_total by server == 0 and max(health.session_total by server over 30m) >= 5 for 2m',
    );
    expect(text['clientCertificateExpiring:warning']).toBe(
      'certificate.daysLeft by file < 30 and certificate.daysLeft by file >= 7',
    );
  });
});

describe('summaries', () => {
  it('replace the value rounded, the threshold, the name, the severity and labels; an absent label is empty', () => {
    const values = { threshold: 0.9, alertname: 'hot', severity: 'warning', labels: { server: 'Node1' } };
    expect(
      renderSummary('{{alertname}} ({{severity}}) on {{ server }}: {{value}} > {{threshold}}{{nope}}', {
        ...values,
        value: 0.95123,
      }),
    ).toBe('hot (warning) on Node1: 0.951 > 0.9');
    expect(formatValue(3)).toBe('3');
    expect(formatValue(95.4321)).toBe('95.4');
    expect(formatValue(123.6)).toBe('124');
    expect(formatValue(21474836480)).toBe('21474836480');
    expect(formatValue(0.000123456)).toBe('0.000123');
    expect(placeholders('{{a}} {{ b }} {c} {{1x}}')).toEqual(['a', 'b']);
  });
});

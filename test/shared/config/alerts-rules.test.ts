/**
 * The cross-field rules of `Svc.alerts`, through the real config loader: each refused rule,
 * channel and route is reported at its key path with what is wrong (and a likely meant name), a
 * good config loads, and alerts without the store are a warning.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, formatIssue } from '../../../shared/config/errors.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { alerts } from '../../../shared/config/sections/alerts.js';

/** The formatted issues of a config with these lines below `alerts:` and `more` below `Svc:` (none when it loads). */
function issues(lines: readonly string[], more: readonly string[] = []): string[] {
  try {
    parseConfigText(text(lines, more), 'svc.yaml', {});
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map(formatIssue).map((l) => l.replace(/^svc\.yaml:\d+:\d+ /, ''));
    throw err;
  }
}

function text(lines: readonly string[], more: readonly string[]): string {
  return ['Svc:', '  alerts:', ...lines.map((l) => `    ${l}`), ...more.map((l) => `  ${l}`), ''].join('\n');
}

const rule = (expr: string, extra = '') => ['rules:', `  - {name: mine, expr: ${expr}${extra}}`];

describe('Svc.alerts rules', () => {
  it('loads a good rule with and-conditions, labels and a summary of its labels', () => {
    expect(
      issues([
        'rules:',
        '  - name: slowAndBusy',
        '    expr: {field: health.cpu_total, by: [server], op: ">", threshold: 80}',
        '    and: [{field: sessions.count, by: [server], aggregate: max, window: 10m, op: ">=", threshold: 50}]',
        '    labels: {team: bi}',
        '    summary: "{{alertname}} on {{server}} ({{team}}): {{value}} over {{threshold}}, {{severity}}"',
        '  - name: errorsPerCategory',
        '    expr: {field: logEvents, where: {level: ERROR|FATAL}, aggregate: perMinute, window: 10m, baseline: {factor: 2, window: 1h}}',
        '    summary: "{{category}} {{source}} {{level}} {{server}}"',
      ]),
    ).toEqual([]);
  });

  it('refuses an unknown field, suggesting the closest', () => {
    expect(issues(rule('{field: health.cpu_totl}'))).toEqual([
      'Svc.alerts.rules[0].expr.field: "health.cpu_totl" is not a field of the catalog (docs/alerts.md); did you mean "health.cpu_total"?',
    ]);
    expect(issues(['rules:', '  - {name: mine, expr: {field: server.up}, and: [{field: nothing}]}'])).toEqual([
      'Svc.alerts.rules[0].and[0].field: "nothing" is not a field of the catalog (docs/alerts.md)',
    ]);
  });

  it('refuses where and by labels the field does not have', () => {
    expect(issues(rule('{field: udp.dropped, where: {server: a}, by: [listener, queue]}', ', summary: x'))).toEqual([
      'Svc.alerts.rules[0].expr.where.server: "server" is not a label of the field: udp.dropped has the labels "listener", "reason"',
      'Svc.alerts.rules[0].expr.by[1]: "queue" is not a label of the field: udp.dropped has the labels "listener", "reason"',
    ]);
  });

  it('refuses a summary placeholder that will never be filled', () => {
    expect(
      issues(rule('{field: udp.dropped, by: [listener]}', ', summary: "{{listener}} {{reason}} {{server}}"')),
    ).toEqual([
      'Svc.alerts.rules[0].summary: "{{reason}}", "{{server}}" will never be filled: the alerts of this rule have the labels "listener", besides "value", "threshold", "alertname", "severity"',
    ]);
  });

  it('refuses a baseline with an aggregate other than perMinute', () => {
    expect(
      issues(rule('{field: errors, aggregate: increase, baseline: {factor: 3}}', ', summary: "{{type}}"')),
    ).toEqual([
      'Svc.alerts.rules[0].expr.baseline.factor: a baseline compares rates: it needs aggregate perMinute (the aggregate is increase)',
    ]);
  });

  it('refuses a window of 0 for an aggregate over a window, and for a built-in rule', () => {
    expect(
      issues([
        'builtIn: {errorLogRise: {baseline: "0"}, deadLetters: {window: "0", enable: false}}',
        ...rule('{field: errors, aggregate: increase, window: "0"}', ', summary: "{{type}}"'),
      ]),
    ).toEqual([
      'Svc.alerts.builtIn.errorLogRise.baseline: must be longer than 0: the rule reads the values over it',
      'Svc.alerts.rules[0].expr.window: must be longer than 0: increase reads the values over it',
    ]);
  });

  it("refuses a repeated rule name and a built-in rule's name", () => {
    expect(
      issues([
        'rules:',
        '  - {name: serverDown, expr: {field: server.up, op: "==", threshold: 0}}',
        '  - {name: twice, expr: {field: server.up}}',
        '  - {name: twice, expr: {field: server.up}}',
      ]),
    ).toEqual([
      'Svc.alerts.rules[0].name: "serverDown" is a built-in rule\'s name (Svc.alerts.builtIn); choose another name',
      'Svc.alerts.rules[2].name: "twice" is already the name of Svc.alerts.rules[1]',
    ]);
  });
});

describe('the examples of Svc.alerts in the schema', () => {
  it('load together and pass every check (docs/configuration.md shows them)', () => {
    const example = (key: 'rules' | 'channels' | 'routes') => JSON.stringify(alerts.properties[key].examples?.[0]);
    expect(
      issues([`rules: ${example('rules')}`, `channels: ${example('channels')}`, `routes: ${example('routes')}`]),
    ).toEqual([]);
  });
});

describe('Svc.alerts channels and routes', () => {
  it('loads complete channels and routes naming them', () => {
    expect(
      issues(
        [
          'channels:',
          '  - {name: hook, type: webhook, url: "https://alerts.example.com/svc"}',
          '  - {name: mail, type: email, email: {smtp: {host: smtp.example.com}, from: svc@example.com, to: [ops@example.com]}}',
          '  - {name: bus, type: mqtt}',
          'routes:',
          '  - {match: {severity: critical}, channels: [hook, mail, bus]}',
        ],
        ['mqttConfig:', '  enable: true', '  brokerHost: 127.0.0.1'],
      ),
    ).toEqual([]);
  });

  it('refuses repeated names, missing settings of each type, mqtt without the broker, and routes to unknown channels', () => {
    expect(
      issues([
        'channels:',
        '  - {name: hook, type: webhook}',
        '  - {name: hook, type: slack, url: "https://hooks.slack.com/services/x"}',
        '  - {name: team, type: teams}',
        '  - {name: mail, type: email, email: {to: []}}',
        '  - {name: bus, type: mqtt}',
        'routes:',
        '  - {channels: [hokk, mail]}',
      ]),
    ).toEqual([
      'Svc.alerts.channels[0].url: must be set: the webhook channel posts to it',
      'Svc.alerts.channels[1].name: "hook" is already the name of Svc.alerts.channels[0]',
      'Svc.alerts.channels[2].url: must be set: the teams channel posts to it',
      'Svc.alerts.channels[3].email.smtp.host: must be set: the email channel sends through it',
      'Svc.alerts.channels[3].email.from: must be set: the email channel sends through it',
      'Svc.alerts.channels[3].email.to: must be set: the email channel sends through it',
      'Svc.alerts.channels[4].type: is mqtt but Svc.mqttConfig.enable is false: the channel publishes on the broker of Svc.mqttConfig',
      'Svc.alerts.routes[0].channels[0]: "hokk" is not a channel of Svc.alerts.channels; did you mean "hook"?',
    ]);
  });

  it('checks nothing while alerts are off, and warns that alerts are off without the store', () => {
    expect(issues(['enable: false', 'channels: [{name: hook, type: webhook}]'])).toEqual([]);
    const loaded = parseConfigText(text(['enable: true'], ['store:', '  enable: false']), 'svc.yaml', {});
    expect(loaded.warnings.filter((w) => w.includes('alerts'))).toEqual([
      expect.stringContaining(
        'Svc.alerts.enable: alerts are off: they keep their state in the embedded store, and Svc.store.enable is false',
      ),
    ]);
  });
});

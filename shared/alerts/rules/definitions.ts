/**
 * The rules the evaluator runs: the built-in pack (`Svc.alerts.builtIn`, the same rules, thresholds
 * and `for` as docs/prometheus/alerts.yml, whose README gives each default's reason) and the
 * operator's own (`Svc.alerts.rules[]`), as RuleDefinitions with durations in ms. Also the summary
 * templates and each rule in words for the Alerts page.
 */
import type { Static } from '@sinclair/typebox';
import type { SvcConfig } from '../../config/schema.js';
import { type AlertCondition, alerts as alertsSection } from '../../config/sections/alerts.js';
import { STORE_LOG_SOURCES } from '../../store/ddl.js';
import { formatDuration, parseDuration } from '../../util/duration.js';
import type { Condition, RuleDefinition } from '../model.js';

type AlertsConfig = SvcConfig['alerts'];
type BuiltInName = keyof AlertsConfig['builtIn'];

/** The built-in rules' names (`Svc.alerts.builtIn.<name>`): an operator's rule may not take one. */
export const BUILT_IN_RULE_NAMES: readonly string[] = Object.keys(alertsSection.properties.builtIn.properties);

/** The sources whose ERROR events errorLogRise watches: the log sources (engine performance events are not errors). */
const ERROR_LOG_SOURCES: readonly string[] = STORE_LOG_SOURCES;

/** A condition with the defaults of the config's AlertCondition. */
function condition(fields: Partial<Condition> & Pick<Condition, 'field' | 'op' | 'threshold'>): Condition {
  return { where: {}, by: [], aggregate: 'last', windowMs: 0, baseline: null, ...fields };
}

/** The built-in pack as the config switches and tunes it. */
function builtInRules(config: AlertsConfig['builtIn']): RuleDefinition[] {
  const rules: RuleDefinition[] = [];
  const add = (
    name: BuiltInName,
    rule: Pick<RuleDefinition, 'severity' | 'conditions' | 'summary'> & { id?: string; forMs?: number },
  ): void => {
    if (!config[name].enable) return;
    const forMs = rule.forMs ?? parseDuration(config[name].for);
    rules.push({
      name,
      id: rule.id ?? name,
      builtIn: true,
      severity: rule.severity,
      conditions: rule.conditions,
      forMs,
      labels: {},
      summary: rule.summary,
      text: ruleText(rule.conditions, forMs),
    });
  };
  const server = ['server'];
  const queue = ['queue', 'destination'];

  add('serverDown', {
    severity: 'critical',
    conditions: [condition({ field: 'server.up', by: server, op: '==', threshold: 0 })],
    summary: 'Server {{server}} does not answer its health check',
  });
  add('engineMemoryHigh', {
    severity: 'warning',
    conditions: [
      condition({
        field: 'server.memoryUsedRatio',
        by: server,
        op: '>',
        threshold: config.engineMemoryHigh.threshold,
      }),
    ],
    summary: 'Engine memory high on {{server}}: {{value}} of committed plus free memory committed',
  });
  add('engineCpuHigh', {
    severity: 'warning',
    conditions: [
      condition({ field: 'health.cpu_total', by: server, op: '>', threshold: config.engineCpuHigh.threshold }),
    ],
    summary: 'Engine CPU high on {{server}}: {{value}} %',
  });
  const sessions = config.sessionsDroppedToZero;
  add('sessionsDroppedToZero', {
    severity: 'warning',
    conditions: [
      condition({ field: 'health.session_total', by: server, op: '==', threshold: 0 }),
      condition({
        field: 'health.session_total',
        by: server,
        aggregate: 'max',
        windowMs: parseDuration(sessions.window),
        op: '>=',
        threshold: sessions.threshold,
      }),
    ],
    summary: `Sessions on {{server}} dropped to zero (at least ${sessions.threshold} in the last ${sessions.window})`,
  });
  const errors = config.errorLogRise;
  add('errorLogRise', {
    severity: 'warning',
    conditions: [
      condition({
        field: 'logEvents',
        where: { level: ['ERROR'], source: ERROR_LOG_SOURCES },
        by: ['source', 'level'],
        aggregate: 'perMinute',
        windowMs: parseDuration(errors.window),
        op: '>',
        threshold: errors.threshold,
        baseline: errors.factor > 0 ? { factor: errors.factor, windowMs: parseDuration(errors.baseline) } : null,
      }),
    ],
    summary: 'ERROR log events rising from the {{source}}: {{value}} a minute',
  });
  const increase = (name: 'udpDatagramsDropped' | 'destinationFailing' | 'deadLetters', field: string, by: string[]) =>
    condition({
      field,
      by,
      aggregate: 'increase',
      windowMs: parseDuration(config[name].window),
      op: '>',
      threshold: config[name].threshold,
    });
  add('udpDatagramsDropped', {
    severity: 'warning',
    conditions: [increase('udpDatagramsDropped', 'udp.dropped', ['listener', 'reason'])],
    summary: `UDP datagrams dropped by the {{listener}} listener ({{reason}}): {{value}} in the last ${config.udpDatagramsDropped.window}`,
  });
  add('destinationFailing', {
    severity: 'critical',
    conditions: [increase('destinationFailing', 'destination.failedWrites', queue)],
    summary: `Destination {{destination}} ({{queue}} queue) is failing: {{value}} failed writes in the last ${config.destinationFailing.window}`,
  });
  add('queueBackingUp', {
    severity: 'warning',
    conditions: [
      condition({
        field: 'queue.oldestAgeSeconds',
        by: queue,
        op: '>',
        threshold: config.queueBackingUp.threshold,
      }),
    ],
    summary: 'Queue {{queue}} backing up for {{destination}}: the oldest event waits for {{value}} s',
  });
  add('deadLetters', {
    severity: 'warning',
    conditions: [increase('deadLetters', 'queue.deadLettered', queue)],
    summary: `Dead letters for {{destination}} ({{queue}} queue): {{value}} in the last ${config.deadLetters.window}`,
  });
  // Two rules of one name: a certificate is in one of them at a time, so the critical one replaces the warning.
  const certificate = config.clientCertificateExpiring;
  const daysLeft = (op: Condition['op'], threshold: number) =>
    condition({ field: 'certificate.daysLeft', by: ['file'], op, threshold });
  const certificateSummary = 'The platform client certificate {{file}} expires in {{value}} days';
  add('clientCertificateExpiring', {
    id: 'clientCertificateExpiring:warning',
    severity: 'warning',
    conditions: [daysLeft('<', certificate.threshold), daysLeft('>=', certificate.criticalDays)],
    summary: certificateSummary,
  });
  add('clientCertificateExpiring', {
    id: 'clientCertificateExpiring:critical',
    severity: 'critical',
    conditions: [daysLeft('<', certificate.criticalDays)],
    summary: certificateSummary,
  });
  return rules;
}

/** A config condition in ms, its `a|b` alternatives split. */
export function conditionOf(expr: Static<typeof AlertCondition>): Condition {
  return {
    field: expr.field,
    where: Object.fromEntries(Object.entries(expr.where).map(([label, values]) => [label, values.split('|')])),
    by: expr.by,
    aggregate: expr.aggregate,
    windowMs: parseDuration(expr.window),
    op: expr.op,
    threshold: expr.threshold,
    baseline:
      expr.baseline.factor > 0 ? { factor: expr.baseline.factor, windowMs: parseDuration(expr.baseline.window) } : null,
  };
}

/** Every rule to evaluate: the built-in ones switched on, then the operator's enabled ones, in config order. */
export function ruleDefinitions(config: AlertsConfig): RuleDefinition[] {
  const own = config.rules
    .filter((rule) => rule.enable)
    .map((rule): RuleDefinition => {
      const conditions = [conditionOf(rule.expr), ...rule.and.map(conditionOf)];
      const forMs = parseDuration(rule.for);
      return {
        name: rule.name,
        id: rule.name,
        builtIn: false,
        severity: rule.severity,
        conditions,
        forMs,
        labels: rule.labels,
        summary: rule.summary,
        text: ruleText(conditions, forMs),
      };
    });
  return [...builtInRules(config.builtIn), ...own];
}

/** One condition in words: `perMinute(logEvents{level=ERROR} by source over 10m) > 1 and > 3 × the 1h before`. */
export function conditionText(c: Condition): string {
  const where = Object.entries(c.where).map(([label, values]) => `${label}=${values.join('|')}`);
  const selector = where.length > 0 ? `${c.field}{${where.join(', ')}}` : c.field;
  const by = c.by.length > 0 ? ` by ${c.by.join(', ')}` : '';
  const measured =
    c.aggregate === 'last' ? `${selector}${by}` : `${c.aggregate}(${selector}${by} over ${formatDuration(c.windowMs)})`;
  const baseline =
    c.baseline === null ? '' : ` and > ${c.baseline.factor} × the ${formatDuration(c.baseline.windowMs)} before`;
  return `${measured} ${c.op} ${c.threshold}${baseline}`;
}

/** A rule in words for the Alerts page: its conditions joined by `and`, then its `for`. */
export function ruleText(conditions: readonly Condition[], forMs: number): string {
  const text = conditions.map(conditionText).join(' and ');
  return forMs > 0 ? `${text} for ${formatDuration(forMs)}` : text;
}

/** A value as a summary shows it: whole numbers as they are, others to 3 significant digits (big ones whole). */
export function formatValue(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) || Math.abs(value) >= 100) return String(Math.round(value));
  return String(Number(value.toPrecision(3)));
}

/** What a summary template's placeholders are replaced with. */
export interface SummaryValues {
  value: number;
  threshold: number;
  alertname: string;
  severity: string;
  labels: Readonly<Record<string, string>>;
}

/** The placeholders of a template, as written (`{{ server }}` → `server`). */
export function placeholders(template: string): string[] {
  return [...template.matchAll(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g)].map((match) => match[1] ?? '');
}

/** The placeholders every template may use besides the alert's labels. */
export const SUMMARY_NAMES: readonly string[] = ['value', 'threshold', 'alertname', 'severity'];

/**
 * A summary: {{value}} (rounded by formatValue), {{threshold}}, {{alertname}}, {{severity}} and
 * {{<label>}} replaced; a label the alert does not have becomes '' (the config rules refuse a
 * template naming a label no series of the rule can have).
 */
export function renderSummary(template: string, values: SummaryValues): string {
  return template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => {
    switch (name) {
      case 'value':
        return formatValue(values.value);
      case 'threshold':
        return formatValue(values.threshold);
      case 'alertname':
        return values.alertname;
      case 'severity':
        return values.severity;
      default:
        return values.labels[name] ?? '';
    }
  });
}

/**
 * What an alert notification carries, whatever the channel: the alerts of one group, in the shape of
 * Prometheus Alertmanager's webhook payload (version 4), so that the generic webhook sends it as it
 * is and the other channels render the same facts (docs/alerts.md).
 */
import { createHash } from 'node:crypto';

/** An alert is firing until its condition clears, then resolved. */
export type AlertStatus = 'firing' | 'resolved';

/** How bad an alert is; the rule sets it. */
export type AlertSeverity = 'critical' | 'warning' | 'info';

/** One alert instance: one rule firing for one set of labels (a rule may fire once per server). */
export interface AlertInstance {
  /** The rule that fired; also `labels.alertname`. */
  ruleName: string;
  severity: AlertSeverity;
  /** At least `alertname` and `severity`, and `server` (the server's name) when the alert is about one. */
  labels: Record<string, string>;
  annotations: {
    /** One line: what fired. */
    summary: string;
    /** More words, when the rule has them. */
    description?: string;
  };
  status: AlertStatus;
  /** When the condition first held long enough to fire. */
  startsAt: Date;
  /** When it cleared; undefined while firing. */
  endsAt?: Date;
  /** The measured value that made it fire (or the last one before it cleared), as the rule reports it. */
  value: number;
  /** Identifies the instance across evaluations and restarts: its labels hashed (alertFingerprint). */
  fingerprint: string;
  /** The page showing this alert. */
  link: string;
}

/** One group of alerts for one channel: Alertmanager's webhook fields beside the alerts. */
export interface AlertNotification {
  /** The channel's name (Alertmanager: the receiver). */
  receiver: string;
  /** Firing while any alert of the group fires. */
  status: AlertStatus;
  /** Identifies the group, stable across notifications of the same group. */
  groupKey: string;
  /** The labels the group was formed by. */
  groupLabels: Record<string, string>;
  /** The labels every alert of the group has, with the same value. */
  commonLabels: Record<string, string>;
  /** The annotations every alert of the group has, with the same value. */
  commonAnnotations: Record<string, string>;
  /** The base URL of Svc's pages (Alertmanager: its own URL). */
  externalURL: string;
  /** How many alerts were left out of `alerts` to keep the message small. */
  truncatedAlerts: number;
  alerts: AlertInstance[];
}

/**
 * 16 hex digits identifying an alert by its labels (`alertname` among them), whatever their order:
 * the same alert keeps it across evaluations and restarts, as Alertmanager's fingerprint does.
 */
export function alertFingerprint(labels: Record<string, string>): string {
  const canonical = JSON.stringify(
    Object.keys(labels)
      .sort()
      .map((key) => [key, labels[key]]),
  );
  return createHash('sha256').update(canonical).digest('hex').slice(0, 16);
}

/** What the labels or annotations of every alert hold with one value. */
function common(maps: readonly Record<string, string>[]): Record<string, string> {
  const [first, ...rest] = maps;
  if (first === undefined) return {};
  return Object.fromEntries(Object.entries(first).filter(([key, value]) => rest.every((map) => map[key] === value)));
}

/** The annotations of an alert as a string map (Alertmanager's annotations are strings), the value included. */
export function annotationsOf(alert: AlertInstance): Record<string, string> {
  return {
    summary: alert.annotations.summary,
    ...(alert.annotations.description === undefined ? {} : { description: alert.annotations.description }),
    value: String(alert.value),
  };
}

/** Alertmanager's canonical group key: the route's matchers (none here) and the group labels, sorted. */
export function groupKeyOf(groupLabels: Record<string, string>): string {
  const pairs = Object.keys(groupLabels)
    .sort()
    .map((key) => `${key}=${JSON.stringify(groupLabels[key])}`);
  return `{}:{${pairs.join(', ')}}`;
}

/** The notification of `alerts` to `receiver`, grouped by `groupLabels`; keeps at most `maxAlerts`. */
export function makeNotification(options: {
  receiver: string;
  groupLabels: Record<string, string>;
  externalURL: string;
  alerts: readonly AlertInstance[];
  maxAlerts?: number;
}): AlertNotification {
  const { alerts } = options;
  const kept = options.maxAlerts === undefined ? [...alerts] : alerts.slice(0, options.maxAlerts);
  return {
    receiver: options.receiver,
    status: alerts.some((alert) => alert.status === 'firing') ? 'firing' : 'resolved',
    groupKey: groupKeyOf(options.groupLabels),
    groupLabels: options.groupLabels,
    commonLabels: common(alerts.map((alert) => alert.labels)),
    commonAnnotations: common(alerts.map(annotationsOf)),
    externalURL: options.externalURL,
    truncatedAlerts: alerts.length - kept.length,
    alerts: kept,
  };
}

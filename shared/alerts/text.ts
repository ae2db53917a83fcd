/**
 * The words of a notification for people (Slack, Teams, e-mail): what fired, on which server, since
 * when, the value, the link, and when it cleared. The generic webhook and MQTT send the data instead.
 */
import type { AlertInstance, AlertNotification } from './notification.js';

/** The facts of one alert, in the order the channels show them. */
export interface AlertFacts {
  /** `[FIRING] serverDown` */
  title: string;
  summary: string;
  description: string | undefined;
  /** The server's name, or undefined when the alert is about none. */
  server: string | undefined;
  severity: string;
  /** ISO 8601, UTC. */
  since: string;
  /** ISO 8601 when resolved. */
  resolvedAt: string | undefined;
  value: string;
  link: string;
}

/** The facts of `alert`. */
export function alertFacts(alert: AlertInstance): AlertFacts {
  return {
    title: `[${alert.status.toUpperCase()}] ${alert.ruleName}`,
    summary: alert.annotations.summary,
    description: alert.annotations.description,
    server: alert.labels.server,
    severity: alert.severity,
    since: alert.startsAt.toISOString(),
    resolvedAt: alert.status === 'resolved' ? alert.endsAt?.toISOString() : undefined,
    value: String(alert.value),
    link: alert.link,
  };
}

/** The fact lines of `facts` as label/value pairs, the absent ones left out. */
export function factLines(facts: AlertFacts): [string, string][] {
  const lines: [string, string | undefined][] = [
    ['Server', facts.server],
    ['Severity', facts.severity],
    ['Since', facts.since],
    ['Resolved', facts.resolvedAt],
    ['Value', facts.value],
    ['Link', facts.link],
  ];
  return lines.filter((line): line is [string, string] => line[1] !== undefined);
}

/** The one-line heading of a notification: `[FIRING:2] serverDown` (Alertmanager's default title form). */
export function notificationTitle(notification: AlertNotification): string {
  const rule = notification.commonLabels.alertname ?? notification.alerts[0]?.ruleName ?? 'alert';
  const firing = notification.alerts.filter((alert) => alert.status === 'firing').length;
  return notification.status === 'firing' ? `[FIRING:${firing}] ${rule}` : `[RESOLVED] ${rule}`;
}

/** The notification as plain text: the title, then each alert's summary and facts. */
export function plainText(notification: AlertNotification): string {
  const blocks = notification.alerts.map((alert) => {
    const facts = alertFacts(alert);
    return [
      `${facts.title}: ${facts.summary}`,
      ...(facts.description === undefined ? [] : [facts.description]),
      ...factLines(facts).map(([label, value]) => `${label}: ${value}`),
    ].join('\n');
  });
  const truncated =
    notification.truncatedAlerts > 0 ? [`… and ${notification.truncatedAlerts} more alert(s) not shown`] : [];
  return [notificationTitle(notification), ...blocks, ...truncated].join('\n\n');
}

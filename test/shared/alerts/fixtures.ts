/** Alerts and notifications for the channel tests; times relative to the run's now. */
import type { AlertRecord } from '../../../shared/alerts/model.js';
import {
  type AlertInstance,
  type AlertNotification,
  alertFingerprint,
  makeNotification,
} from '../../../shared/alerts/notification.js';

const MINUTE_MS = 60_000;

/** A `serverDown` alert on `server`, firing since 3 minutes ago (or resolved a minute ago). */
export function serverDownAlert(server: string, status: 'firing' | 'resolved' = 'firing'): AlertInstance {
  const now = Date.now();
  return {
    ruleName: 'serverDown',
    severity: 'critical',
    labels: { alertname: 'serverDown', severity: 'critical', server },
    annotations: {
      summary: `${server} has not answered for 2 minutes`,
      description: 'The health API is not answering.',
    },
    status,
    startsAt: new Date(now - 3 * MINUTE_MS),
    ...(status === 'resolved' ? { endsAt: new Date(now - MINUTE_MS) } : {}),
    value: 1,
    fingerprint: `fp-${server}`,
    link: `http://svc.example.test:3100/alerts#serverDown-${server}`,
  };
}

/** One group of `serverDown` alerts, grouped by alertname, to `receiver`. */
export function serverDownNotification(
  receiver: string,
  servers: readonly string[] = ['sense-central'],
  status: 'firing' | 'resolved' = 'firing',
): AlertNotification {
  return makeNotification({
    receiver,
    groupLabels: { alertname: 'serverDown' },
    externalURL: 'http://svc.example.test:3100',
    alerts: servers.map((server) => serverDownAlert(server, status)),
  });
}

/** A `serverDown` alert record on `server` (the store's row), `phase`, active since `since`; fired 2 minutes later. */
export function alertRecord(server: string, since: number, phase: AlertRecord['phase'] = 'firing'): AlertRecord {
  const labels = { alertname: 'serverDown', severity: 'critical', server };
  return {
    fingerprint: alertFingerprint(labels),
    ruleId: 'serverDown',
    rule: 'serverDown',
    severity: 'critical',
    labels,
    summary: `${server} has not answered`,
    link: `/servers?server=${server}`,
    phase,
    activeSince: since,
    firedAt: phase === 'firing' ? since + 2 * MINUTE_MS : null,
    value: 0,
    lastSeenAt: since + 3 * MINUTE_MS,
  };
}

/**
 * The generic webhook: Prometheus Alertmanager's webhook payload, version 4, field for field (its
 * `webhook_config` documentation), so that a receiver built for Alertmanager takes Svc's alerts
 * unchanged. Svc's link to the alert's page is the `generatorURL`; the value is the annotation `value`.
 */
import { type AlertInstance, type AlertNotification, annotationsOf } from '../notification.js';
import { HttpChannel } from './http-channel.js';

/** Alertmanager's `endsAt` of an alert that has not ended: Go's zero time. */
export const ZERO_TIME = '0001-01-01T00:00:00Z';

/** One alert of Alertmanager's webhook payload. */
export interface AlertmanagerAlert {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** RFC 3339. */
  startsAt: string;
  /** RFC 3339; ZERO_TIME while firing. */
  endsAt: string;
  generatorURL: string;
  fingerprint: string;
}

/** Alertmanager's webhook payload, version 4. */
export interface AlertmanagerPayload {
  version: '4';
  groupKey: string;
  truncatedAlerts: number;
  status: 'firing' | 'resolved';
  receiver: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  externalURL: string;
  alerts: AlertmanagerAlert[];
}

function alertmanagerAlert(alert: AlertInstance): AlertmanagerAlert {
  return {
    status: alert.status,
    labels: alert.labels,
    annotations: annotationsOf(alert),
    startsAt: alert.startsAt.toISOString(),
    endsAt: alert.endsAt?.toISOString() ?? ZERO_TIME,
    generatorURL: alert.link,
    fingerprint: alert.fingerprint,
  };
}

/** The payload a webhook channel POSTs for `notification`. */
export function alertmanagerPayload(notification: AlertNotification): AlertmanagerPayload {
  return {
    version: '4',
    groupKey: notification.groupKey,
    truncatedAlerts: notification.truncatedAlerts,
    status: notification.status,
    receiver: notification.receiver,
    groupLabels: notification.groupLabels,
    commonLabels: notification.commonLabels,
    commonAnnotations: notification.commonAnnotations,
    externalURL: notification.externalURL,
    alerts: notification.alerts.map(alertmanagerAlert),
  };
}

/** A generic webhook channel posting to `url`. */
export function webhookChannel(name: string, url: string): HttpChannel {
  return new HttpChannel(name, 'webhook', url, alertmanagerPayload);
}

/** The notification model: grouping fields, truncation and fingerprints. */
import { describe, expect, it } from 'vitest';
import { alertFingerprint, makeNotification } from '../../../shared/alerts/notification.js';
import { serverDownAlert } from './fixtures.js';

describe('makeNotification', () => {
  it('keeps at most maxAlerts, counts the rest as truncated, and is firing while one alert fires', () => {
    const notification = makeNotification({
      receiver: 'ops',
      groupLabels: { severity: 'critical', alertname: 'serverDown' },
      externalURL: 'http://svc.example.test',
      alerts: [serverDownAlert('a', 'resolved'), serverDownAlert('b'), serverDownAlert('c')],
      maxAlerts: 2,
    });
    expect(notification.alerts.map((alert) => alert.labels.server)).toEqual(['a', 'b']);
    expect(notification.truncatedAlerts).toBe(1);
    expect(notification.status).toBe('firing');
    expect(notification.groupKey).toBe('{}:{alertname="serverDown", severity="critical"}');
    expect(notification.commonLabels).toEqual({ alertname: 'serverDown', severity: 'critical' });
  });

  it('is resolved when every alert is', () => {
    const notification = makeNotification({
      receiver: 'ops',
      groupLabels: {},
      externalURL: '',
      alerts: [serverDownAlert('a', 'resolved'), serverDownAlert('b', 'resolved')],
    });
    expect(notification.status).toBe('resolved');
    expect(notification.commonLabels.server).toBeUndefined();
  });
});

describe('alertFingerprint', () => {
  it('is the same for the same labels in any order, different for other labels', () => {
    const one = alertFingerprint({ alertname: 'serverDown', server: 'a' });
    expect(one).toMatch(/^[0-9a-f]{16}$/);
    expect(alertFingerprint({ server: 'a', alertname: 'serverDown' })).toBe(one);
    expect(alertFingerprint({ alertname: 'serverDown', server: 'b' })).not.toBe(one);
  });
});

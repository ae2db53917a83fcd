/** A channel of `Svc.alerts.channels[]`: each kind's settings pass the config schema, what is wrong is refused, the secrets are marked, and buildChannel takes the config item. */
import { describe, expect, it } from 'vitest';
import { buildChannel } from '../../../shared/alerts/channels/build.js';
import { ConfigError } from '../../../shared/config/errors.js';
import { AlertChannel } from '../../../shared/config/sections/alerts.js';
import { svcConfig } from '../../support/udp.js';
import { channelSettings } from './fixtures.js';

/** The channels of a config file holding `channel` (JSON is YAML), loaded by the real loader. */
const loadChannel = (channel: unknown) =>
  svcConfig(['  mqttConfig: {enable: true}', `  alerts: {channels: [${JSON.stringify(channel)}], routes: []}`]).alerts
    .channels;

const email = channelSettings({
  name: 'mail',
  type: 'email',
  email: {
    smtp: {
      host: 'smtp.example.test',
      port: 587,
      secure: false,
      requireStartTls: true,
      username: 'u',
      password: 'p',
      caFile: '',
    },
    from: 'svc@example.test',
    to: ['ops@example.test'],
  },
});

describe('Svc.alerts.channels[] (AlertChannel)', () => {
  it.each([
    channelSettings({ name: 'am', type: 'webhook', url: 'http://alertmanager.example.test:9093/hook' }),
    channelSettings({ name: 'ops', type: 'slack', url: 'https://hooks.slack.com/services/T/B/K' }),
    channelSettings({ name: 'teams', type: 'teams', url: 'https://prod.westeurope.logic.azure.com/workflows/x?sig=k' }),
    email,
    channelSettings({ name: 'broker', type: 'mqtt', topic: 'svc/alerts' }),
  ])('takes a $type channel', (settings) => {
    expect(loadChannel(settings)).toEqual([settings]);
  });

  it.each([
    ['an unknown type', { ...email, type: 'pager' }],
    ['a URL that is not http(s)', { ...email, type: 'slack', url: 'ftp://example.test/hook' }],
    ['no name', { ...email, name: '' }],
    ['a port out of range', { ...email, email: { ...email.email, smtp: { ...email.email.smtp, port: 70_000 } } }],
    ['an unknown member', { ...email, token: 'x' }],
  ])('refuses %s', (_, settings) => {
    expect(() => loadChannel(settings)).toThrow(ConfigError);
  });

  it('marks the URL and the SMTP password as secrets', () => {
    expect(AlertChannel.properties.url['x-secret']).toBe(true);
    expect(AlertChannel.properties.email.properties.smtp.properties.password['x-secret']).toBe(true);
  });

  it('builds each kind from its config item, with its secret masked in the target', () => {
    const slack = buildChannel(
      channelSettings({ name: 'ops', type: 'slack', url: 'https://hooks.slack.com/services/T/B/K3y' }),
    );
    expect(slack.target).toBe('https://hooks.slack.com/…');
    const mail = buildChannel(email);
    expect([mail.name, mail.type, mail.target]).toEqual(['mail', 'email', 'smtp://smtp.example.test:587']);
  });
});

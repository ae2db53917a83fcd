/** ChannelSettingsSchema: each kind's settings pass, what is wrong is refused, and the secrets are marked. */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { buildChannel } from '../../../shared/alerts/channels/build.js';
import { ChannelSettingsSchema, EmailChannelSchema, SlackChannelSchema } from '../../../shared/alerts/settings.js';

const email = {
  name: 'mail',
  type: 'email',
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
};

describe('ChannelSettingsSchema', () => {
  it.each([
    { name: 'am', type: 'webhook', url: 'http://alertmanager.example.test:9093/hook' },
    { name: 'ops', type: 'slack', url: 'https://hooks.slack.com/services/T/B/K' },
    { name: 'teams', type: 'teams', url: 'https://prod.westeurope.logic.azure.com/workflows/x?sig=k' },
    email,
    { name: 'broker', type: 'mqtt', topic: 'svc/alerts' },
  ])('takes a $type channel', (settings) => {
    expect(Value.Check(ChannelSettingsSchema, settings)).toBe(true);
  });

  it.each([
    ['an unknown type', { name: 'x', type: 'pager', url: 'https://example.test' }],
    ['a URL that is not http(s)', { name: 'x', type: 'slack', url: 'ftp://example.test/hook' }],
    ['an empty URL', { name: 'x', type: 'webhook', url: '' }],
    ['no name', { name: '', type: 'webhook', url: 'https://example.test' }],
    ['no recipient', { ...email, to: [] }],
    ['a port out of range', { ...email, smtp: { ...email.smtp, port: 70_000 } }],
  ])('refuses %s', (_, settings) => {
    expect(Value.Check(ChannelSettingsSchema, settings)).toBe(false);
  });

  it('marks the URL and the SMTP password as secrets', () => {
    expect(SlackChannelSchema.properties.url['x-secret']).toBe(true);
    expect(EmailChannelSchema.properties.smtp.properties.password['x-secret']).toBe(true);
  });

  it('builds each HTTP kind with its URL masked as its target', () => {
    const channel = buildChannel({ name: 'ops', type: 'slack', url: 'https://hooks.slack.com/services/T/B/K3y' });
    expect(channel.target).toBe('https://hooks.slack.com/…');
  });
});

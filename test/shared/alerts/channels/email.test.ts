/**
 * The e-mail channel through nodemailer to a real SMTP server (Debian's python3-aiosmtpd,
 * test/support/smtp.ts) on loopback: STARTTLS and implicit TLS, with a certificate from a CA made
 * here, and AUTH; refused credentials are not retried and never show the password.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CertificateFiles,
  makeCertificates,
  writeCertificates,
} from '../../../../edge-agent/simulate/platform/certs.js';
import { EmailChannel } from '../../../../shared/alerts/channels/email.js';
import { RetryingChannel } from '../../../../shared/alerts/channels/retry.js';
import type { EmailSettings } from '../../../../shared/alerts/settings.js';
import { ErrorTracker, type TrackedError } from '../../../../shared/errors/tracker.js';
import { recordingLog } from '../../../support/log.js';
import { type SmtpServer, startSmtpServer } from '../../../support/smtp.js';
import { serverDownNotification } from '../fixtures.js';

const USER = 'svc-alerts';
const PASSWORD = 'pa55-Never-Logged';

let certs: CertificateFiles;
let starttls: SmtpServer;
let implicitTls: SmtpServer;

beforeAll(async () => {
  certs = writeCertificates(
    mkdtempSync(join(tmpdir(), 'smtp-certs-')),
    makeCertificates(['127.0.0.1', 'localhost'], { commonName: 'SMTP test CA' }),
  );
  const common = { certFile: certs.serverCert, keyFile: certs.serverKey, user: USER, password: PASSWORD };
  [starttls, implicitTls] = await Promise.all([
    startSmtpServer({ mode: 'starttls', ...common }),
    startSmtpServer({ mode: 'tls', ...common }),
  ]);
}, 30_000);

afterAll(async () => {
  await Promise.all([starttls?.stop(), implicitTls?.stop()]);
});

function settings(server: SmtpServer, secure: boolean, password = PASSWORD): EmailSettings {
  return {
    smtp: {
      host: server.host,
      port: server.port,
      secure,
      requireStartTls: true,
      username: USER,
      password,
      caFile: certs.clientCertCA,
    },
    from: 'Svc alerts <svc@example.test>',
    to: ['ops@example.test', 'oncall@example.test'],
  };
}

function rig() {
  const { log, lines } = recordingLog();
  const tracked: TrackedError[] = [];
  const errors = new ErrorTracker({ enabled: true, log, sink: (error) => tracked.push(error) });
  return { log, lines, tracked, errors };
}

/** The MIME text of a received message with its quoted-printable soft line breaks joined. */
function unfolded(content: string): string {
  return content.replace(/=\r?\n/g, '').replaceAll('=3D', '=');
}

describe('email channel', () => {
  it.each([
    ['STARTTLS', false],
    ['implicit TLS', true],
  ])(
    'delivers over %s with AUTH: a plain-text and an HTML part naming rule, server, since, value, link',
    async (_, secure) => {
      const server = secure ? implicitTls : starttls;
      const before = (await server.messages()).length;
      const { log, errors, tracked } = rig();
      const channel = new RetryingChannel(
        new EmailChannel('mail', settings(server, secure)),
        { log, errors },
        { baseDelayMs: 20 },
      );
      const notification = serverDownNotification('mail');
      expect((await channel.deliver(notification)).delivered).toBe(true);
      expect(tracked).toHaveLength(0);

      const mails = await server.messages();
      expect(mails).toHaveLength(before + 1);
      const mail = mails.at(-1);
      expect(mail?.tls).toBe(true);
      expect(mail?.authenticated).toBe(true);
      expect(mail?.mailFrom).toBe('svc@example.test');
      expect(mail?.rcptTos).toEqual(['ops@example.test', 'oncall@example.test']);
      const content = unfolded(mail?.content ?? '');
      expect(content).toContain('Subject: [FIRING:1] serverDown on sense-central');
      expect(content).toContain('Content-Type: text/plain');
      expect(content).toContain('Content-Type: text/html');
      const alert = notification.alerts[0];
      for (const needle of [
        'Server: sense-central',
        `Since: ${alert?.startsAt.toISOString()}`,
        'Value: 1',
        `Link: ${alert?.link}`,
      ])
        expect(content).toContain(needle);
      expect(content).toContain(`<a href="${alert?.link}">`);
    },
  );

  it('says when the alert cleared', async () => {
    const { log, errors } = rig();
    const channel = new RetryingChannel(new EmailChannel('mail', settings(starttls, false)), { log, errors });
    const notification = serverDownNotification('mail', ['sense-central'], 'resolved');
    expect((await channel.deliver(notification)).delivered).toBe(true);
    const content = unfolded((await starttls.messages()).at(-1)?.content ?? '');
    expect(content).toContain('Subject: [RESOLVED] serverDown on sense-central');
    expect(content).toContain(`Resolved: ${notification.alerts[0]?.endsAt?.toISOString()}`);
  });

  it('does not retry refused credentials, tracks them, and never shows the password', async () => {
    const { log, lines, errors, tracked } = rig();
    const wrong = 'wrong-Secret-Password';
    const channel = new RetryingChannel(
      new EmailChannel('mail', settings(starttls, false, wrong)),
      { log, errors },
      { baseDelayMs: 20 },
    );
    const outcome = await channel.deliver(serverDownNotification('mail'));
    expect(outcome).toMatchObject({ delivered: false, attempts: 1 });
    expect(outcome.error).toContain('EAUTH');
    expect(tracked).toHaveLength(1);
    expect(tracked[0]?.type).toBe('ALERT_NOTIFY');
    const everything = JSON.stringify(lines) + JSON.stringify(outcome) + String(tracked[0]?.error);
    expect(everything).not.toContain(wrong);
    expect(everything).not.toContain(PASSWORD);
  });

  it('refuses a server whose certificate no trusted CA signed', async () => {
    const { log, errors, tracked } = rig();
    const untrusted = { ...settings(implicitTls, true), smtp: { ...settings(implicitTls, true).smtp, caFile: '' } };
    const channel = new RetryingChannel(
      new EmailChannel('mail', untrusted),
      { log, errors },
      { attempts: 2, baseDelayMs: 20 },
    );
    expect((await channel.deliver(serverDownNotification('mail'))).delivered).toBe(false);
    expect(tracked).toHaveLength(1);
  });
});

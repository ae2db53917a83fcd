/**
 * E-mail through SMTP with nodemailer: implicit TLS (`secure`) or STARTTLS (required unless told
 * otherwise), SMTP AUTH with the user name and password when one is set, a plain-text and an HTML
 * part saying the same. nodemailer is imported at the first send, so a process with no e-mail
 * channel never loads it. The password never appears in an error: nodemailer's text (which may
 * quote the server's reply) is replaced by its code and the SMTP reply code.
 */
import { readFileSync } from 'node:fs';
import type { Transporter } from 'nodemailer';
import type { AlertNotification } from '../notification.js';
import type { EmailSettings } from '../settings.js';
import { alertFacts, factLines, notificationTitle, plainText } from '../text.js';
import { type Channel, ChannelError } from './port.js';

/** How long connecting, the greeting and each command may take. */
const SMTP_TIMEOUT_MS = 10_000;

function escapeHtml(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');
}

/** The HTML part: per alert a heading, the summary and a table of its facts, the link as a link. */
export function emailHtml(notification: AlertNotification): string {
  const sections = notification.alerts.map((alert) => {
    const facts = alertFacts(alert);
    const rows = factLines(facts)
      .map(([label, value]) => {
        const shown = label === 'Link' ? `<a href="${escapeHtml(value)}">${escapeHtml(value)}</a>` : escapeHtml(value);
        return `<tr><th align="left">${escapeHtml(label)}</th><td>${shown}</td></tr>`;
      })
      .join('');
    const description = facts.description === undefined ? '' : `<p>${escapeHtml(facts.description)}</p>`;
    return `<h2>${escapeHtml(facts.title)}</h2><p>${escapeHtml(facts.summary)}</p>${description}<table>${rows}</table>`;
  });
  const truncated =
    notification.truncatedAlerts > 0 ? `<p>… and ${notification.truncatedAlerts} more alert(s) not shown</p>` : '';
  return `<!doctype html><html><body><h1>${escapeHtml(notificationTitle(notification))}</h1>${sections.join('')}${truncated}</body></html>`;
}

/** The subject: the title, and the server when every alert of the group is about the same one. */
export function emailSubject(notification: AlertNotification): string {
  const server = notification.commonLabels.server;
  return `${notificationTitle(notification)}${server === undefined ? '' : ` on ${server}`}`;
}

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null ? Reflect.get(err, name) : undefined;
}

/** An e-mail channel. */
export class EmailChannel implements Channel {
  readonly type = 'email';
  readonly target: string;
  private transporter: Promise<Transporter> | undefined;

  constructor(
    readonly name: string,
    private readonly settings: EmailSettings,
  ) {
    const scheme = settings.smtp.secure ? 'smtps' : 'smtp';
    this.target = `${scheme}://${settings.smtp.host}:${settings.smtp.port}`;
  }

  private async transport(): Promise<Transporter> {
    const { smtp } = this.settings;
    const { createTransport } = await import('nodemailer');
    return createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      requireTLS: !smtp.secure && smtp.requireStartTls,
      ...(smtp.username === '' ? {} : { auth: { user: smtp.username, pass: smtp.password } }),
      ...(smtp.caFile === '' ? {} : { tls: { ca: readFileSync(smtp.caFile, 'utf8') } }),
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
    });
  }

  async send(notification: AlertNotification): Promise<void> {
    this.transporter ??= this.transport();
    const where = `email channel "${this.name}" (${this.target})`;
    let transporter: Transporter;
    try {
      transporter = await this.transporter;
    } catch (err) {
      this.transporter = undefined;
      const code = field(err, 'code');
      throw new ChannelError(
        `${where}: its settings cannot be used (${typeof code === 'string' ? code : 'unreadable caFile'})`,
        {
          retryable: false,
        },
      );
    }
    try {
      await transporter.sendMail({
        from: this.settings.from,
        to: this.settings.to,
        subject: emailSubject(notification),
        text: plainText(notification),
        html: emailHtml(notification),
      });
    } catch (err) {
      const code = field(err, 'code');
      const responseCode = field(err, 'responseCode');
      const reply = typeof responseCode === 'number' ? responseCode : undefined;
      const codeText = typeof code === 'string' ? code : 'unknown';
      // A 5xx reply (refused credentials are 535) will not mend by itself; a 4xx reply or a lost connection may.
      const retryable = reply === undefined || reply < 500;
      throw new ChannelError(
        `${where}: sending failed (${codeText}${reply === undefined ? '' : `, SMTP reply ${reply}`})`,
        { code: codeText, ...(reply === undefined ? {} : { status: reply }), retryable },
      );
    }
  }
}

/**
 * Slack: an incoming-webhook message, `text` (the notification's plain text, which Slack shows in
 * notifications and where blocks cannot be drawn) and `blocks`: a header, then per alert a section
 * with its summary and a section of fields (server, severity, since, resolved, value) and the link.
 */
import type { AlertNotification } from '../notification.js';
import { alertFacts, factLines, notificationTitle, plainText } from '../text.js';
import { HttpChannel } from './http-channel.js';

/** Slack's limit on a header block's text. */
const HEADER_MAX = 150;

/** Slack mrkdwn escapes: `&`, `<` and `>` are control characters there. */
function escape(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/** The message a Slack channel POSTs for `notification`. */
export function slackPayload(notification: AlertNotification): { text: string; blocks: unknown[] } {
  const blocks: unknown[] = [
    { type: 'header', text: { type: 'plain_text', text: notificationTitle(notification).slice(0, HEADER_MAX) } },
  ];
  for (const alert of notification.alerts) {
    const facts = alertFacts(alert);
    const summary = [`*${escape(facts.title)}*: ${escape(facts.summary)}`];
    if (facts.description !== undefined) summary.push(escape(facts.description));
    blocks.push({ type: 'section', text: { type: 'mrkdwn', text: summary.join('\n') } });
    blocks.push({
      type: 'section',
      fields: factLines(facts)
        .filter(([label]) => label !== 'Link')
        .map(([label, value]) => ({ type: 'mrkdwn', text: `*${label}*\n${escape(value)}` })),
    });
    blocks.push({ type: 'context', elements: [{ type: 'mrkdwn', text: `<${facts.link}|Open in Svc>` }] });
  }
  if (notification.truncatedAlerts > 0)
    blocks.push({
      type: 'context',
      elements: [{ type: 'mrkdwn', text: `… and ${notification.truncatedAlerts} more alert(s) not shown` }],
    });
  return { text: plainText(notification), blocks };
}

/** A Slack channel posting to the incoming webhook `url`. */
export function slackChannel(name: string, url: string): HttpChannel {
  return new HttpChannel(name, 'slack', url, slackPayload);
}

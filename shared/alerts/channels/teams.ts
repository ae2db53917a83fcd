/**
 * Microsoft Teams: a Workflows (Power Automate) webhook, "Send webhook alerts to a channel", which
 * takes a message with one Adaptive Card attachment (card version 1.4, which Teams draws): a title,
 * per alert its summary and a FactSet (server, severity, since, resolved, value), and an
 * Action.OpenUrl to the alert's page.
 */
import type { AlertNotification } from '../notification.js';
import { alertFacts, factLines, notificationTitle } from '../text.js';
import { HttpChannel } from './http-channel.js';

/** The Adaptive Card version sent: the highest every Teams client draws. */
export const ADAPTIVE_CARD_VERSION = '1.4';

/** The Adaptive Card of `notification`. */
export function adaptiveCard(notification: AlertNotification): Record<string, unknown> {
  const body: unknown[] = [
    {
      type: 'TextBlock',
      text: notificationTitle(notification),
      weight: 'Bolder',
      size: 'Large',
      wrap: true,
      color: notification.status === 'firing' ? 'Attention' : 'Good',
    },
  ];
  const actions: unknown[] = [];
  for (const alert of notification.alerts) {
    const facts = alertFacts(alert);
    body.push({
      type: 'TextBlock',
      text: `${facts.title}: ${facts.summary}`,
      weight: 'Bolder',
      wrap: true,
      separator: true,
    });
    if (facts.description !== undefined) body.push({ type: 'TextBlock', text: facts.description, wrap: true });
    body.push({ type: 'FactSet', facts: factLines(facts).map(([title, value]) => ({ title, value })) });
    actions.push({
      type: 'Action.OpenUrl',
      title: `Open ${alert.ruleName}${facts.server ? ` on ${facts.server}` : ''}`,
      url: facts.link,
    });
  }
  if (notification.truncatedAlerts > 0)
    body.push({ type: 'TextBlock', text: `… and ${notification.truncatedAlerts} more alert(s) not shown`, wrap: true });
  return {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    body,
    actions,
  };
}

/** The message a Teams channel POSTs for `notification`. */
export function teamsPayload(notification: AlertNotification): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [
      { contentType: 'application/vnd.microsoft.card.adaptive', contentUrl: null, content: adaptiveCard(notification) },
    ],
  };
}

/** A Teams channel posting to the Workflows webhook `url`. */
export function teamsChannel(name: string, url: string): HttpChannel {
  return new HttpChannel(name, 'teams', url, teamsPayload);
}

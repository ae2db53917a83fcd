/** The webhook, Slack and Teams channels are one JSON POST each, differing only in the body they build. */
import type { AlertNotification } from '../notification.js';
import { maskUrl, postJson } from './http.js';
import type { Channel, ChannelType } from './port.js';

/** A channel that POSTs `payload(notification)` to a secret URL. */
export class HttpChannel implements Channel {
  readonly target: string;

  constructor(
    readonly name: string,
    readonly type: Extract<ChannelType, 'webhook' | 'slack' | 'teams'>,
    private readonly url: string,
    private readonly payload: (notification: AlertNotification) => unknown,
  ) {
    this.target = maskUrl(url);
  }

  send(notification: AlertNotification): Promise<void> {
    return postJson(this, this.url, this.payload(notification));
  }
}

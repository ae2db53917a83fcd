/**
 * The port the alert rule engine sends through, one adapter per kind of channel (docs/alerts.md).
 * `send` resolves once the receiver took the notification and rejects with a ChannelError when it
 * did not; retrying is the job of RetryingChannel (retry.ts), not of the adapters.
 */
import type { AlertNotification } from '../notification.js';

/** The kinds of notification channel. */
export type ChannelType = 'webhook' | 'slack' | 'teams' | 'email' | 'mqtt';

/** One notification channel. */
export interface Channel {
  /** `Svc.alerts.channels[].name`. */
  readonly name: string;
  readonly type: ChannelType;
  /** Where it sends, as a log line may show it: never the secret part of a URL nor a password. */
  readonly target: string;
  send(notification: AlertNotification): Promise<void>;
}

/**
 * Why a channel could not deliver. The message names the channel and the masked target, never a
 * secret. `retryable` says whether trying again may help (a 5xx, 429, a network error) or not (a
 * 4xx such as 404: the URL is wrong); `retryAfterMs` is the receiver's own wait (`Retry-After`).
 */
export class ChannelError extends Error {
  override readonly name = 'ChannelError';
  /** The HTTP status (or SMTP reply code) when the receiver answered. */
  readonly status: number | undefined;
  /** The network error code (`ECONNREFUSED`, …) when it did not. */
  readonly code: string | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, details: { status?: number; code?: string; retryable: boolean; retryAfterMs?: number }) {
    super(message);
    this.status = details.status;
    this.code = details.code;
    this.retryable = details.retryable;
    this.retryAfterMs = details.retryAfterMs;
  }
}

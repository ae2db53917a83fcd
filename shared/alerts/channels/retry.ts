/**
 * Delivery with retries, around any channel: a failed send is tried again after 1 s, 2 s, 4 s, …
 * (doubling from `baseDelayMs`, `attempts` tries in all), waiting instead what a 429 or 503 reply's
 * `Retry-After` asks when it asks for longer (up to `maxDelayMs`). A failure that trying again cannot
 * mend (a 4xx other than 408 and 429: a wrong URL or refused credentials) ends the tries at once.
 * Once the tries are spent the failure is tracked (`ALERT_NOTIFY`, module `ALERT_CHANNEL`); the log
 * says so once when the channel starts failing and once when it delivers again, not per notification.
 */
import type { ErrorTracker } from '../../errors/tracker.js';
import type { Log } from '../../logging/log.js';
import type { AlertNotification } from '../notification.js';
import { type Channel, ChannelError } from './port.js';

/** The module failed deliveries are tracked with. */
export const ALERT_CHANNEL_MODULE = 'ALERT_CHANNEL';

/** How a channel retries; every member has a default. */
export interface RetryOptions {
  /** Tries in all, the first included; default 4 (waits of 1 s, 2 s, 4 s). */
  attempts?: number;
  /** The first wait; default 1 s. */
  baseDelayMs?: number;
  /** The longest single wait, `Retry-After` included; default 60 s. */
  maxDelayMs?: number;
}

const DEFAULT_ATTEMPTS = 4;
const DEFAULT_BASE_DELAY_MS = 1_000;
const DEFAULT_MAX_DELAY_MS = 60_000;

/** What a RetryingChannel reports of one notification. */
export interface DeliveryOutcome {
  delivered: boolean;
  /** Tries made. */
  attempts: number;
  /** The last failure's message (masked) when not delivered. */
  error?: string;
}

/** The wait before try `attempt + 1`: the doubling back-off, or the receiver's longer Retry-After, capped. */
export function retryDelayMs(
  attempt: number,
  error: ChannelError | undefined,
  options: Required<RetryOptions>,
): number {
  const backOff = options.baseDelayMs * 2 ** (attempt - 1);
  const asked = error?.retryAfterMs ?? 0;
  return Math.min(Math.max(backOff, asked), options.maxDelayMs);
}

function asChannelError(err: unknown, channel: Channel): ChannelError {
  if (err instanceof ChannelError) return err;
  // An adapter's own bug, not the receiver's answer: its message is not known to be free of secrets.
  return new ChannelError(`${channel.type} channel "${channel.name}" (${channel.target}) failed unexpectedly`, {
    retryable: false,
  });
}

/** A channel that retries, tracks and logs; `deliver` never throws. */
export class RetryingChannel {
  private failing = false;
  private readonly options: Required<RetryOptions>;

  constructor(
    readonly channel: Channel,
    private readonly context: { log: Log; errors: Pick<ErrorTracker, 'track'> },
    options: RetryOptions = {},
  ) {
    this.options = {
      attempts: options.attempts ?? DEFAULT_ATTEMPTS,
      baseDelayMs: options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
      maxDelayMs: options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
    };
  }

  /** True while the last notification could not be delivered. */
  get isFailing(): boolean {
    return this.failing;
  }

  /** Sends `notification`, retrying as the module comment says. */
  async deliver(notification: AlertNotification): Promise<DeliveryOutcome> {
    const { channel } = this;
    let last: ChannelError | undefined;
    let attempt = 0;
    while (attempt < this.options.attempts) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt, last, this.options)));
      attempt += 1;
      try {
        await channel.send(notification);
        this.recovered();
        return { delivered: true, attempts: attempt };
      } catch (err) {
        last = asChannelError(err, channel);
        this.context.log.debug(
          { channel: channel.name, channelType: channel.type, attempt, err: last.message },
          'alert notification not delivered, trying again',
        );
        if (!last.retryable) break;
      }
    }
    const error =
      last ?? new ChannelError(`${channel.type} channel "${channel.name}" made no attempt`, { retryable: false });
    this.context.errors.track('ALERT_NOTIFY', error, {
      module: ALERT_CHANNEL_MODULE,
      destinationHost: hostOf(channel),
    });
    if (!this.failing) {
      this.failing = true;
      this.context.log.error(
        { channel: channel.name, channelType: channel.type, target: channel.target, attempts: attempt },
        `alert channel "${channel.name}" failing: ${error.message} (after ${attempt} attempt${attempt === 1 ? '' : 's'}); the next notifications are tried as they come, and a delivery is logged once it works again`,
      );
    }
    return { delivered: false, attempts: attempt, error: error.message };
  }

  private recovered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.context.log.info(
      { channel: this.channel.name, channelType: this.channel.type, target: this.channel.target },
      `alert channel "${this.channel.name}" delivers again`,
    );
  }
}

/** The host part of a channel's masked target, for the tracked error's `destinationHost`. */
function hostOf(channel: Channel): string {
  return URL.parse(channel.target)?.host ?? channel.target;
}

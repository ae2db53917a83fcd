/**
 * The platform's UDP events to the monitoring SaaS (platform-formats.md §8.3): one POST per event to
 * the configured accounts (`userEvents.sendToMonSaas.destinationAccount` /
 * `logEvents.sendToMonSaas.destinationAccount`), the events of a batch at once. The `MonSaasWriter`
 * retries transient failures itself and tracks what still fails (`MONSAAS_POST`, modules
 * `USER_EVENTS_MONSAAS` / `LOG_EVENTS_MONSAAS`); an event that then failed for an account is
 * returned so the queue delivers it again.
 *
 * Choices (Svc choice):
 * - A redelivered event is posted only to the accounts that did not take it yet (remembered per
 *   event id, bounded), so an account that answered 202 does not count the event twice.
 * - Only an account outcome `failed` (an HTTP error or no answer) makes the event come back. An
 *   account without credentials or an empty event URL is a config error (refused at startup by the
 *   rules, logged at ERROR by the writer): another delivery would fail the same way.
 * - A log event that monsaas does not take (engine performance, a disabled source, a level the flags
 *   exclude) is not sent and not failed.
 */
import { logMonSaasEvent, userMonSaasEvent, type LogMonSaasOptions, type UserMonSaasOptions } from './mappers.js';
import type { QueuedEvent } from '../../queue/events.js';
import type { MonSaasEvent, MonSaasWriter } from './client.js';
import type { Log } from '../../logging/log.js';
import { PerEventDestination } from '../port.js';

export const USER_EVENTS_MONSAAS_MODULE = 'USER_EVENTS_MONSAAS';
export const LOG_EVENTS_MONSAAS_MODULE = 'LOG_EVENTS_MONSAAS';

export interface MonSaasDestinationOptions {
  writer: Pick<MonSaasWriter, 'postEvent'>;
  /** Accounts and event options when user events go to monsaas (§0.6), else null. */
  userEvents: { accounts: readonly string[]; options: UserMonSaasOptions } | null;
  /** Accounts and event options when log events go to monsaas (§0.6), else null. */
  logEvents: { accounts: readonly string[]; options: LogMonSaasOptions } | null;
  /** How many partly sent events to remember for redeliveries; default 10,000. */
  rememberPartial?: number;
  log: Log;
}

export class MonSaasDestination extends PerEventDestination {
  readonly name = 'monsaas';
  private readonly rememberPartial: number;
  /** Per event id: the accounts that took it, while some account has not. */
  private readonly sentTo = new Map<string, Set<string>>();

  constructor(private readonly options: MonSaasDestinationOptions) {
    super(options.log);
    this.rememberPartial = options.rememberPartial ?? 10_000;
  }

  protected takes(q: QueuedEvent): boolean {
    return (q.kind === 'user-event' && this.options.userEvents !== null) || (q.kind === 'log-event' && this.options.logEvents !== null);
  }

  /** Posts one event to the accounts that did not take it yet; true when none has to be retried. */
  protected async writeEvent(q: QueuedEvent): Promise<boolean> {
    const { userEvents, logEvents } = this.options;
    let event: MonSaasEvent | null;
    let accounts: readonly string[];
    let module: string;
    if (q.kind === 'user-event' && userEvents !== null) {
      event = userMonSaasEvent(q, userEvents.options);
      accounts = userEvents.accounts;
      module = USER_EVENTS_MONSAAS_MODULE;
    } else if (q.kind === 'log-event' && logEvents !== null) {
      event = logMonSaasEvent(q, logEvents.options);
      accounts = logEvents.accounts;
      module = LOG_EVENTS_MONSAAS_MODULE;
    } else {
      return true;
    }
    if (event === null) return true;
    const already = this.sentTo.get(q.id) ?? new Set<string>();
    const remaining = accounts.filter((a) => !already.has(a));
    if (remaining.length === 0) {
      this.sentTo.delete(q.id);
      return true;
    }
    const result = await this.options.writer.postEvent(remaining, event, module);
    for (const a of result.accounts) if (a.outcome === 'sent') already.add(a.account);
    const retry = result.accounts.some((a) => a.outcome === 'failed');
    if (!retry) {
      this.sentTo.delete(q.id);
      return true;
    }
    this.remember(q.id, already);
    return false;
  }

  private remember(id: string, accounts: Set<string>): void {
    this.sentTo.delete(id);
    this.sentTo.set(id, accounts);
    if (this.sentTo.size > this.rememberPartial) {
      const oldest = this.sentTo.keys().next();
      if (!oldest.done) this.sentTo.delete(oldest.value);
    }
  }
}

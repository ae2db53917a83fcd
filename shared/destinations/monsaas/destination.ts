/**
 * Polled data and the platform's UDP events to the monitoring SaaS (platform-formats.md §8.2 metrics
 * of health and session samples, §8.3 events): one POST per queued event to each configured account
 * (`monsaas.metric.destinationAccount` for metrics, `userEvents.sendToMonSaas.destinationAccount` /
 * `logEvents.sendToMonSaas.destinationAccount` for events), the events of a batch at once. The
 * `MonSaasWriter` retries transient failures itself and tracks what still fails (`MONSAAS_POST`,
 * modules `HEALTH_METRICS_MONSAAS` / `PROXY_SESSIONS_MONSAAS` with the server's name,
 * `USER_EVENTS_MONSAAS` / `LOG_EVENTS_MONSAAS`); an event that then failed for an account is
 * returned so the queue delivers it again.
 *
 * Choices (Svc choice):
 * - A redelivered event is posted only to the accounts that did not take it yet (remembered per
 *   event id, bounded), so an account that answered 202 does not count the event twice.
 * - Only an account outcome `failed` (an HTTP error or no answer) makes the event come back. An
 *   account without credentials or an empty event URL is a config error (refused at startup by the
 *   rules, logged at ERROR by the writer): another delivery would fail the same way.
 * - A health sample with no metric group switched on is not sent and not failed.
 * - A log event that monsaas does not take (engine performance, a disabled source, a level the flags
 *   exclude) is not sent and not failed.
 */

import type { Log } from '../../logging/log.js';
import type { QueuedEvent } from '../../queue/events.js';
import { PerEventDestination, takesPlatformKind } from '../port.js';
import type { MonSaasResult, MonSaasWriter } from './client.js';
import {
  type HealthMetricOptions,
  healthMetricPayload,
  type LogMonSaasOptions,
  logMonSaasEvent,
  type MetricOptions,
  sessionMetricPayload,
  type UserMonSaasOptions,
  userMonSaasEvent,
} from './mappers.js';

export const USER_EVENTS_MONSAAS_MODULE = 'USER_EVENTS_MONSAAS';
export const LOG_EVENTS_MONSAAS_MODULE = 'LOG_EVENTS_MONSAAS';
export const HEALTH_MONSAAS_MODULE = 'HEALTH_METRICS_MONSAAS';
export const SESSIONS_MONSAAS_MODULE = 'PROXY_SESSIONS_MONSAAS';

export interface MonSaasDestinationOptions {
  writer: Pick<MonSaasWriter, 'postEvent' | 'postMetrics'>;
  /** Accounts and event options when user events go to monsaas (§0.6), else null. */
  userEvents: { accounts: readonly string[]; options: UserMonSaasOptions } | null;
  /** Accounts and event options when log events go to monsaas (§0.6), else null. */
  logEvents: { accounts: readonly string[]; options: LogMonSaasOptions } | null;
  /** `monsaas.metric.destinationAccount` and the metric options when health samples go to monsaas (§0.6), else null or absent. */
  health?: { accounts: readonly string[]; options: HealthMetricOptions } | null;
  /** `monsaas.metric.destinationAccount` and the metric options when session samples go to monsaas (§0.6), else null or absent. */
  sessions?: { accounts: readonly string[]; options: MetricOptions } | null;
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

  takes(q: QueuedEvent): boolean {
    return takesPlatformKind(q, this.options);
  }

  /** What one event sends: to which accounts, and the POST; null when it sends nothing. */
  private sending(
    q: QueuedEvent,
  ): { accounts: readonly string[]; post: (accounts: readonly string[]) => Promise<MonSaasResult> } | null {
    const { writer, userEvents, logEvents, health, sessions } = this.options;
    if (q.kind === 'health' && health !== undefined && health !== null) {
      const payload = healthMetricPayload(q, health.options);
      return payload === null
        ? null
        : {
            accounts: health.accounts,
            post: (a) => writer.postMetrics(a, payload, HEALTH_MONSAAS_MODULE, q.sample.serverName),
          };
    }
    if (q.kind === 'user-sessions' && sessions !== undefined && sessions !== null) {
      const payload = sessionMetricPayload(q, sessions.options);
      return {
        accounts: sessions.accounts,
        post: (a) => writer.postMetrics(a, payload, SESSIONS_MONSAAS_MODULE, q.sample.serverName),
      };
    }
    if (q.kind === 'user-event' && userEvents !== null) {
      const event = userMonSaasEvent(q, userEvents.options);
      return { accounts: userEvents.accounts, post: (a) => writer.postEvent(a, event, USER_EVENTS_MONSAAS_MODULE) };
    }
    if (q.kind === 'log-event' && logEvents !== null) {
      const event = logMonSaasEvent(q, logEvents.options);
      return event === null
        ? null
        : { accounts: logEvents.accounts, post: (a) => writer.postEvent(a, event, LOG_EVENTS_MONSAAS_MODULE) };
    }
    return null;
  }

  /** Posts one event (or its metrics) to the accounts that did not take it yet; true when none has to be retried. */
  protected async writeEvent(q: QueuedEvent): Promise<boolean> {
    const sending = this.sending(q);
    if (sending === null) return true;
    const { accounts, post } = sending;
    const already = this.sentTo.get(q.id) ?? new Set<string>();
    const remaining = accounts.filter((a) => !already.has(a));
    if (remaining.length === 0) {
      this.sentTo.delete(q.id);
      return true;
    }
    const result = await post(remaining);
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

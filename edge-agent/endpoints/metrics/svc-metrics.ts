/**
 * Svc's own metrics, the ones an operator alerts on (docs/metrics.md): UDP datagrams received and
 * dropped, queue depth, dead letters and failed writes per destination, polls failed and skipped,
 * errors tracked. Each is read at scrape time from the part that counts it (Observed, the error
 * tracker); only the poll failures, which nothing else counts, are counted here.
 *
 * Counters are since Svc started (they go back to 0 at a restart, which Prometheus's `rate()` and
 * `increase()` handle).
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { awsClock } from '../../../shared/aws/clock-skew.js';
import type { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { GroupStats } from '../../../shared/queue/local/index.js';
import type { SqsQueueCounters } from '../../../shared/queue/sqs.js';
import { SVC_VERSION } from '../../../shared/version.js';
import type { PolledServer } from '../../sources/platform/startup.js';
import type { ListenerTotals } from '../../sources/udp/listener.js';
import type { Observed, PollKind } from '../observed.js';
import {
  destinationFailures,
  errorCounts,
  oldestPendingAgeSeconds,
  perListener,
  perQueueGroup,
  type Reading,
  udpDropped,
} from '../observed-readings.js';

export interface SvcMetrics {
  /** A poll failed (PollSink failures). */
  pollFailed: (kind: PollKind, serverName: string) => void;
}

interface Scraped<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  /** The current values, read from where they are counted. */
  read: () => Iterable<Reading<L>>;
}

/**
 * The options of a metric whose values are read at scrape time from where they are counted: reset,
 * then each sample added (on a reset gauge as on a counter, `inc` by the value sets it).
 */
function scrapedOptions<L extends string>(registry: Registry, { name, help, labelNames, read }: Scraped<L>) {
  return {
    name,
    help,
    labelNames,
    registers: [registry],
    collect(this: { reset(): void; inc(labels: Record<L, string>, value: number): void }) {
      this.reset();
      for (const [labels, value] of read()) this.inc(labels, value);
    },
  };
}

/** A counter whose values are totals kept elsewhere. */
function scrapedCounter<L extends string>(registry: Registry, scraped: Scraped<L>): void {
  new Counter<L>(scrapedOptions(registry, scraped));
}

/** A gauge whose values are read at scrape time. */
function scrapedGauge<L extends string>(registry: Registry, scraped: Scraped<L>): void {
  new Gauge<L>(scrapedOptions(registry, scraped));
}

/** Registers Svc's own metrics on `registry`. */
export function registerSvcMetrics(
  registry: Registry,
  observed: Observed,
  errors: Pick<ErrorTracker, 'sinceStartByType' | 'enabled'>,
  polled: readonly PolledServer[],
): SvcMetrics {
  new Gauge({
    name: 'svc_info',
    help: 'Svc: always 1; label version is the running version of Svc',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: SVC_VERSION }, 1);

  const listenerCounter = (name: string, help: string, read: (t: ListenerTotals) => number): void =>
    scrapedCounter(registry, { name, help, labelNames: ['listener'], read: () => perListener(observed, read) });
  listenerCounter(
    'svc_udp_datagrams_received_total',
    'UDP listener: datagrams read from the socket',
    (t) => t.received,
  );
  listenerCounter(
    'svc_udp_datagrams_processed_total',
    'UDP listener: accepted datagrams handled (also when excluded, filtered or of a disabled source)',
    (t) => t.processed,
  );
  listenerCounter(
    'svc_udp_datagrams_failed_total',
    'UDP listener: accepted datagrams that failed (malformed, unknown prefix, handler error)',
    (t) => t.failed,
  );
  scrapedCounter(registry, {
    name: 'svc_udp_datagrams_dropped_total',
    help: 'UDP listener: datagrams dropped, by reason (source, size, rate_limit, queue_full; kernel where the OS counts receive-buffer overflows)',
    labelNames: ['listener', 'reason'],
    read: () => udpDropped(observed),
  });

  const perGroup = (read: (stats: GroupStats) => number) => () => perQueueGroup(observed, read);
  scrapedGauge(registry, {
    name: 'svc_queue_pending_events',
    help: 'Local queue: events waiting to be written by the destination',
    labelNames: ['queue', 'destination'],
    read: perGroup((s) => s.pendingEvents),
  });
  scrapedGauge(registry, {
    name: 'svc_queue_capacity_events',
    help: 'Local queue: events it holds before it refuses more',
    labelNames: ['queue'],
    read: () => observed.queues.map(({ name, queue }) => [{ queue: name }, queue.capacity]),
  });
  scrapedCounter(registry, {
    name: 'svc_queue_dead_lettered_messages_total',
    help: 'Local queue: messages moved to the dead-letter folder after their last attempt (svc dlq replay puts them back)',
    labelNames: ['queue', 'destination'],
    read: perGroup((s) => s.deadLettered),
  });
  scrapedCounter(registry, {
    name: 'svc_destination_events_failed_total',
    help: 'Destination: events not written on a delivery attempt (each is delivered again, or dead-lettered after the last attempt)',
    labelNames: ['queue', 'destination'],
    read: () => destinationFailures(observed),
  });

  scrapedGauge(registry, {
    name: 'svc_queue_oldest_pending_age_seconds',
    help: 'Local queue: age of the oldest event waiting for the destination (since it was received); 0 when none waits',
    labelNames: ['queue', 'destination'],
    read: perGroup((s) => oldestPendingAgeSeconds(s, Date.now())),
  });

  // Forwarding to the cloud (svc edge with Svc.cloud): per destination placed in the cloud.
  const perForwarded = (read: (sqs: SqsQueueCounters) => number) => () =>
    observed.queues.flatMap(({ destinations }) =>
      destinations.flatMap((d): Reading<'destination'>[] => (d.sqs ? [[{ destination: d.name }, read(d.sqs)]] : [])),
    );
  scrapedCounter(registry, {
    name: 'svc_forward_events_total',
    help: 'Forwarding: events SQS accepted for the destination (an event sent again after a crash or partial failure counts again)',
    labelNames: ['destination'],
    read: perForwarded((c) => c.events),
  });
  scrapedCounter(registry, {
    name: 'svc_forward_sqs_messages_total',
    help: 'Forwarding: SQS messages SQS accepted (each packs many events)',
    labelNames: ['destination'],
    read: perForwarded((c) => c.messages),
  });
  scrapedCounter(registry, {
    name: 'svc_forward_sqs_requests_total',
    help: 'Forwarding: SendMessageBatch requests made, retries included',
    labelNames: ['destination'],
    read: perForwarded((c) => c.requests),
  });
  scrapedCounter(registry, {
    name: 'svc_forward_retries_total',
    help: 'Forwarding: SQS messages sent again after a retryable failure',
    labelNames: ['destination'],
    read: perForwarded((c) => c.retries),
  });
  scrapedCounter(registry, {
    name: 'svc_forward_claim_checks_total',
    help: 'Forwarding: message bodies over the SQS limit stored in the claim-check bucket',
    labelNames: ['destination'],
    read: perForwarded((c) => c.claimChecks),
  });
  scrapedGauge(registry, {
    name: 'svc_forward_unreachable',
    help: "Forwarding: 1 while the destination's SQS queue cannot be reached (its events wait in the local queue), else 0",
    labelNames: ['destination'],
    read: () =>
      observed.queues.flatMap(({ queue, destinations }) => {
        const stats = queue.stats();
        return destinations.flatMap((d): Reading<'destination'>[] =>
          d.sqs ? [[{ destination: d.name }, (stats[d.name]?.unavailableSince ?? null) === null ? 0 : 1]] : [],
        );
      }),
  });

  // The lean AWS client's clock-skew correction (shared/aws/clock-skew.ts): the process has one clock.
  scrapedGauge(registry, {
    name: 'svc_aws_clock_offset_seconds',
    help: "AWS: seconds added to this host's clock to sign AWS requests (corrected from the Date of a request AWS refused for its time); 0 while the clock is right. Present once the process has signed an AWS request",
    labelNames: [],
    read: () => (awsClock.used ? [[{}, awsClock.offsetMs / 1000]] : []),
  });

  const pollsFailed = new Counter({
    name: 'svc_polls_failed_total',
    help: 'Pollers: polls that failed (no answer, HTTP error, invalid answer), by kind and server',
    labelNames: ['kind', 'server_name'],
    registers: [registry],
  });
  // At 0 from the start, so that the first failure is an increase a `rate()` sees.
  for (const { kind, serverName } of polled) pollsFailed.inc({ kind, server_name: serverName }, 0);
  scrapedCounter(registry, {
    name: 'svc_polls_skipped_total',
    help: 'Pollers: polls skipped because the previous poll of the same target was still running; target is the server name (health) or "<server> <virtual proxy>" (sessions)',
    labelNames: ['kind', 'target'],
    read: () =>
      observed.pollGroups.flatMap(({ kind, group }) =>
        group.counts().map(({ label, skipped }): Reading<'kind' | 'target'> => [{ kind, target: label }, skipped]),
      ),
  });
  scrapedCounter(registry, {
    name: 'svc_errors_tracked_total',
    help: 'Error tracking: errors tracked, by error type (counted only when Svc.errorTracking.enable)',
    labelNames: ['error_type'],
    // Every type from the start at 0 (while tracking is on: off counts nothing), so that the first
    // error is an increase a `rate()` sees.
    read: () => errorCounts(errors).map(([type, count]) => [{ error_type: type }, count]),
  });

  scrapedCounter(registry, {
    name: 'svc_log_events_total',
    help: 'Log events: events received by the log-event listener, by source (engine, proxy, repository, scheduler, qix-perf) and level (DEBUG, INFO, WARN, ERROR, FATAL, other)',
    labelNames: ['source', 'level'],
    read: () =>
      [...(observed.logEvents?.counts() ?? [])].map(({ source, level, events }) => [{ source, level }, events]),
  });
  scrapedGauge(registry, {
    name: 'svc_client_certificate_expiry_timestamp_seconds',
    help: 'Pollers: when the platform client certificate (Svc.cert.clientCert, the label file) stops being valid, in seconds since the epoch; present while a poller uses it',
    labelNames: ['file'],
    read: () => {
      const certificate = observed.clientCertificate;
      return certificate === null ? [] : [[{ file: certificate.file }, certificate.validTo.getTime() / 1000]];
    },
  });

  registerAlertMetrics(registry, observed);

  return { pollFailed: (kind, serverName) => pollsFailed.inc({ kind, server_name: serverName }) };
}

/** The alert engine's metrics: every rule and every channel from the start, while alerts are on. */
function registerAlertMetrics(registry: Registry, observed: Observed): void {
  scrapedGauge(registry, {
    name: 'svc_alerts_firing',
    help: 'Alerts: alerts firing now, by rule (alertname) and severity; every rule at 0 while none fires. Present while alerts are on (Svc.alerts.enable, Svc.store.enable)',
    labelNames: ['rule', 'severity'],
    read: () => {
      const alerts = observed.alerts;
      if (alerts === null) return [];
      const firing = new Map<string, number>();
      const key = (rule: string, severity: string) => `${rule}\0${severity}`;
      for (const { name, severity } of alerts.rules()) firing.set(key(name, severity), 0);
      for (const record of alerts.active())
        if (record.phase === 'firing')
          firing.set(key(record.rule, record.severity), (firing.get(key(record.rule, record.severity)) ?? 0) + 1);
      return [...firing].map(([pair, count]): Reading<'rule' | 'severity'> => {
        const [rule = '', severity = ''] = pair.split('\0');
        return [{ rule, severity }, count];
      });
    },
  });
  scrapedCounter(registry, {
    name: 'svc_alert_notifications_total',
    help: 'Alerts: notifications by channel and outcome: sent (the receiver took it) or failed (not delivered after its retries); every channel at 0 from the start',
    labelNames: ['channel', 'outcome'],
    read: () =>
      (observed.alerts?.channels() ?? []).flatMap(({ name, sent, failed }): Reading<'channel' | 'outcome'>[] => [
        [{ channel: name, outcome: 'sent' }, sent],
        [{ channel: name, outcome: 'failed' }, failed],
      ]),
  });
}

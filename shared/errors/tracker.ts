/**
 * Error tracking (platform-formats.md §10.9): in-memory counts per (error type, server), reset at
 * each UTC date change with the daily summary line (daily-summary.ts fires it at 00:00 UTC), counts
 * per type since start (the metrics endpoint), and subscribers that see every tracked error (the
 * tsdb `svc_errors` points, points.ts).
 */
/**
 * The error types of §10.9, known at start: the metrics endpoint shows each one's counter at 0 from
 * the start, so that a `rate()` or `increase()` sees the first error.
 */
export const ERROR_TYPES = [
  'HEALTH_API',
  'PROXY_API',
  'APP_NAMES_EXTRACT',
  'TSDB_V1_WRITE',
  'TSDB_V2_WRITE',
  'TSDB_V3_WRITE',
  'MQTT_PUBLISH',
  'MONSAAS_POST',
  'UDP_USER_EVENT',
  'UDP_LOG_EVENT',
  // Svc's own addition: audit events that could not be written to a file destination.
  'AUDIT_FILE_WRITE',
  // Svc's own addition: a delivery the embedded store could not write (shared/destinations/store/).
  'STORE_WRITE',
  // Svc's own addition: an alert notification a channel could not deliver after its retries
  // (shared/alerts/channels/retry.ts).
  'ALERT_NOTIFY',
] as const;

/** One of ERROR_TYPES. */
export type ErrorType = (typeof ERROR_TYPES)[number];

import type { Log } from '../logging/log.js';

export const NO_SERVER = '_no_server_context';

/** What the caller knows about where an error happened (§6.10: tags written "when known"). */
export interface ErrorContext {
  /** `servers[].serverName` of the platform server concerned. */
  serverName?: string;
  /** The platform server's host (pollers). */
  host?: string;
  /** The virtual proxy polled (session poller). */
  virtualProxy?: string;
  /** The host of the destination written to (tsdb, MQTT broker, monitoring SaaS). */
  destinationHost?: string;
  /** The producing module (§10.9 "Module values"). */
  module?: string;
}

export interface TrackedError extends Omit<ErrorContext, 'serverName'> {
  type: ErrorType;
  /** `_no_server_context` when the caller named no server. */
  serverName: string;
  category: string;
  at: Date;
  error: unknown;
}

export type ErrorSubscriber = (e: TrackedError) => void;

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null && name in err ? (err as Record<string, unknown>)[name] : undefined;
}

/** CONNACK codes of refused credentials, as the MQTT writer tracks them (`code` of its error). */
const MQTT_AUTH_REFUSALS = new Set(['4', '5', '134', '135']);

/** The category of an error, first matching rule of §10.9. */
export function categorise(type: ErrorType, err: unknown): string {
  const rawCode = field(err, 'code') ?? field(field(err, 'cause'), 'code');
  const code = typeof rawCode === 'string' ? rawCode : '';
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  const status = Number(
    field(err, 'statusCode') ?? field(err, 'status') ?? field(field(err, 'response'), 'status') ?? NaN,
  );
  if (
    code === 'ETIMEDOUT' ||
    code === 'ECONNABORTED' ||
    /timeout/i.test(message) ||
    field(err, 'name') === 'TimeoutError'
  )
    return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ENOTFOUND') return 'host_not_found';
  if (code === 'ECONNRESET') return 'connection_reset';
  if (status === 401 || status === 403) return 'auth_error';
  // An MQTT broker's CONNACK refusing the user name, password or client certificate (3.1.1: 4, 5; 5: 134, 135).
  if (type === 'MQTT_PUBLISH' && MQTT_AUTH_REFUSALS.has(code)) return 'auth_error';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'http_5xx';
  if (status >= 400) return 'http_4xx';
  if (/cert|TLS|SSL/.test(message)) return 'certificate_error';
  if (field(err, 'name') === 'InvalidResponseError') return 'invalid_response';
  if (type === 'MQTT_PUBLISH') return 'mqtt_error';
  if (type === 'MONSAAS_POST') return 'monsaas_error';
  return 'unknown';
}

export interface ErrorTrackerOptions {
  /** `errorTracking.enable`: false tracks nothing (no counts, no summary, no subscribers called). */
  enabled: boolean;
  /** `errorTracking.logSummary.enable`: the day's summary line is logged when the UTC date changes. */
  logSummary?: boolean;
  log: Log;
  /** A first subscriber (tests); more come with `subscribe`. */
  sink?: ErrorSubscriber;
  now?: () => Date;
}

export class ErrorTracker {
  private counts = new Map<ErrorType, Map<string, number>>();
  /** Since start, never reset: counters must only go up. */
  private readonly sinceStart = new Map<ErrorType, number>();
  private readonly subscribers = new Set<ErrorSubscriber>();
  private day: string;

  constructor(private readonly options: ErrorTrackerOptions) {
    this.day = this.today();
    if (options.sink) this.subscribers.add(options.sink);
  }

  private today(): string {
    return (this.options.now?.() ?? new Date()).toISOString().slice(0, 10);
  }

  track(type: ErrorType, err: unknown, context: ErrorContext = {}): void {
    if (!this.options.enabled) return;
    this.rollOver();
    const serverName = context.serverName || NO_SERVER;
    const byServer = this.counts.get(type) ?? new Map<string, number>();
    byServer.set(serverName, (byServer.get(serverName) ?? 0) + 1);
    this.counts.set(type, byServer);
    this.sinceStart.set(type, (this.sinceStart.get(type) ?? 0) + 1);
    const tracked: TrackedError = {
      type,
      serverName,
      category: categorise(type, err),
      at: this.options.now?.() ?? new Date(),
      error: err,
    };
    // Only what is known: an empty value would become an empty tag.
    if (context.host) tracked.host = context.host;
    if (context.virtualProxy) tracked.virtualProxy = context.virtualProxy;
    if (context.destinationHost) tracked.destinationHost = context.destinationHost;
    if (context.module) tracked.module = context.module;
    for (const subscriber of this.subscribers) {
      try {
        subscriber(tracked);
      } catch (subscriberError) {
        // A subscriber's failure is its own: tracking it would recurse (§6.10).
        this.options.log.debug({ err: subscriberError, errorType: type }, 'an error-tracking subscriber failed');
      }
    }
  }

  /** Calls `subscriber` with every error tracked from now on; returns the unsubscribe function. */
  subscribe(subscriber: ErrorSubscriber): () => void {
    this.subscribers.add(subscriber);
    return () => this.subscribers.delete(subscriber);
  }

  /** Whether errors are counted at all (`errorTracking.enable`, the master switch). */
  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Errors tracked per type since the tracker was made (not reset by the daily summary). */
  get sinceStartByType(): ReadonlyMap<ErrorType, number> {
    return this.sinceStart;
  }

  /** `{TYPE: {total, servers: {server: n}}}` */
  summary(): { total: number; details: Record<string, { total: number; servers: Record<string, number> }> } {
    let total = 0;
    const details: Record<string, { total: number; servers: Record<string, number> }> = {};
    for (const [type, byServer] of this.counts) {
      const servers = Object.fromEntries(byServer);
      const n = [...byServer.values()].reduce((a, b) => a + b, 0);
      details[type] = { total: n, servers };
      total += n;
    }
    return { total, details };
  }

  /**
   * When the UTC date has changed since the counts began: the summary line of the day that ended
   * (when `logSummary`), then the reset. Called at 00:00 UTC (daily-summary.ts) and before each
   * tracked error, so the line comes exactly once a day, whichever comes first. True when it rolled.
   */
  rollOver(): boolean {
    if (this.today() === this.day) return false;
    if (this.options.logSummary) {
      const { total, details } = this.summary();
      this.options.log.info(
        { total, details, day: this.day },
        `Error counts today (UTC): Total=${total}, Details=${JSON.stringify(details)}`,
      );
    }
    this.reset();
    return true;
  }

  private reset(): void {
    this.counts = new Map();
    this.day = this.today();
  }
}

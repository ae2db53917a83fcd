/**
 * Error tracking (platform-formats.md §10.9): in-memory counts per (error type, server), a daily
 * summary at 00:00 UTC, and an optional sink for one point per error (the tsdb `svc_errors`).
 */
export type ErrorType =
  | 'HEALTH_API'
  | 'PROXY_API'
  | 'APP_NAMES_EXTRACT'
  | 'TSDB_V1_WRITE'
  | 'TSDB_V2_WRITE'
  | 'TSDB_V3_WRITE'
  | 'MQTT_PUBLISH'
  | 'MONSAAS_POST'
  | 'UDP_USER_EVENT'
  | 'UDP_LOG_EVENT'
  /** Svc's own addition: audit events that could not be written to a file destination. */
  | 'AUDIT_FILE_WRITE';
import type { Log } from '../logging/log.js';

export const NO_SERVER = '_no_server_context';

export interface TrackedError {
  type: ErrorType;
  serverName: string;
  module?: string;
  category: string;
  at: Date;
  error: unknown;
}

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null && name in err ? (err as Record<string, unknown>)[name] : undefined;
}

/** The category of an error, first matching rule of §10.9. */
export function categorise(type: ErrorType, err: unknown): string {
  const rawCode = field(err, 'code') ?? field(field(err, 'cause'), 'code');
  const code = typeof rawCode === 'string' ? rawCode : '';
  const message = err instanceof Error ? err.message : typeof err === 'string' ? err : '';
  const status = Number(field(err, 'statusCode') ?? field(err, 'status') ?? field(field(err, 'response'), 'status') ?? NaN);
  if (code === 'ETIMEDOUT' || code === 'ECONNABORTED' || /timeout/i.test(message) || field(err, 'name') === 'TimeoutError') return 'timeout';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ENOTFOUND') return 'host_not_found';
  if (code === 'ECONNRESET') return 'connection_reset';
  if (status === 401 || status === 403) return 'auth_error';
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

export class ErrorTracker {
  private counts = new Map<ErrorType, Map<string, number>>();
  private day: string;

  constructor(
    private readonly options: { enabled: boolean; log: Log; sink?: (e: TrackedError) => void; now?: () => Date },
  ) {
    this.day = this.today();
  }

  private today(): string {
    return (this.options.now?.() ?? new Date()).toISOString().slice(0, 10);
  }

  track(type: ErrorType, err: unknown, context: { serverName?: string; module?: string } = {}): void {
    if (!this.options.enabled) return;
    if (this.today() !== this.day) this.reset();
    const serverName = context.serverName || NO_SERVER;
    const byServer = this.counts.get(type) ?? new Map<string, number>();
    byServer.set(serverName, (byServer.get(serverName) ?? 0) + 1);
    this.counts.set(type, byServer);
    this.options.sink?.({ type, serverName, ...(context.module ? { module: context.module } : {}), category: categorise(type, err), at: this.options.now?.() ?? new Date(), error: err });
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

  /** The daily summary line, then a reset (called at 00:00 UTC). */
  logSummaryAndReset(): void {
    const { total, details } = this.summary();
    this.options.log.info({ total, details }, `Error counts today (UTC): Total=${total}, Details=${JSON.stringify(details)}`);
    this.reset();
  }

  private reset(): void {
    this.counts = new Map();
    this.day = this.today();
  }
}

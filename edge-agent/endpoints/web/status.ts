/**
 * What the live status page shows (GET /status.json): Svc's own in-memory state only, read when it
 * is asked for, so it works without a tsdb or Grafana. The parts are those the metrics endpoint reads
 * (Observed), the pollers' results (PollHistory) and the errors tracked (a subscriber of the
 * ErrorTracker keeps the last RECENT_ERRORS).
 *
 * Rates (datagrams/s, drops/s, writes/s) are counter differences over the time since an earlier
 * reading at least MIN_RATE_WINDOW_MS old, so several open pages, each polling, do not shrink the
 * window to nothing. The first reading has no rate (null).
 *
 * Nothing secret is in it: servers by their configured name and description (no host), listeners by
 * type, destinations by name; errors by type, category, server name and module, never a message
 * (a message can quote a URL with its credentials); alert channels by name, never their target or
 * last error.
 */
import { type AlertSeverity, LABELS_SHOWN_APART, labelPairs } from '../../../shared/alerts/model.js';
import { alertViews } from '../../../shared/alerts/silences.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { ErrorTracker, ErrorType, TrackedError } from '../../../shared/errors/tracker.js';
import { SVC_VERSION } from '../../../shared/version.js';
import { DROP_REASONS, type DropReason } from '../../sources/udp/listener.js';
import type { Observed } from '../observed.js';
import type { HealthPoint, PollHistory } from './poll-history.js';

export const RECENT_ERRORS = 10;
/** The firing alerts the status names; the others are counted (`moreFiring`). */
export const FIRING_ALERTS_NAMED = 5;
export const MIN_RATE_WINDOW_MS = 2_000;

export interface ServerStatus {
  name: string;
  description: string;
  /** `waiting`: no poll answered yet; `failed`: the last poll failed. */
  state: 'ok' | 'failed' | 'waiting';
  lastPollAt: string | null;
  lastPollAgeSeconds: number | null;
  lastFailureAt: string | null;
  engineVersion: string | null;
  uptime: string | null;
  cpu: number | null;
  memAllocatedMb: number | null;
  memFreeMb: number | null;
  sessions: number | null;
  users: number | null;
  /** Sessions per virtual proxy (session poller), when it runs. */
  proxySessions: { virtualProxy: string; sessions: number }[];
  /** The last hour: times (s since the epoch), CPU %, sessions. */
  trend: { t: number[]; cpu: number[]; sessions: number[]; memAllocatedMb: number[] };
}

export interface ListenerStatus {
  type: string;
  received: number;
  processed: number;
  failed: number;
  datagramsPerSecond: number | null;
  dropped: Partial<Record<DropReason, number>>;
  droppedPerSecond: number | null;
  /** False where the OS has no per-socket count of kernel drops (the `kernel` reason is then absent). */
  kernelCounted: boolean;
}

export interface DestinationStatus {
  queue: string;
  name: string;
  pendingEvents: number;
  queueCapacity: number;
  written: number;
  writesPerSecond: number | null;
  failed: number;
  deadLettered: number;
  /** Where it is written: `edge` (by this process) or `cloud` (forwarded to its SQS queue, `svc edge` with Svc.cloud). */
  place: 'edge' | 'cloud';
  /** For a forwarded destination: whether its SQS queue cannot be reached now (its events wait). */
  unreachable: boolean;
}

/** What the alert engine holds now (Observed.alerts); all zero and empty while alerts are off (`empty.alerts` says why). */
export interface AlertsStatus {
  enabled: boolean;
  /** The alerts firing, by severity (silenced ones included: they fire, they are only not sent). */
  firing: Record<AlertSeverity, number>;
  /** The alerts whose condition holds and whose `for` has not passed yet. */
  pending: number;
  /** The firing alerts, the most severe first, then the most recent: at most FIRING_ALERTS_NAMED. */
  firingAlerts: {
    rule: string;
    severity: AlertSeverity;
    /** The `server` label, or null when the alert is not about a server. */
    server: string | null;
    /** Its other labels (not alertname, severity, server) as `key=value, …`, which tell apart the alerts of a rule (`destination=tsdb`); null when none. */
    about: string | null;
    /** Its fingerprint: /alerts#<fingerprint> marks it on the Alerts page. */
    fingerprint: string;
    firingSince: string;
  }[];
  /** Firing alerts besides those in firingAlerts. */
  moreFiring: number;
  /** The channels set (Svc.alerts.channels). */
  channels: number;
  /** The channels whose last notification was not delivered, by name, with their failures since start. */
  failingChannels: { name: string; failed: number }[];
}

export interface StatusReport {
  generatedAt: string;
  version: string;
  mode: string;
  uptimeSeconds: number;
  /** Why a section is empty (what to set), or null when it has entries. */
  empty: {
    servers: string | null;
    listeners: string | null;
    destinations: string | null;
    errors: string | null;
    /** Why alerts are off (what to set), or null while the engine runs. */
    alerts: string | null;
  };
  pollingIntervalMs: number;
  alerts: AlertsStatus;
  servers: ServerStatus[];
  listeners: ListenerStatus[];
  destinations: DestinationStatus[];
  errors: {
    enabled: boolean;
    byType: { type: ErrorType; sinceStart: number }[];
    recent: { at: string; type: ErrorType; category: string; serverName: string; module: string | null }[];
  };
}

interface Reading {
  atMs: number;
  counters: Map<string, number>;
}

export interface StatusModelOptions {
  config: SvcConfig;
  mode: string;
  observed: Observed;
  history: PollHistory;
  errors: Pick<ErrorTracker, 'sinceStartByType' | 'subscribe'>;
  now?: () => number;
}

export class StatusModel {
  private readonly recent: TrackedError[] = [];
  private unsubscribe: (() => void) | null = null;
  private readonly startedMs: number;
  private readonly now: () => number;
  /** Earlier readings of the counters: the newest one at least MIN_RATE_WINDOW_MS old, and any younger. */
  private readings: Reading[] = [];

  constructor(private readonly options: StatusModelOptions) {
    this.now = options.now ?? Date.now;
    this.startedMs = this.now();
  }

  /** Starts keeping the recent errors. */
  open(): void {
    this.unsubscribe ??= this.options.errors.subscribe((e) => {
      this.recent.push(e);
      if (this.recent.length > RECENT_ERRORS) this.recent.shift();
    });
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  report(): StatusReport {
    const { config, observed, history, mode } = this.options;
    const nowMs = this.now();
    const counters = new Map<string, number>();
    const old = this.readings.filter((r) => nowMs - r.atMs >= MIN_RATE_WINDOW_MS);
    const oldEnough = old[old.length - 1];
    // Until a reading is old enough (the first seconds), the oldest one there is.
    const base = oldEnough ?? this.readings[0] ?? null;
    const rate = (key: string, value: number): number | null => {
      counters.set(key, value);
      const before = base?.counters.get(key);
      if (base === null || before === undefined) return null;
      const seconds = (nowMs - base.atMs) / 1000;
      return seconds > 0 ? Math.max(0, (value - before) / seconds) : null;
    };

    const servers = config.serversToMonitor.servers.map((server): ServerStatus => {
      const h = history.of(server.serverName);
      const last = h.last;
      const pick = (read: (p: HealthPoint) => number): number | null => (last ? read(last) : null);
      return {
        name: server.serverName,
        description: server.serverDescription,
        state: h.failedAtMs !== null ? 'failed' : last ? 'ok' : 'waiting',
        lastPollAt: last ? new Date(last.atMs).toISOString() : null,
        lastPollAgeSeconds: last ? Math.max(0, Math.round((nowMs - last.atMs) / 1000)) : null,
        lastFailureAt: h.failedAtMs !== null ? new Date(h.failedAtMs).toISOString() : null,
        engineVersion: h.engineVersion,
        uptime: h.uptime,
        cpu: pick((p) => p.cpu),
        memAllocatedMb: pick((p) => p.memAllocatedMb),
        memFreeMb: pick((p) => p.memFreeMb),
        sessions: pick((p) => p.sessions),
        users: pick((p) => p.users),
        proxySessions: [...h.proxySessions].map(([virtualProxy, sessions]) => ({ virtualProxy, sessions })),
        trend: {
          // Seconds with their milliseconds: two polls within one second keep their order on the chart.
          t: h.trend.map((p) => p.atMs / 1000),
          cpu: h.trend.map((p) => p.cpu),
          sessions: h.trend.map((p) => p.sessions),
          memAllocatedMb: h.trend.map((p) => p.memAllocatedMb),
        },
      };
    });

    const listeners = observed.listeners.map((listener): ListenerStatus => {
      const t = listener.totals();
      const reasons = DROP_REASONS.filter((r) => r !== 'kernel' || t.kernelCounted);
      const droppedTotal = reasons.reduce((sum, r) => sum + t.dropped[r], 0);
      return {
        type: listener.queueType,
        received: t.received,
        processed: t.processed,
        failed: t.failed,
        datagramsPerSecond: rate(`udp/${listener.queueType}/received`, t.received),
        dropped: Object.fromEntries(reasons.map((r) => [r, t.dropped[r]])),
        droppedPerSecond: rate(`udp/${listener.queueType}/dropped`, droppedTotal),
        kernelCounted: t.kernelCounted,
      };
    });

    const destinations = observed.queues.flatMap(({ name: queue, queue: q, destinations: ds }) => {
      const stats = q.stats();
      return ds.map(
        (d): DestinationStatus => ({
          queue,
          name: d.name,
          pendingEvents: stats[d.name]?.pendingEvents ?? 0,
          queueCapacity: q.capacity,
          written: d.writtenEvents,
          writesPerSecond: rate(`dest/${queue}/${d.name}`, d.writtenEvents),
          failed: d.failedWrites,
          deadLettered: stats[d.name]?.deadLettered ?? 0,
          place: d.sqs ? 'cloud' : 'edge',
          unreachable: (stats[d.name]?.unavailableSince ?? null) !== null,
        }),
      );
    });

    this.readings = [
      ...(oldEnough ? [oldEnough] : []),
      ...this.readings.filter((r) => nowMs - r.atMs < MIN_RATE_WINDOW_MS),
      { atMs: nowMs, counters },
    ];

    const tracking = config.errorTracking.enable;
    return {
      generatedAt: new Date(nowMs).toISOString(),
      version: SVC_VERSION,
      mode,
      uptimeSeconds: Math.round((nowMs - this.startedMs) / 1000),
      empty: {
        servers: servers.length > 0 ? null : 'no servers monitored: set Svc.serversToMonitor.servers',
        listeners:
          listeners.length > 0
            ? null
            : 'no UDP listener: set Svc.userEvents.enable, or enable a source in Svc.logEvents.source',
        destinations:
          destinations.length > 0
            ? null
            : 'no queued destination: enable Svc.tsdbConfig, Svc.mqttConfig or Svc.monsaas and send events to it',
        errors: !tracking
          ? 'error tracking is off: set Svc.errorTracking.enable'
          : this.recent.length === 0
            ? 'no errors since Svc started'
            : null,
        alerts: observed.alerts ? null : alertsOff(config),
      },
      pollingIntervalMs: config.serversToMonitor.pollingInterval,
      alerts: alertsStatus(observed, nowMs),
      servers,
      listeners,
      destinations,
      errors: {
        enabled: tracking,
        byType: [...this.options.errors.sinceStartByType].map(([type, sinceStart]) => ({ type, sinceStart })),
        recent: this.recent
          .map((e) => ({
            at: e.at.toISOString(),
            type: e.type,
            category: e.category,
            serverName: e.serverName,
            module: e.module ?? null,
          }))
          .reverse(),
      },
    };
  }
}

/** Why Observed.alerts is null, in one line: what to set. */
function alertsOff(config: SvcConfig): string {
  if (!config.alerts.enable) return 'alerts are off: Svc.alerts.enable is false';
  if (!config.store.enable)
    return 'alerts are off: they keep their state in the embedded store, and Svc.store.enable is false';
  return 'alerts are off: the alert engine is not running';
}

function alertsStatus(observed: Observed, nowMs: number): AlertsStatus {
  const firing: Record<AlertSeverity, number> = { critical: 0, warning: 0, info: 0 };
  const engine = observed.alerts;
  if (!engine)
    return { enabled: false, firing, pending: 0, firingAlerts: [], moreFiring: 0, channels: 0, failingChannels: [] };
  // Sorted as the Alerts page sorts them; silences are not read here (the count is of what fires).
  const active = alertViews(engine.active(), [], nowMs);
  const fired = active.filter((alert) => alert.phase === 'firing');
  for (const alert of fired) firing[alert.severity] += 1;
  const channels = engine.channels();
  return {
    enabled: true,
    firing,
    pending: active.length - fired.length,
    firingAlerts: fired.slice(0, FIRING_ALERTS_NAMED).map((alert) => ({
      rule: alert.rule,
      severity: alert.severity,
      server: alert.labels.server ?? null,
      about: labelPairs(alert.labels, [...LABELS_SHOWN_APART, 'server']).join(', ') || null,
      fingerprint: alert.fingerprint,
      firingSince: new Date(alert.firedAt ?? alert.activeSince).toISOString(),
    })),
    moreFiring: Math.max(0, fired.length - FIRING_ALERTS_NAMED),
    channels: channels.length,
    failingChannels: channels
      .filter((channel) => channel.failing)
      .map((channel) => ({ name: channel.name, failed: channel.failed })),
  };
}

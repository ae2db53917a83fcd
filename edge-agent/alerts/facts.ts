/**
 * The alert rules' facts (shared/alerts/model.ts `Facts`): what Svc knows now, as the labelled
 * numbers of the field catalog (shared/alerts/rules/fields.ts). Read when an evaluation asks, from
 * where each part already counts (Observed, the error tracker), as the metrics endpoint reads them;
 * only what the pollers hand over is kept here, by a PollSink of its own (AlertPollSink): each
 * server's last health answer and whether it answered, the sessions per server and virtual proxy,
 * and the failed polls.
 */
import type { FactSample, Facts } from '../../shared/alerts/model.js';
import { HEALTH_FIELDS } from '../../shared/alerts/rules/fields.js';
import type { ErrorTracker } from '../../shared/errors/tracker.js';
import type { HealthBody, HealthSample, ServerTags, SessionSample } from '../../shared/platform/polled.js';
import type { GroupStats } from '../../shared/queue/local/index.js';
import { sessionUsers } from '../../shared/store/rows.js';
import type { Observed } from '../endpoints/observed.js';
import {
  destinationFailures,
  errorCounts,
  oldestPendingAgeSeconds,
  perListener,
  perQueueGroup,
  type Reading,
  udpDropped,
} from '../endpoints/observed-readings.js';
import { type PollSink, sessionSampleKey } from '../sources/platform/sink.js';
import type { PolledServer } from '../sources/platform/startup.js';

const DAY_MS = 86_400_000;

/** One server and virtual proxy's last session answer. */
interface Sessions {
  server: string;
  virtualProxy: string;
  count: number;
  users: number;
}

/**
 * The pollers' results for the alert rules: a server is up (1) from its first answered health poll,
 * down (0) from a failed one, and absent before either; its health values are those of its last
 * answer, and absent while its last poll failed (nothing stale shown as current). Failed polls are
 * counted per kind and server, from 0 at the start for every server polled.
 */
export class AlertPollSink implements PollSink {
  private readonly up = new Map<string, 0 | 1>();
  private readonly bodies = new Map<string, HealthBody>();
  private readonly sessionsByKey = new Map<string, Sessions>();
  private readonly failed = new Map<string, { kind: PolledServer['kind']; server: string; count: number }>();

  constructor(polled: readonly PolledServer[] = []) {
    for (const { kind, serverName } of polled)
      this.failed.set(failedKey(kind, serverName), { kind, server: serverName, count: 0 });
  }

  health(sample: HealthSample): void {
    this.up.set(sample.serverName, 1);
    this.bodies.set(sample.serverName, sample.body);
  }

  healthFailed(serverName: string): void {
    this.up.set(serverName, 0);
    this.bodies.delete(serverName);
    this.countFailure('health', serverName);
  }

  sessions(sample: SessionSample): void {
    this.sessionsByKey.set(sessionSampleKey(sample.serverName, sample.tags), {
      server: sample.serverName,
      virtualProxy: sample.virtualProxy,
      count: sample.sessions.length,
      users: sessionUsers(sample).length,
    });
  }

  sessionsFailed(serverName: string, tags: ServerTags): void {
    this.sessionsByKey.delete(sessionSampleKey(serverName, tags));
    this.countFailure('sessions', serverName);
  }

  /** `server.up` */
  serverUp(): FactSample[] {
    return [...this.up].map(([server, value]) => ({ labels: { server }, value }));
  }

  /** A value of each server's last health answer. */
  healthValues(read: (body: HealthBody) => number): FactSample[] {
    return [...this.bodies].map(([server, body]) => ({ labels: { server }, value: read(body) }));
  }

  /** `sessions.count` or `sessions.users` */
  sessionValues(read: (sessions: Sessions) => number): FactSample[] {
    return [...this.sessionsByKey.values()].map((s) => ({
      labels: { server: s.server, virtualProxy: s.virtualProxy },
      value: read(s),
    }));
  }

  /** `polls.failed` */
  pollsFailed(): FactSample[] {
    return [...this.failed.values()].map(({ kind, server, count }) => ({ labels: { kind, server }, value: count }));
  }

  private countFailure(kind: PolledServer['kind'], server: string): void {
    const key = failedKey(kind, server);
    const found = this.failed.get(key);
    if (found) found.count++;
    else this.failed.set(key, { kind, server, count: 1 });
  }
}

function failedKey(kind: string, server: string): string {
  return `${kind}\u0000${server}`;
}

/** Committed over committed plus free memory; 0 when the engine reports neither. */
function memoryUsedRatio(body: HealthBody): number {
  const total = body.mem.committed + body.mem.free;
  return total > 0 ? body.mem.committed / total : 0;
}

/** Where the facts are read from. */
export interface FactSources {
  observed: Observed;
  errors: Pick<ErrorTracker, 'sinceStartByType' | 'enabled'>;
  polls: AlertPollSink;
}

type Reader = (at: number) => FactSample[];

/** Reads the facts of every field of the catalog at an evaluation. */
export class AlertFacts {
  private readonly readers: ReadonlyMap<string, Reader>;

  constructor({ observed, errors, polls }: FactSources) {
    /** Readings as the facts' samples. */
    const samples =
      <L extends string>(read: (at: number) => Reading<L>[]): Reader =>
      (at) =>
        read(at).map(([labels, value]) => ({ labels, value }));
    const perGroup = (read: (stats: GroupStats, at: number) => number): Reader =>
      samples((at) => perQueueGroup(observed, (stats) => read(stats, at)));
    const readers: [string, Reader][] = [
      ['server.up', () => polls.serverUp()],
      ['server.memoryUsedRatio', () => polls.healthValues(memoryUsedRatio)],
      ...HEALTH_FIELDS.map(({ field, gauge }): [string, Reader] => [field, () => polls.healthValues(gauge.value)]),
      ['sessions.count', () => polls.sessionValues((s) => s.count)],
      ['sessions.users', () => polls.sessionValues((s) => s.users)],
      ['udp.received', samples(() => perListener(observed, (totals) => totals.received))],
      ['udp.dropped', samples(() => udpDropped(observed))],
      ['queue.pending', perGroup((stats) => stats.pendingEvents)],
      ['queue.oldestAgeSeconds', perGroup(oldestPendingAgeSeconds)],
      ['destination.failedWrites', samples(() => destinationFailures(observed))],
      ['queue.deadLettered', perGroup((stats) => stats.deadLettered)],
      [
        'logEvents',
        () =>
          [...(observed.logEvents?.details() ?? [])].map(({ source, level, server, category, events }) => ({
            labels: { source, level, server, category },
            value: events,
          })),
      ],
      ['errors', () => errorCounts(errors).map(([type, value]) => ({ labels: { type }, value }))],
      ['polls.failed', () => polls.pollsFailed()],
      [
        'certificate.daysLeft',
        (at) => {
          const certificate = observed.clientCertificate;
          return certificate === null
            ? []
            : [{ labels: { file: certificate.file }, value: (certificate.validTo.getTime() - at) / DAY_MS }];
        },
      ],
    ];
    this.readers = new Map(readers);
  }

  /** The fields it reads: every field of the catalog. */
  get fields(): readonly string[] {
    return [...this.readers.keys()];
  }

  /** The facts at `at`: each field read once, when a rule first asks for it. */
  at(at: number): Facts {
    const read = new Map<string, readonly FactSample[]>();
    return {
      at,
      samples: (field) => {
        let samples = read.get(field);
        if (samples === undefined) {
          samples = this.readers.get(field)?.(at) ?? [];
          read.set(field, samples);
        }
        return samples;
      },
    };
  }
}

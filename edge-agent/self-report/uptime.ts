/**
 * The uptime monitor (platform-formats.md §10.4): at start and at every occurrence of
 * `uptimeMonitor.frequency` it logs, at `uptimeMonitor.logLevel`, a separator, the iteration number,
 * the uptime and the memory figures; then writes a `svc_memory_usage` point (§6.9) through the
 * platform pipeline's durable queue (a `points` event of module SVC_MEMORY, as the error tracker's
 * points go) and posts the monsaas uptime metrics (§8.2) to `uptimeMonitor.storeMonSaas.destinationAccount`.
 *
 * Choices (Svc choice): the monsaas metrics are posted directly with the monsaas writer (retried as
 * §8, a failure tracked as MONSAAS_POST with module UPTIME_MONSAAS), not queued: they are a reading
 * of now, and the next tick sends a fresh one. A point that cannot be queued is logged at WARN and
 * dropped for the same reason.
 */
import type { LogLevelName } from '../../shared/config/builders.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import type { MonSaasWriter } from '../../shared/destinations/monsaas/client.js';
import { type UptimeSample, uptimeMetricPayload } from '../../shared/destinations/monsaas/mappers.js';
import { fieldsOf, SVC_MEMORY_USAGE, tagsOf } from '../../shared/destinations/tsdb/datamodel.js';
import { pointToJson } from '../../shared/destinations/tsdb/mappers.js';
import type { Log } from '../../shared/logging/log.js';
import { type JsonPoint, pointsEvent } from '../../shared/queue/events.js';
import type { PointClock } from '../../shared/queue/point-clock.js';
import type { EventQueue } from '../../shared/queue/port.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { ScheduledTask } from '../../shared/runtime/schedule.js';
import { groupDigits } from '../../shared/util/numbers.js';
import { SVC_VERSION } from '../../shared/version.js';

/** §10.9: the module of the memory points (tsdb write errors) and of the monsaas uptime metrics. */
export const SVC_MEMORY_MODULE = 'SVC_MEMORY';
export const UPTIME_MONSAAS_MODULE = 'UPTIME_MONSAAS';

/** A log with Svc's six levels (the service logger has them all). */
export type LevelLog = Log & Record<LogLevelName, (obj: object, msg: string) => void>;

const MB = 1_048_576;
const SEPARATOR = '--------------------------------------------------------';

/** MB with 2 decimals, as a number (§6.9) . */
export function megabytes(bytes: number): number {
  return Math.round((bytes / MB) * 100) / 100;
}

/** §10.4 (Svc choice): `<d> days, <h> hours, <m> minutes, <s> seconds` of whole seconds. */
export function formatUptime(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const d = Math.floor(total / 86_400);
  const h = Math.floor((total % 86_400) / 3_600);
  const m = Math.floor((total % 3_600) / 60);
  const s = total % 60;
  return `${d} days, ${h} hours, ${m} minutes, ${s} seconds`;
}

/** §10.4: the lines of one tick, in order. */
export function uptimeLines(iteration: number, sample: UptimeSample): string[] {
  const mb = (bytes: number): string => megabytes(bytes).toFixed(2);
  return [
    SEPARATOR,
    `Iteration # ${groupDigits(iteration)}`,
    `Svc uptime: ${formatUptime(sample.uptimeMs)}`,
    `Memory used (heap used): ${mb(sample.heapUsed)} MB`,
    `Memory allocated (heap total): ${mb(sample.heapTotal)} MB`,
    `External memory: ${mb(sample.external)} MB`,
    `Process memory (RSS): ${mb(sample.rss)} MB`,
  ];
}

/** §6.9: the `svc_memory_usage` point of one sample. */
export function memoryPoint(sample: UptimeSample, instanceTag: string, timeNs: bigint): JsonPoint {
  return pointToJson({
    measurement: SVC_MEMORY_USAGE.names[0],
    tags: tagsOf(SVC_MEMORY_USAGE, { svc_instance: instanceTag, version: SVC_VERSION }),
    fields: fieldsOf(SVC_MEMORY_USAGE, {
      heap_used: megabytes(sample.heapUsed),
      heap_total: megabytes(sample.heapTotal),
      external: megabytes(sample.external),
      process_memory: megabytes(sample.rss),
    }),
    timeNs,
  });
}

/** The process's figures now. */
export function sampleProcess(): UptimeSample {
  const m = process.memoryUsage();
  return {
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    rss: m.rss,
    uptimeMs: Math.round(process.uptime() * 1000),
  };
}

export interface UptimeMonitorOptions {
  settings: SvcConfig['uptimeMonitor'];
  log: LevelLog;
  clock: PointClock;
  /** The platform pipeline's queue when the memory points are wanted (§6.9 gating), else null. */
  queue: EventQueue | null;
  /** The monsaas writer when the uptime metrics are wanted (§8.2 gating), else null. */
  monsaas: Pick<MonSaasWriter, 'postMetrics'> | null;
  /** The figures of a tick; default the process's own. */
  sample?: () => UptimeSample;
}

/** The uptime monitor as a component: at start, then per schedule; `stop` ends the timer. */
export class UptimeMonitor implements Component {
  readonly name = 'uptime monitor';
  private readonly task: ScheduledTask;
  private iteration = 0;

  constructor(private readonly uptime: UptimeMonitorOptions) {
    this.task = new ScheduledTask({
      name: this.name,
      schedule: uptime.settings.frequency,
      task: () => this.tick(),
      onSkip: (skipped) =>
        uptime.log.warn({ skipped }, 'uptime monitor: the previous tick is still running; this one is skipped'),
      onError: (err) => uptime.log.error({ err }, 'uptime monitor tick failed'),
    });
  }

  /** Ticks done, the one at start included. */
  get iterations(): number {
    return this.iteration;
  }

  start(): Promise<void> {
    return this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
  }

  private async tick(): Promise<void> {
    const { settings, log, clock, queue, monsaas } = this.uptime;
    this.iteration += 1;
    const sample = (this.uptime.sample ?? sampleProcess)();
    const level = settings.logLevel;
    for (const line of uptimeLines(this.iteration, sample)) log[level]({ uptimeMonitor: this.iteration }, line);

    const now = Date.now();
    const timeNs = clock.next(now);
    const sends: Promise<unknown>[] = [];
    if (queue !== null) {
      const point = memoryPoint(sample, settings.storeInTsdb.instanceTag, timeNs);
      sends.push(
        queue.send([pointsEvent(SVC_MEMORY_MODULE, [point])]).catch((err: unknown) => {
          log.warn(
            { err, measurement: point.measurement },
            `uptime monitor: the ${point.measurement} point could not be queued; dropped`,
          );
        }),
      );
    }
    if (monsaas !== null) {
      const store = settings.storeMonSaas;
      const payload = uptimeMetricPayload(sample, timeNs.toString(), {
        staticAttributes: store.attribute.static,
        svcVersion: store.attribute.dynamic.svcVersion.enable ? SVC_VERSION : null,
        intervalMs: this.task.schedule.gapAfter(now) ?? 0,
        memory: store.metric.dynamic.svcMemoryUsage.enable,
        uptime: store.metric.dynamic.svcUptime.enable,
      });
      if (payload !== null) sends.push(monsaas.postMetrics(store.destinationAccount, payload, UPTIME_MONSAAS_MODULE));
    }
    await Promise.all(sends);
  }
}

/**
 * The polled values on the metrics endpoint (platform-formats.md §9): a PollSink that keeps the
 * last successful sample of each server (health) and of each server and virtual proxy (sessions),
 * and gauges that show exactly those samples at each scrape.
 *
 * A failed poll removes its sample, so the server's series disappear instead of showing stale
 * values as current; the next successful poll brings them back. Labels: the server tags (`host`,
 * `server_name`, `server_description`, then `serverTagsDefinition` in order), plus each metric's own.
 */
import { Gauge, type Registry } from 'prom-client';
import {
  ENGINE_METADATA,
  HEALTH_GAUGES,
  serverLabelNames,
  USER_SESSION_TOTAL,
} from '../../../shared/platform/metrics-endpoint.js';
import type { HealthSample, ServerTags, SessionSample } from '../../../shared/platform/polled.js';
import { type PollSink, sessionSampleKey } from '../../sources/platform/sink.js';
import type { PollKind } from '../observed.js';

export interface PollMetricsOptions {
  registry: Registry;
  serverTagsDefinition: readonly string[];
  /** Each failed poll (Svc's own `svc_polls_failed_total`). */
  onFailed: (kind: PollKind, serverName: string) => void;
}

export class PollMetrics implements PollSink {
  private readonly healthSamples = new Map<string, HealthSample>();
  private readonly sessionSamples = new Map<string, SessionSample>();

  constructor(private readonly options: PollMetricsOptions) {
    const serverLabels = serverLabelNames(options.serverTagsDefinition);
    const labelsOf = (tags: ServerTags, names: readonly string[]): Record<string, string> =>
      Object.fromEntries(names.map((name) => [name, tags[name] ?? '']));
    const registers = [options.registry];
    const health = this.healthSamples;
    for (const metric of HEALTH_GAUGES) {
      new Gauge({
        name: metric.name,
        help: metric.help,
        labelNames: serverLabels,
        registers,
        collect() {
          this.reset();
          for (const sample of health.values())
            this.set(labelsOf(sample.tags, serverLabels), metric.value(sample.body));
        },
      });
    }
    const metadataLabels = [...serverLabels, ...ENGINE_METADATA.labels];
    new Gauge({
      name: ENGINE_METADATA.name,
      help: ENGINE_METADATA.help,
      labelNames: metadataLabels,
      registers,
      collect() {
        this.reset();
        for (const sample of health.values())
          this.set(
            {
              ...labelsOf(sample.tags, serverLabels),
              engine_version: sample.body.version,
              engine_started: sample.body.started,
            },
            1,
          );
      },
    });
    const sessionLabels = [...serverLabels, ...USER_SESSION_TOTAL.labels];
    const sessions = this.sessionSamples;
    new Gauge({
      name: USER_SESSION_TOTAL.name,
      help: USER_SESSION_TOTAL.help,
      labelNames: sessionLabels,
      registers,
      collect() {
        this.reset();
        for (const sample of sessions.values()) this.set(labelsOf(sample.tags, sessionLabels), sample.sessions.length);
      },
    });
  }

  health(sample: HealthSample): void {
    this.healthSamples.set(sample.serverName, sample);
  }

  healthFailed(serverName: string): void {
    this.healthSamples.delete(serverName);
    this.options.onFailed('health', serverName);
  }

  sessions(sample: SessionSample): void {
    this.sessionSamples.set(sessionSampleKey(sample.serverName, sample.tags), sample);
  }

  sessionsFailed(serverName: string, tags: ServerTags): void {
    this.sessionSamples.delete(sessionSampleKey(serverName, tags));
    this.options.onFailed('sessions', serverName);
  }
}

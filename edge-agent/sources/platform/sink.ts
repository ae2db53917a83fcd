/**
 * Where the pollers hand their results: every output of polled data implements this (the platform
 * pipeline's queue for tsdb, MQTT and monsaas; the metrics endpoint's gauges), and the pollers call
 * each one. A failure is reported too, so an output that presents current values (the metrics
 * endpoint) drops what it holds for that server instead of showing stale values as current.
 */
import { USER_SESSION_TOTAL } from '../../../shared/platform/metrics-endpoint.js';
import type { HealthSample, ServerTags, SessionSample } from '../../../shared/platform/polled.js';

/** The session tag that tells one virtual proxy's sample from another's (§6.2). */
export const VIRTUAL_PROXY_TAG = USER_SESSION_TOTAL.labels[0];

/**
 * What a sink keeps one session sample under: the server and the virtual proxy of its tags, so a
 * failed poll (which has only the tags) removes the sample the last successful one left.
 */
export function sessionSampleKey(serverName: string, tags: ServerTags): string {
  return `${serverName}\u0000${tags[VIRTUAL_PROXY_TAG] ?? ''}`;
}

export interface PollSink {
  /** One successful health poll (§4); `receivedAtMs` is when its response arrived (§0.3). */
  health(sample: HealthSample, receivedAtMs: number): void;
  /** A health poll of `serverName` failed (its error is tracked and logged by the poller). */
  healthFailed(serverName: string, tags: ServerTags): void;
  /** One successful session poll of one server and virtual proxy (§5.1). */
  sessions(sample: SessionSample, receivedAtMs: number): void;
  /** A session poll failed; `tags` are the session tags (server tags + virtual proxy + session host). */
  sessionsFailed(serverName: string, tags: ServerTags): void;
}

/** Every sink, in order. */
export function fanOut(sinks: readonly PollSink[]): PollSink {
  return {
    health: (sample, at) => sinks.forEach((s) => s.health(sample, at)),
    healthFailed: (name, tags) => sinks.forEach((s) => s.healthFailed(name, tags)),
    sessions: (sample, at) => sinks.forEach((s) => s.sessions(sample, at)),
    sessionsFailed: (name, tags) => sinks.forEach((s) => s.sessionsFailed(name, tags)),
  };
}

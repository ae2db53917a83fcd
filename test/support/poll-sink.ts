/** A PollSink that keeps every call, for the pollers' tests. */
import type { PollSink } from '../../edge-agent/sources/platform/sink.js';
import type { HealthSample, ServerTags, SessionSample } from '../../shared/platform/polled.js';

export class RecordingPollSink implements PollSink {
  readonly healthSamples: { sample: HealthSample; receivedAtMs: number }[] = [];
  readonly sessionSamples: { sample: SessionSample; receivedAtMs: number }[] = [];
  readonly failed: { kind: 'health' | 'sessions'; serverName: string; tags: ServerTags }[] = [];

  health(sample: HealthSample, receivedAtMs: number): void {
    this.healthSamples.push({ sample, receivedAtMs });
  }

  healthFailed(serverName: string, tags: ServerTags): void {
    this.failed.push({ kind: 'health', serverName, tags });
  }

  sessions(sample: SessionSample, receivedAtMs: number): void {
    this.sessionSamples.push({ sample, receivedAtMs });
  }

  sessionsFailed(serverName: string, tags: ServerTags): void {
    this.failed.push({ kind: 'sessions', serverName, tags });
  }
}

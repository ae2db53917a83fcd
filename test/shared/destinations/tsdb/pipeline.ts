/**
 * The tsdb's path as `svc local` composes it, for the TLS and credential tests: audit events sent
 * to a real durable local queue (on disk), delivered by the writer handler to a TsdbDestination and
 * its TsdbWriter, failures tracked by a real ErrorTracker, every log line kept by a real pino
 * logger (captureLog: no secret scrubbing, so a test sees what the code itself puts in a line).
 * Short pauses and retries, and `maxReceiveCount: 2`: an event that counted attempts instead of
 * waiting would be in the dead-letter folder within the test. Also the test CA and server
 * certificate of the https tests.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CertificateSet, makeCertificates } from '../../../../edge-agent/simulate/platform/certs.js';
import { auditTimeMs } from '../../../../shared/audit/datamodel.js';
import { makeWriterHandler } from '../../../../shared/destinations/handler.js';
import { TsdbDestination } from '../../../../shared/destinations/tsdb/destination.js';
import { type TsdbConfig, TsdbWriter } from '../../../../shared/destinations/tsdb/writer.js';
import { ErrorTracker } from '../../../../shared/errors/tracker.js';
import type { Logger } from '../../../../shared/logging/logger.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { type GroupStats, LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { auditQueued } from '../../../support/audit.js';

/** The audit API's clock: it decides each event's point time when the event is queued. */
const apiClock = new PointClock();

/** An audit event with its point time, as the audit API queues it. */
export function auditEvent(): QueuedEvent {
  const q = auditQueued({
    type: 'object.view.duration',
    payload: { context: { sheetId: 's1' }, event: { objectId: 'o1', duration: 1.5, leftAt: '2026-11-22T10:16:00Z' } },
  });
  return { ...q, timeNs: String(apiClock.next(auditTimeMs(q))) };
}

export interface TsdbPipeline {
  errors: ErrorTracker;
  /** Queues `count` audit events; their ids. */
  send(count: number): Promise<string[]>;
  /** The tsdb group's state: pending, dead-lettered, unavailable since. */
  stats(): GroupStats;
  /** Whether anything reached the group's dead-letter folder. */
  deadLettered(): boolean;
  stop(): Promise<void>;
}

/** Starts the path on the queue directory `directory` (a second pipeline on it finds what the first left). */
export async function tsdbPipeline(config: TsdbConfig, directory: string, logger: Logger): Promise<TsdbPipeline> {
  const errors = new ErrorTracker({ enabled: true, log: logger });
  const writer = new TsdbWriter({
    config,
    log: logger,
    onError: (type, module, err) => errors.track(type, err, { module, destinationHost: config.host }),
    retryDelaysMs: [20, 40],
    requestTimeoutMs: 5_000,
  });
  const destination = new TsdbDestination({
    writer,
    audit: { measurement: 'audit_events', staticTags: [], clock: new PointClock() },
    userEvents: null,
    logEvents: null,
    points: false,
    log: logger,
  });
  const queue = new LocalEventQueue({
    directory,
    capacity: 10_000,
    maxReceiveCount: 2,
    retryBaseMs: 50,
    retryCapMs: 100,
    unavailableBaseMs: 50,
    unavailableCapMs: 200,
    log: logger,
    groups: [
      {
        name: 'tsdb',
        handler: makeWriterHandler({ destination, claimCheck: null, log: logger }),
        batchSize: 50,
        batchWindowMs: 20,
      },
    ],
  });
  await queue.start();
  return {
    errors,
    send: async (count) => {
      const events = Array.from({ length: count }, auditEvent);
      await queue.send(events);
      return events.map((e) => e.id);
    },
    stats: () => {
      const stats = queue.stats()['tsdb'];
      if (stats === undefined) throw new Error('no tsdb group');
      return stats;
    },
    deadLettered: () => existsSync(join(directory, 'dead-letters', 'tsdb')),
    stop: () => queue.stop(),
  };
}

/** A test CA and the server certificate it signed, as PEM files in a temporary directory. */
export interface TestTls {
  dir: string;
  certs: CertificateSet;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  /** Removes the directory. */
  remove(): void;
}

/** Makes a test CA and a server certificate it signs for 127.0.0.1 and localhost, in a new temporary directory. */
export function testTls(): TestTls {
  const dir = mkdtempSync(join(tmpdir(), 'tsdb-tls-'));
  const certs = makeCertificates(['127.0.0.1', 'localhost'], { commonName: 'Svc tsdb test CA' });
  const files = {
    caFile: join(dir, 'ca.pem'),
    serverCertFile: join(dir, 'server.pem'),
    serverKeyFile: join(dir, 'server-key.pem'),
  };
  writeFileSync(files.caFile, certs.ca.cert);
  writeFileSync(files.serverCertFile, certs.server.cert);
  writeFileSync(files.serverKeyFile, certs.server.key);
  return { dir, certs, ...files, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

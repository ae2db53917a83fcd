/**
 * Local mode's audit path: the local gateway in front of the audit handler, the durable local queue
 * behind it, and one writer handler per configured destination (the same handlers the writer
 * Lambdas run), each a consumer group of the queue.
 */
import type { SvcConfig } from '../../shared/config/schema.js';
import type { ErrorTracker } from '../../shared/errors/tracker.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { PointClock } from '../../shared/tsdb/line-protocol.js';
import { LocalEventQueue, type ConsumerGroup } from '../../shared/queue/local.js';
import { Throttle } from '../../shared/queue/throttle.js';
import { MemoryRateLimiter } from '../../shared/ratelimit/memory.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { auditDestinations } from '../writers/destinations.js';
import { makeWriterHandler } from '../writers/handler.js';
import { makeAuditHandlers } from '../audit/handler.js';
import { LocalGateway } from './gateway.js';

export interface LocalAudit {
  components: Component[];
  gateway: LocalGateway;
  queue: LocalEventQueue;
}

/** The components of the audit path, in start order (queue before the gateway that feeds it). */
export function localAuditComponents(config: SvcConfig, log: Logger, errors: ErrorTracker, clock: PointClock): LocalAudit | null {
  const settings = config.auditEvents;
  if (!settings.enable) return null;
  if (settings.apiToken === '') log.warn({}, 'Svc.auditEvents.apiToken is not set: the audit API accepts requests without a token');
  const destinations = auditDestinations(config, log, { clock, errors });
  if (destinations.length === 0) log.warn({}, 'no audit destination is enabled (Svc.auditEvents.destination): accepted audit events are not stored');
  const groups: ConsumerGroup[] = destinations.map(({ destination, batchSize, batchWindowMs }) => ({
    name: destination.name,
    handler: makeWriterHandler({ destination, claimCheck: null, log }),
    batchSize,
    batchWindowMs,
    throttle: settings.queue.rateLimit.enable ? new Throttle(settings.queue.rateLimit.maxPerMinute) : null,
  }));
  const queue = new LocalEventQueue({ directory: config.localQueue.directory, capacity: settings.queue.capacity, maxReceiveCount: config.localQueue.maxReceiveCount, groups, log });
  const handlers = makeAuditHandlers({
    settings,
    rateLimiter: settings.rateLimit.enable ? new MemoryRateLimiter({ limit: settings.rateLimit.maxPerMinute }) : null,
    queue,
    log,
  });
  const gateway = new LocalGateway({ name: 'audit API', host: settings.host, port: settings.port, ...handlers, log, limits: settings });
  return { components: [queue, gateway], gateway, queue };
}

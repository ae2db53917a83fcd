/**
 * Local mode's audit path: the local gateway in front of the audit handler, the local queue behind
 * it, and the destination writers the queue feeds.
 */
import type { SvcConfig } from '../../shared/config/schema.js';
import { auditDestinationTypes } from '../../shared/config/rules.js';
import type { Logger } from '../../shared/logging/logger.js';
import type { QueuedEvent } from '../../shared/queue/events.js';
import { MemoryEventQueue } from '../../shared/queue/memory.js';
import { Throttle } from '../../shared/queue/throttle.js';
import { MemoryRateLimiter } from '../../shared/ratelimit/memory.js';
import type { Component } from '../../shared/runtime/lifecycle.js';
import { JsonObjectDataWriter } from '../../shared/writers/json-objectdata.js';
import { makeAuditHandler } from '../audit/handler.js';
import { LocalGateway } from './gateway.js';

/** Writes a batch of queued events to the configured audit destinations. */
export function auditDestinations(settings: SvcConfig['auditEvents'], log: Logger): (events: QueuedEvent[]) => Promise<void> {
  const types = settings.destination.enable ? auditDestinationTypes(settings.destination.type) : [];
  const json = types.includes('json') && settings.destination.json.objectdata.enable ? new JsonObjectDataWriter(settings.destination.json.objectdata) : null;
  return (events) => {
    for (const queued of events) {
      const file = json?.write(queued);
      if (file) log.debug({ eventId: queued.id, file }, 'wrote audit object data');
    }
    return Promise.resolve();
  };
}

/** The components of the audit path, in start order (queue before the gateway that feeds it). */
export function localAuditComponents(config: SvcConfig, log: Logger): { components: Component[]; gateway: LocalGateway; queue: MemoryEventQueue } | null {
  const settings = config.auditEvents;
  if (!settings.enable) return null;
  if (settings.apiToken === '') {
    log.warn({}, 'Svc.auditEvents.apiToken is not set: the audit API accepts requests without a token');
  }
  const queue = new MemoryEventQueue({
    capacity: settings.queue.capacity,
    consumer: auditDestinations(settings, log),
    throttle: settings.queue.rateLimit.enable ? new Throttle(settings.queue.rateLimit.maxPerMinute) : null,
    log,
  });
  const handler = makeAuditHandler({
    settings,
    rateLimiter: settings.rateLimit.enable ? new MemoryRateLimiter({ limit: settings.rateLimit.maxPerMinute }) : null,
    queue,
    log,
  });
  const gateway = new LocalGateway({ name: 'audit API', host: settings.host, port: settings.port, handler, log, maxBodyBytes: settings.maxBodyBytes });
  return { components: [queue, gateway], gateway, queue };
}

/** Queued events of the kinds the platform destinations do not serve, and `points` events, for the destination tests. */
import type { JsonPoint, PointsQueuedEvent } from '../../../shared/queue/events.js';

export { auditQueued } from '../../support/audit.js';

/** §6.11's event_count point. */
export const EVENT_COUNT: JsonPoint = {
  measurement: 'event_count',
  tags: {
    event_type: 'log',
    source: 'qseow-proxy',
    host: 'PLAT-N1',
    subsystem: 'Audit.Proxy.Proxy.Core.RequestListener',
  },
  fields: { counter: { type: 'int', value: 3 } },
  timeNs: '1710233120000000004',
};

/** A §6.8 queue-metrics point (int and float fields). */
export const QUEUE_METRICS: JsonPoint = {
  measurement: 'log_events_queue',
  tags: { queue_type: 'log_events', host: 'svc-host' },
  fields: {
    queue_size: { type: 'int', value: 4 },
    queue_utilization_pct: { type: 'float', value: 2 },
    processing_time_p95_ms: { type: 'float', value: 1.25 },
  },
  timeNs: '1710233120000000005',
};

let seq = 0;

export function pointsQueued(module: string, points: JsonPoint[], id = `points-${++seq}`): PointsQueuedEvent {
  return { kind: 'points', id, receivedAt: '2024-03-12T08:45:20.000Z', module, points };
}

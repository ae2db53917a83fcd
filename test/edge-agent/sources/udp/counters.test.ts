/**
 * Event counts (§6.5), rejected counts (§6.6), the counter writer (§6.7) and the queue-metrics point
 * (§6.8): the points, and that nothing counted is lost when the queue refuses a write. The queue is
 * the EventQueue port's in-memory stand-in (the end-to-end suite writes through the real one).
 */
import { describe, expect, it } from 'vitest';
import {
  CounterWriter,
  type EventCountEntry,
  EventCounter,
  eventCountPoints,
  queueMetricsPoint,
  rejectedEventPoints,
} from '../../../../edge-agent/sources/udp/counters.js';
import type { QueueMetrics } from '../../../../edge-agent/sources/udp/listener.js';
import { RejectedEventCounter } from '../../../../edge-agent/sources/udp/rules/perf-filter.js';
import { toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { jsonPointToPoint } from '../../../../shared/destinations/tsdb/mappers.js';
import type { PointsQueuedEvent } from '../../../../shared/queue/events.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { silentLog } from '../../../support/log.js';
import { RecordingQueue } from '../../../support/udp.js';

const silent = silentLog;
const fixedTime = () => '1710233120000000004';

describe('event counts', () => {
  it('counts per (event_type, source, host, subsystem), empty values as unknown, as §6.11 writes them', () => {
    const c = new EventCounter();
    for (let i = 0; i < 3; i++) c.count('log', 'qseow-proxy', 'PLAT-N1', 'Audit.Proxy.Proxy.Core.RequestListener');
    c.count('user', 'qseow-proxy-session', 'PLAT-N1', '');
    c.countUnknown('log');
    const points = eventCountPoints(
      c.snapshotAndReset(),
      'event_count',
      [{ name: 'site', value: 'lab' }],
      fixedTime,
    ).map((p) => toLine(jsonPointToPoint(p)));
    expect(points).toEqual([
      'event_count,event_type=log,source=qseow-proxy,host=PLAT-N1,subsystem=Audit.Proxy.Proxy.Core.RequestListener,site=lab counter=3i 1710233120000000004',
      'event_count,event_type=user,source=qseow-proxy-session,host=PLAT-N1,subsystem=unknown,site=lab counter=1i 1710233120000000004',
      'event_count,event_type=log,source=unknown,host=unknown,subsystem=unknown,site=lab counter=1i 1710233120000000004',
    ]);
    expect(c.snapshotAndReset()).toEqual([]);
  });

  it('keeps keys apart that share some of their parts, and counts each again after a reset and a restore', () => {
    const c = new EventCounter();
    const keys: [EventCountEntry['event_type'], string, string, string][] = [
      ['log', 'qseow-engine', 'h1', 'a'],
      ['log', 'qseow-engine', 'h1', 'b'],
      ['log', 'qseow-engine', 'h2', 'a'],
      ['log', 'qseow-proxy', 'h1', 'a'],
      ['user', 'qseow-engine', 'h1', 'a'],
    ];
    keys.forEach(([t, s, h, sub], i) => c.count(t, s, h, sub, i + 1));
    c.count('log', 'qseow-engine', 'h1', 'a', 10);
    const expected = keys.map(([t, s, h, sub], i) => ({
      event_type: t,
      source: s,
      host: h,
      subsystem: sub,
      counter: i === 0 ? 11 : i + 1,
    }));
    const first = c.snapshotAndReset();
    expect(first).toEqual(expected);
    c.count('log', 'qseow-engine', 'h1', 'a');
    expect(c.snapshotAndReset()).toEqual([{ ...expected[0], counter: 1 }]);
    c.restore(first);
    c.count('user', 'qseow-engine', 'h1', 'a');
    expect(c.snapshotAndReset()).toEqual(expected.map((e, i) => (i === 4 ? { ...e, counter: 6 } : e)));
  });

  it('writes rejected counts with the §6.6 tags; perf tags only on perf_filter points', () => {
    const r = new RejectedEventCounter();
    r.countPerfFilter({
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      appName: '',
      method: 'GenericObject::GetLayout',
      objectType: 'barchart',
      processTime: 412.5,
    });
    r.countPerfFilter({
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      appName: '',
      method: 'GenericObject::GetLayout',
      objectType: 'barchart',
      processTime: 100,
    });
    r.countCategoryDrop({
      source: 'qseow-repository',
      host: 'PLAT-N1',
      subsystem: 'System.Repository',
      level: 'ERROR',
    });
    const lines = rejectedEventPoints(
      r.snapshotAndReset(),
      'rejected_event_count',
      [{ name: 'team', value: 'bi' }],
      fixedTime,
    ).map((p) => toLine(jsonPointToPoint(p)));
    expect(lines).toEqual([
      'rejected_event_count,reason=perf_filter,source=qseow-qix-perf,app_id=e7af59a0-c243-480d-9571-08727551a66f,app_name_set=false,method=GenericObject::GetLayout,object_type=barchart,team=bi counter=2i,process_time=512.5 1710233120000000004',
      'rejected_event_count,reason=category_drop,source=qseow-repository,host=PLAT-N1,subsystem=System.Repository,level=ERROR counter=1i 1710233120000000004',
    ]);
  });
});

describe('CounterWriter', () => {
  it('queues one points event per tick, and keeps a snapshot the queue refused for the next tick', async () => {
    const queue = new RecordingQueue();
    const counter = new EventCounter();
    const rejected = new RejectedEventCounter();
    const writer = new CounterWriter({
      queue,
      clock: new PointClock(),
      intervalMs: 60_000,
      events: { counter, measurement: 'event_count', tags: [] },
      rejected: { counter: rejected, measurement: 'rejected_event_count', perfTags: [] },
      log: silent,
    });
    counter.count('log', 'qseow-engine', 'N1', 'System.Engine');
    rejected.countCategoryDrop({ source: 'qseow-engine', host: 'N1', subsystem: 'System.Engine', level: 'WARN' });
    queue.refuse = true;
    await writer.runTick();
    expect(queue.events).toEqual([]);
    counter.count('log', 'qseow-engine', 'N1', 'System.Engine');
    queue.refuse = false;
    await writer.runTick();
    const [event] = queue.events as PointsQueuedEvent[];
    expect(event?.module).toBe('EVENT_COUNTS');
    expect(event?.points.map((p) => [p.measurement, p.fields['counter']?.value])).toEqual([
      ['event_count', 2],
      ['rejected_event_count', 1],
    ]);
    // Nothing counted since: the next tick writes nothing.
    await writer.runTick();
    expect(queue.events).toHaveLength(1);
  });
});

describe('queue metrics point', () => {
  it('has the §6.8 tags and field types: int, float for utilisation, times and rate', () => {
    const m: QueueMetrics = {
      queue_type: 'log_events',
      queue_size: 3,
      queue_max_size: 200,
      queue_utilization_pct: 1.5,
      queue_running: 2,
      messages_received: 10,
      messages_queued: 9,
      messages_processed: 7,
      messages_failed: 0,
      messages_dropped_total: 1,
      messages_dropped_rate_limit: 0,
      messages_dropped_queue_full: 0,
      messages_dropped_size: 1,
      messages_dropped_source: 0,
      messages_dropped_kernel: 0,
      processing_time_avg_ms: 0.25,
      processing_time_p95_ms: 1,
      processing_time_max_ms: 2,
      rate_limit_current: 0,
      backpressure_active: 0,
    };
    const line = toLine(
      jsonPointToPoint(queueMetricsPoint(m, 'log_events_queue', 'svc-host', [{ name: 'env', value: 'prod' }], '1')),
    );
    expect(line).toBe(
      'log_events_queue,queue_type=log_events,host=svc-host,env=prod queue_size=3i,queue_max_size=200i,queue_utilization_pct=1.5,queue_running=2i,messages_received=10i,messages_queued=9i,messages_processed=7i,messages_failed=0i,messages_dropped_total=1i,messages_dropped_rate_limit=0i,messages_dropped_queue_full=0i,messages_dropped_size=1i,messages_dropped_source=0i,messages_dropped_kernel=0i,processing_time_avg_ms=0.25,processing_time_p95_ms=1,processing_time_max_ms=2,rate_limit_current=0,backpressure_active=0i 1',
    );
    const { messages_dropped_kernel: _k, ...withoutKernel } = m;
    expect(toLine(jsonPointToPoint(queueMetricsPoint(withoutKernel, 'q', 'h', [], '1')))).not.toContain(
      'messages_dropped_kernel',
    );
  });
});

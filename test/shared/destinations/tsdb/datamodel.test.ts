/**
 * The tsdb data model tables (shared/destinations/tsdb/datamodel.ts): they type the mappers' fields,
 * the points the edge builds itself (§6.5–§6.8, edge-agent/sources/udp/counters.ts) agree with them,
 * and docs/data-model.md lists them in its one layout, which a program can read (as a dashboard
 * check will): this test reads the page back and gets exactly the tables.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  eventCountPoints,
  queueMetricsPoint,
  rejectedEventPoints,
} from '../../../../edge-agent/sources/udp/counters.js';
import type { QueueMetrics } from '../../../../edge-agent/sources/udp/listener.js';
import {
  EVENT_COUNT,
  type FieldType,
  fieldsOf,
  HEALTH_MEASUREMENTS,
  LOG_EVENT,
  type MeasurementModel,
  PLATFORM_MEASUREMENTS,
  QUEUE_METRICS,
  REJECTED_EVENT_COUNT,
  SVC_ERRORS,
  SVC_MEMORY_USAGE,
  USER_EVENTS,
} from '../../../../shared/destinations/tsdb/datamodel.js';
import { type Point, toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { jsonPointToPoint } from '../../../../shared/destinations/tsdb/mappers.js';
import type { JsonPoint } from '../../../../shared/queue/events.js';

const TYPE_WORD: Record<FieldType, string> = { int: 'integer', float: 'float', string: 'string', bool: 'boolean' };

describe('the data model tables', () => {
  it('list every measurement of §6.1–§6.10 once, with no name both a tag and a field of one measurement', () => {
    const names = PLATFORM_MEASUREMENTS.flatMap((m) => m.names);
    expect(names).toEqual([
      'server_info',
      'mem',
      'apps',
      'cpu',
      'session',
      'users',
      'cache',
      'saturated',
      'user_session_summary',
      'user_session_details',
      'user_events',
      'log_event',
      'event_count',
      'rejected_event_count',
      'user_events_queue',
      'log_events_queue',
      'svc_memory_usage',
      'svc_errors',
    ]);
    for (const m of PLATFORM_MEASUREMENTS) {
      const tags = Object.keys(m.tags);
      for (const field of Object.keys(m.fields)) expect(tags, `${m.names[0]}.${field}`).not.toContain(field);
    }
    expect(HEALTH_MEASUREMENTS).toHaveLength(8);
  });

  it("fieldsOf writes each field with the table's type, in table order, and leaves out null and undefined", () => {
    const fields = fieldsOf(LOG_EVENT, {
      raw_event: '{}',
      handle: 7,
      process_time: 12,
      message: '',
      lock_time: null,
      work_time: undefined,
    });
    expect(Object.keys(fields)).toEqual(['message', 'process_time', 'handle', 'raw_event']);
    expect(toLine({ measurement: 'log_event', tags: { host: 'h' }, fields, timeNs: 1n })).toBe(
      'log_event,host=h message="",process_time=12,handle=7i,raw_event="{}" 1',
    );
  });

  it('fieldsOf refuses a value of the wrong kind for its field (a mapper bug, not a point)', () => {
    const wrong: Record<string, unknown> = { userFull_field: 5 };
    expect(() => fieldsOf(USER_EVENTS, wrong)).toThrow(
      new TypeError('user_events.userFull_field: number value for a string field'),
    );
  });
});

describe('the points the edge builds itself (§6.5–§6.8) agree with the tables', () => {
  const conforms = (points: JsonPoint[], model: MeasurementModel, configured: readonly string[] = []): void => {
    for (const json of points) {
      const point: Point = jsonPointToPoint(json);
      expect(model.names).toContain(point.measurement);
      for (const tag of Object.keys(point.tags))
        expect([...Object.keys(model.tags), ...configured], `${point.measurement} tag ${tag}`).toContain(tag);
      for (const [name, value] of Object.entries(json.fields)) {
        const type = model.fields[name]?.type;
        expect(type, `${point.measurement}.${name} in the table`).toBeDefined();
        expect(value.type === 'string' ? 'string' : value.type, `${point.measurement}.${name}`).toBe(type);
      }
    }
  };
  const time = () => '1';

  it('event counts', () => {
    const points = eventCountPoints(
      [{ event_type: 'log', source: 'qseow-proxy', host: 'h', subsystem: 's', counter: 3 }],
      'event_count',
      [{ name: 'env', value: 'e' }],
      time,
    );
    conforms(points, EVENT_COUNT, ['env']);
    expect(Object.keys(points[0]?.fields ?? {})).toEqual(Object.keys(EVENT_COUNT.fields));
  });

  it('rejected events, both reasons', () => {
    const points = rejectedEventPoints(
      [
        {
          reason: 'perf_filter',
          source: 'qseow-qix-perf',
          appId: 'a',
          appName: 'App',
          method: 'm',
          objectType: 'o',
          counter: 2,
          processTime: 1.5,
        },
        { reason: 'category_drop', source: 'qseow-proxy', host: 'h', subsystem: 's', level: 'WARN', counter: 1 },
      ],
      'rejected_event_count',
      [{ name: 'env', value: 'e' }],
      time,
    );
    conforms(points, REJECTED_EVENT_COUNT, ['env']);
    expect(new Set(points.flatMap((p) => [...Object.keys(p.tags), ...Object.keys(p.fields)]))).toEqual(
      new Set([...Object.keys(REJECTED_EVENT_COUNT.tags), ...Object.keys(REJECTED_EVENT_COUNT.fields), 'env']),
    );
  });

  it('queue metrics: every metric of a full snapshot, with its type', () => {
    const metrics: QueueMetrics = {
      queue_type: 'log_events',
      queue_size: 1,
      queue_max_size: 200,
      queue_utilization_pct: 0.5,
      queue_running: 1,
      messages_received: 5,
      messages_queued: 5,
      messages_processed: 4,
      messages_failed: 1,
      messages_dropped_total: 3,
      messages_dropped_rate_limit: 1,
      messages_dropped_queue_full: 1,
      messages_dropped_size: 0,
      messages_dropped_source: 0,
      messages_dropped_kernel: 1,
      processing_time_avg_ms: 1.5,
      processing_time_p95_ms: 2,
      processing_time_max_ms: 3,
      rate_limit_current: 0,
      backpressure_active: 0,
    };
    const point = queueMetricsPoint(metrics, 'log_events_queue', 'svc-host', [], '1');
    conforms([point], QUEUE_METRICS);
    expect(Object.keys(point.fields).sort()).toEqual(Object.keys(QUEUE_METRICS.fields).sort());
  });
});

/** A measurement as docs/data-model.md lists it. */
interface Documented {
  tags: string[];
  configuredTags: boolean;
  fields: Record<string, string>;
}

/** Reads the platform measurements back from the page, by the layout it states. */
function readDocs(text: string): Map<string, Documented> {
  const out = new Map<string, Documented>();
  const platform = text.slice(text.indexOf('## Platform measurements'), text.indexOf('## MQTT'));
  for (const block of platform.split(/^### /m).slice(1)) {
    const [heading = '', ...lines] = block.split('\n');
    const names = [...heading.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? '');
    const doc: Documented = { tags: [], configuredTags: false, fields: {} };
    for (const line of lines.filter((l) => l.startsWith('| ') && !l.startsWith('| Kind'))) {
      const row = /^\| (tag|field) \| (`[^`]+`|\(configured\)) \| (string|integer|float|boolean) \| .* \|$/.exec(line);
      expect(row, `a row of ${heading}: ${line}`).not.toBeNull();
      const [, kind, name = '', type = ''] = row ?? [];
      if (name === '(configured)') doc.configuredTags = true;
      else if (kind === 'tag') doc.tags.push(name.slice(1, -1));
      else doc.fields[name.slice(1, -1)] = type;
    }
    for (const name of names) out.set(name, doc);
  }
  return out;
}

describe('docs/data-model.md', () => {
  it('lists every platform measurement with exactly the tags and fields (and types) of its table', () => {
    const documented = readDocs(readFileSync(new URL('../../../../docs/data-model.md', import.meta.url), 'utf8'));
    const expected = new Map<string, Documented>();
    for (const m of PLATFORM_MEASUREMENTS) {
      const doc: Documented = {
        tags: Object.keys(m.tags),
        configuredTags: m.configuredTags !== undefined,
        fields: Object.fromEntries(Object.entries(m.fields).map(([name, f]) => [name, TYPE_WORD[f.type]])),
      };
      for (const name of m.names) expected.set(name, doc);
    }
    expect(documented).toEqual(expected);
    // Spot checks against the spec, independent of the tables.
    expect(documented.get('cpu')?.fields).toEqual({ total: 'float' });
    expect(documented.get('user_session_details')?.tags).toContain('user_session_user_id');
    expect(documented.get('svc_errors')?.fields['http_status']).toBe('integer');
    expect(documented.get('svc_memory_usage')).toEqual({
      tags: Object.keys(SVC_MEMORY_USAGE.tags),
      configuredTags: false,
      fields: { heap_used: 'float', heap_total: 'float', external: 'float', process_memory: 'float' },
    });
    expect(Object.keys(SVC_ERRORS.tags)).toEqual([
      'error_type',
      'server_name',
      'host',
      'virtual_proxy',
      'destination_host',
      'module',
    ]);
  });
});

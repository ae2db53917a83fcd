/**
 * The tsdb points of polled data (platform-formats.md §6.1 health, §6.2 sessions) as line protocol:
 * exact lines (§6.11's examples among them), field types (floats never `i`), the include flags of
 * `apps`, the point times the edge reserved, and agreement with the data model tables the docs are
 * generated from.
 */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import {
  APPS,
  type FieldType,
  HEALTH_MEASUREMENTS,
  type MeasurementModel,
  USER_SESSION_DETAILS,
  USER_SESSION_SUMMARY,
} from '../../../../shared/destinations/tsdb/datamodel.js';
import { type Point, toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import {
  HEALTH_POINTS_PER_SAMPLE,
  healthPoints,
  type IncludeFields,
  SESSION_SUMMARY_POINTS,
  sessionPoints,
} from '../../../../shared/destinations/tsdb/mappers.js';
import { HealthSampleSchema, SessionSampleSchema } from '../../../../shared/platform/polled.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { parseLine } from '../../platform/fixtures.js';
import {
  APP_ID,
  DOC_NAMES,
  healthBody,
  healthQueued,
  healthSample,
  SESSION_APP,
  sessionSample,
  sessionsQueued,
} from '../polled.js';

const NONE: IncludeFields = { activeDocs: false, loadedDocs: false, inMemoryDocs: false };
const ALL: IncludeFields = { activeDocs: true, loadedDocs: true, inMemoryDocs: true };
const TAGS = 'host=node1.lab.local,server_name=Node1,server_description=Central\\ node';
const lines = (points: Point[]): string[] => points.map(toLine);
/** Lines compared as §6.11 does: tag order not significant. */
const parsed = (list: string[]) => list.map(parseLine);

describe('health points (§6.1)', () => {
  it('the fixtures are samples the queue codec accepts', () => {
    expect(Value.Check(HealthSampleSchema, healthSample({ docNames: DOC_NAMES }))).toBe(true);
    expect(Value.Check(SessionSampleSchema, sessionSample())).toBe(true);
  });

  it('writes the eight measurements in the reserved order, every field with its type, exactly', () => {
    const got = lines(healthPoints(healthQueued(healthSample({ docNames: DOC_NAMES })), ALL));
    expect(got).toEqual([
      `server_info,${TAGS} version="12.1306.0",started="20240312T081512.000+0100",uptime="0 days, 1h 00m 18s" 1710233130000000000`,
      `mem,${TAGS} committed=4213.6,allocated=4577.3,free=27890.4 1710233130000000001`,
      `apps,${TAGS} active_docs_count=1i,loaded_docs_count=1i,in_memory_docs_count=2i,calls=15234i,selections=812i,` +
        `active_docs="${APP_ID}",active_docs_names="Sales dashboard",active_session_docs_names="",` +
        `loaded_docs="${APP_ID}",loaded_docs_names="Sales dashboard",loaded_session_docs_names="",` +
        `in_memory_docs="${APP_ID},${SESSION_APP}",in_memory_docs_names="Sales dashboard",in_memory_session_docs_names="${SESSION_APP}" 1710233130000000002`,
      `cpu,${TAGS} total=7.5 1710233130000000003`,
      `session,${TAGS} active=3i,total=12i 1710233130000000004`,
      `users,${TAGS} active=2i,total=9i 1710233130000000005`,
      `cache,${TAGS} hits=1290i,lookups=1720i,added=430i,replaced=12i,bytes_added=52428800i 1710233130000000006`,
      `saturated,${TAGS} saturated=false 1710233130000000007`,
    ]);
    expect(HEALTH_POINTS_PER_SAMPLE).toBe(8);
  });

  it("gives §6.11's mem and cpu lines exactly (each from a sample whose counter puts it at that time)", () => {
    // §6.11 shows the two lines with consecutive counter values; in one poll `apps` lies between them
    // (the order is server_info, mem, apps, cpu, …), so each line comes from its own poll here. The
    // counter wraps within the millisecond (modulo 1,000,000), as PointClock.reserve takes it.
    const mem = healthPoints(healthQueued(healthSample(), '1710233130000999999'), NONE)[1];
    const cpu = healthPoints(healthQueued(healthSample(), '1710233130000999998'), NONE)[3];
    expect(parsed([toLine(mem ?? fail()), toLine(cpu ?? fail())])).toEqual(
      parsed([
        'mem,host=node1.lab.local,server_name=Node1,server_description=Central\\ node committed=4213.6,allocated=4577.3,free=27890.4 1710233130000000000',
        'cpu,host=node1.lab.local,server_name=Node1,server_description=Central\\ node total=7.5 1710233130000000001',
      ]),
    );
  });

  it('writes whole floats without `i` and integers with it, and the configured server tags', () => {
    const body = healthBody({
      mem: { committed: 4213, allocated: 0, free: 27890 },
      cpu: { total: 7 },
      saturated: true,
    });
    const [, mem, , cpu, , , , saturated] = lines(
      healthPoints(
        healthQueued(healthSample({ body, tags: { ...healthSample().tags, site: 'lab', role: 'central' } })),
        NONE,
      ),
    );
    expect(mem).toBe(`mem,${TAGS},site=lab,role=central committed=4213,allocated=0,free=27890 1710233130000000001`);
    expect(cpu).toBe(`cpu,${TAGS},site=lab,role=central total=7 1710233130000000003`);
    expect(saturated).toBe(`saturated,${TAGS},site=lab,role=central saturated=true 1710233130000000007`);
  });

  it('writes an app list only when its include flag is on, its names only when the sample has them', () => {
    const apps = (include: IncludeFields, docNames?: typeof DOC_NAMES) =>
      Object.keys(
        parseLine(lines(healthPoints(healthQueued(healthSample(docNames ? { docNames } : {})), include))[2] ?? fail())
          .fields,
      );
    const counts = ['active_docs_count', 'loaded_docs_count', 'in_memory_docs_count', 'calls', 'selections'];
    expect(apps(NONE, DOC_NAMES)).toEqual(counts);
    expect(apps({ ...NONE, loadedDocs: true })).toEqual([...counts, 'loaded_docs']);
    expect(apps({ ...NONE, inMemoryDocs: true }, DOC_NAMES)).toEqual([
      ...counts,
      'in_memory_docs',
      'in_memory_docs_names',
      'in_memory_session_docs_names',
    ]);
    expect(apps(ALL)).toEqual([...counts, 'active_docs', 'loaded_docs', 'in_memory_docs']);
  });

  it('writes an empty included list as "" and an invalid start as uptime ""', () => {
    const body = healthBody({
      apps: { active_docs: [], in_memory_docs: [], loaded_docs: [], calls: 0, selections: 0 },
    });
    const got = lines(
      healthPoints(
        healthQueued(
          healthSample({
            body,
            uptime: '',
            docNames: {
              active: { names: [], sessionApps: [] },
              loaded: { names: [], sessionApps: [] },
              inMemory: { names: [], sessionApps: [] },
            },
          }),
        ),
        { ...NONE, activeDocs: true },
      ),
    );
    expect(got[0]).toContain(' version="12.1306.0",started="20240312T081512.000+0100",uptime="" ');
    expect(got[2]).toBe(
      `apps,${TAGS} active_docs_count=0i,loaded_docs_count=0i,in_memory_docs_count=0i,calls=0i,selections=0i,active_docs="",active_docs_names="",active_session_docs_names="" 1710233130000000002`,
    );
  });

  it('takes the times the edge reserved: two polls of one millisecond never share a point time', () => {
    const clock = new PointClock(999_995);
    const ms = 1_710_233_130_000;
    const a = healthPoints(healthQueued(healthSample(), clock.reserve(ms, HEALTH_POINTS_PER_SAMPLE).toString()), NONE);
    const b = healthPoints(healthQueued(healthSample(), clock.reserve(ms, HEALTH_POINTS_PER_SAMPLE).toString()), NONE);
    const next = clock.next(ms);
    const times = [...a, ...b].map((p) => p.timeNs);
    expect(new Set([...times, next]).size).toBe(17);
    expect(times.every((t) => t / 1_000_000n === BigInt(ms))).toBe(true);
  });

  it('a redelivered sample gives the same lines', () => {
    const q = healthQueued(healthSample({ docNames: DOC_NAMES }));
    expect(lines(healthPoints(q, ALL))).toEqual(lines(healthPoints(structuredClone(q), ALL)));
  });
});

describe('session points (§6.2)', () => {
  const SESSION_TAGS = `${TAGS},user_session_virtual_proxy=/hdr,user_session_host=node1.lab.local:4243`;

  it('writes the summary, then one details point per session, exactly', () => {
    expect(lines(sessionPoints(sessionsQueued()))).toEqual([
      `user_session_summary,${SESSION_TAGS} session_count=2i,session_user_id_list="LAB\\\\goran,LAB\\\\anna" 1710233131000000010`,
      `user_session_details,${SESSION_TAGS},user_session_id=4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11,user_session_user_directory=LAB,user_session_user_id=goran session_id="4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11",user_directory="LAB",user_id="goran" 1710233131000000011`,
      `user_session_details,${SESSION_TAGS},user_session_id=9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f,user_session_user_directory=LAB,user_session_user_id=anna session_id="9f9e8d7c-6b5a-4c3d-9e2f-1a0b9c8d7e6f",user_directory="LAB",user_id="anna" 1710233131000000012`,
    ]);
    expect(SESSION_SUMMARY_POINTS).toBe(1);
  });

  it('writes a summary of 0 sessions and no details when every session was excluded', () => {
    expect(lines(sessionPoints(sessionsQueued(sessionSample({ sessions: [], userIdList: '' }))))).toEqual([
      `user_session_summary,${SESSION_TAGS} session_count=0i,session_user_id_list="" 1710233131000000010`,
    ]);
  });
});

describe('the points agree with the data model tables (and so with docs/data-model.md)', () => {
  const TYPE: Record<FieldType, (written: string) => boolean> = {
    int: (v) => /^-?\d+i$/.test(v),
    float: (v) => /^-?\d+(\.\d+)?$/.test(v),
    string: (v) => v.startsWith('"'),
    bool: (v) => v === 'true' || v === 'false',
  };
  const check = (point: Point, model: MeasurementModel, configuredTags: readonly string[]): void => {
    const line = parseLine(toLine(point));
    expect(model.names).toContain(line.measurement);
    for (const tag of line.tags)
      expect([...Object.keys(model.tags), ...configuredTags]).toContain(tag.slice(0, tag.indexOf('=')));
    for (const [name, written] of Object.entries(line.fields)) {
      const def = model.fields[name];
      expect(def, `${line.measurement}.${name} is in the table`).toBeDefined();
      expect(TYPE[def?.type ?? 'string'](written), `${line.measurement}.${name}=${written} is ${def?.type}`).toBe(true);
    }
  };

  it('health: one point per table, every field of the tables written by a full sample', () => {
    const points = healthPoints(
      healthQueued(healthSample({ docNames: DOC_NAMES, tags: { ...healthSample().tags, site: 'lab' } })),
      ALL,
    );
    expect(points.map((p) => p.measurement)).toEqual(HEALTH_MEASUREMENTS.map((m) => m.names[0]));
    points.forEach((p, i) => {
      const model = HEALTH_MEASUREMENTS[i] ?? fail();
      check(p, model, ['site']);
      expect(Object.keys(p.fields)).toEqual(Object.keys(model.fields));
    });
    expect(Object.keys(points[2]?.fields ?? {})).toEqual(Object.keys(APPS.fields));
  });

  it('sessions: the summary and details tables', () => {
    const [summary, ...details] = sessionPoints(sessionsQueued());
    check(summary ?? fail(), USER_SESSION_SUMMARY, []);
    expect(Object.keys(summary?.tags ?? {})).toEqual(Object.keys(USER_SESSION_SUMMARY.tags));
    for (const d of details) {
      check(d, USER_SESSION_DETAILS, []);
      expect(Object.keys(d.tags)).toEqual(Object.keys(USER_SESSION_DETAILS.tags));
      expect(Object.keys(d.fields)).toEqual(Object.keys(USER_SESSION_DETAILS.fields));
    }
  });
});

function fail(): never {
  throw new Error('missing');
}

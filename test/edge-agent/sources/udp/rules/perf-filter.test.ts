/** Engine-performance filter (platform-formats.md §2.4) and rejected-event counter (§6.6, §6.7). */
import { describe, expect, it } from 'vitest';
import {
  type AppSpecificEntry,
  acceptPerfEvent,
  allAppsAccepts,
  appMatches,
  appSpecificAccepts,
  type MonitorFilter,
  PERF_SOURCE,
  type PerfEvent,
  RejectedEventCounter,
  type RejectedEventEntry,
  rejectedEventTags,
} from '../../../../../edge-agent/sources/udp/rules/perf-filter.js';

const SALES_ID = 'e7af59a0-c243-480d-9571-08727551a66f';
const HR_ID = '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';

const event = (over: Partial<PerfEvent> = {}): PerfEvent => ({
  appId: SALES_ID,
  appName: 'Sales dashboard',
  objectType: 'barchart',
  objectId: 'hXbRtP',
  method: 'GenericObject::GetLayout',
  ...over,
});

type Rule = AppSpecificEntry['objectType'];
type MRule = AppSpecificEntry['method'];
type ORule = AppSpecificEntry['appObject'];
const types = (
  allObjectTypes = true,
  allObjectTypesExclude: string[] = [],
  someObjectTypesInclude: string[] = [],
): Rule => ({ allObjectTypes, allObjectTypesExclude, someObjectTypesInclude });
const methods = (allMethods = true, allMethodsExclude: string[] = [], someMethodsInclude: string[] = []): MRule => ({
  allMethods,
  allMethodsExclude,
  someMethodsInclude,
});
const objects = (allAppObjects = true, exclude: string[] = [], include: string[] = []): ORule => ({
  allAppObjects,
  allAppObjectsExclude: exclude.map((objectId) => ({ objectId })),
  someAppObjectsInclude: include.map((objectId) => ({ objectId })),
});

const app = (
  include: AppSpecificEntry['include'],
  over: Partial<Omit<AppSpecificEntry, 'include'>> = {},
): AppSpecificEntry => ({
  include,
  objectType: types(),
  appObject: objects(),
  method: methods(),
  ...over,
});

function filter(
  over: { allApps?: Partial<MonitorFilter['allApps']>; appSpecific?: Partial<MonitorFilter['appSpecific']> } = {},
): MonitorFilter {
  return {
    allApps: { enable: false, appExclude: [], objectType: types(), method: methods(), ...over.allApps },
    appSpecific: { enable: false, app: [], ...over.appSpecific },
  };
}

describe('acceptPerfEvent: blocks', () => {
  it('rejects everything when both blocks are disabled (even with rules that would accept)', () => {
    const f = filter({ allApps: { enable: false }, appSpecific: { enable: false, app: [app([{ appId: SALES_ID }])] } });
    expect(acceptPerfEvent(event(), f)).toBe(false);
    expect(acceptPerfEvent(event({ appId: '', appName: '' }), f)).toBe(false);
  });

  it('allApps with default rules accepts everything', () => {
    const f = filter({ allApps: { enable: true } });
    expect(acceptPerfEvent(event(), f)).toBe(true);
    expect(acceptPerfEvent(event({ appId: '', appName: '', objectType: '', objectId: '', method: '' }), f)).toBe(true);
  });

  it('appSpecific enabled with no apps accepts nothing', () => {
    expect(acceptPerfEvent(event(), filter({ appSpecific: { enable: true, app: [] } }))).toBe(false);
  });

  it('appSpecific alone rejects apps it does not include', () => {
    const f = filter({ appSpecific: { enable: true, app: [app([{ appId: SALES_ID }])] } });
    expect(acceptPerfEvent(event(), f)).toBe(true);
    expect(acceptPerfEvent(event({ appId: HR_ID }), f)).toBe(false);
  });

  it('allApps is consulted when appSpecific does not accept', () => {
    const f = filter({
      appSpecific: {
        enable: true,
        app: [app([{ appId: SALES_ID }], { method: methods(false, [], ['Doc::GetObject']) })],
      },
      allApps: { enable: true },
    });
    // appSpecific rejects (method not included); allApps accepts.
    expect(appSpecificAccepts(f.appSpecific, event())).toBe(false);
    expect(acceptPerfEvent(event(), f)).toBe(true);
  });

  it('appSpecific accepts an app that allApps excludes', () => {
    const f = filter({
      appSpecific: { enable: true, app: [app([{ appId: SALES_ID }])] },
      allApps: { enable: true, appExclude: [{ appId: SALES_ID }] },
    });
    expect(allAppsAccepts(f.allApps, event())).toBe(false);
    expect(acceptPerfEvent(event(), f)).toBe(true);
  });

  it('rejects when neither accepts', () => {
    const f = filter({
      appSpecific: { enable: true, app: [app([{ appId: HR_ID }])] },
      allApps: { enable: true, appExclude: [{ appName: 'Sales dashboard' }] },
    });
    expect(acceptPerfEvent(event(), f)).toBe(false);
  });

  it('block functions return false for a disabled block', () => {
    const f = filter({ appSpecific: { enable: false, app: [app([{ appId: SALES_ID }])] } });
    expect(appSpecificAccepts(f.appSpecific, event())).toBe(false);
    expect(allAppsAccepts(f.allApps, event())).toBe(false);
  });
});

describe("app items: every given key equals the event's", () => {
  it.each([
    [{ appId: SALES_ID }, true],
    [{ appId: SALES_ID.toUpperCase() }, true],
    [{ appId: HR_ID }, false],
    [{ appName: 'Sales dashboard' }, true],
    [{ appName: 'sales dashboard' }, false],
    [{ appName: 'Sales' }, false],
    [{ appId: SALES_ID, appName: 'Sales dashboard' }, true],
    [{ appId: SALES_ID, appName: 'Other' }, false],
    [{ appId: HR_ID, appName: 'Sales dashboard' }, false],
    [{}, false],
  ])('%j → %s', (item, expected) => {
    expect(appMatches(item, event())).toBe(expected);
  });

  it('a name item never matches an event without app name (no lookup)', () => {
    expect(appMatches({ appName: 'Sales dashboard' }, event({ appName: '' }))).toBe(false);
    expect(appMatches({ appId: SALES_ID }, event({ appName: '' }))).toBe(true);
  });
});

describe('appSpecific: include', () => {
  const accepts = (include: AppSpecificEntry['include'], e: PerfEvent = event()) =>
    acceptPerfEvent(e, filter({ appSpecific: { enable: true, app: [app(include)] } }));

  it('by id', () => {
    expect(accepts([{ appId: SALES_ID }])).toBe(true);
    expect(accepts([{ appId: HR_ID }])).toBe(false);
  });

  it('by name', () => {
    expect(accepts([{ appName: 'Sales dashboard' }])).toBe(true);
    expect(accepts([{ appName: 'HR' }])).toBe(false);
  });

  it('by id and name together: both must equal', () => {
    expect(accepts([{ appId: SALES_ID, appName: 'Sales dashboard' }])).toBe(true);
    expect(accepts([{ appId: SALES_ID, appName: 'HR' }])).toBe(false);
  });

  it('one matching item of several is enough', () => {
    expect(accepts([{ appId: HR_ID }, { appName: 'Sales dashboard' }])).toBe(true);
  });
});

describe('appSpecific: object type, app object and method rules', () => {
  const accepts = (over: Partial<Omit<AppSpecificEntry, 'include'>>, e: PerfEvent = event()) =>
    acceptPerfEvent(e, filter({ appSpecific: { enable: true, app: [app([{ appId: SALES_ID }], over)] } }));

  it('object type: all, all minus exclusions, only inclusions', () => {
    expect(accepts({ objectType: types(true) })).toBe(true);
    expect(accepts({ objectType: types(true, ['linechart']) })).toBe(true);
    expect(accepts({ objectType: types(true, ['barchart']) })).toBe(false);
    expect(accepts({ objectType: types(false, [], ['barchart', 'table']) })).toBe(true);
    expect(accepts({ objectType: types(false, [], ['table']) })).toBe(false);
    expect(accepts({ objectType: types(false) })).toBe(false);
  });

  it('the list that does not belong to the flag is ignored', () => {
    expect(accepts({ objectType: types(true, [], ['table']) })).toBe(true);
    expect(accepts({ objectType: types(false, ['barchart'], ['barchart']) })).toBe(true);
    expect(accepts({ method: methods(true, [], ['Doc::GetObject']) })).toBe(true);
    expect(accepts({ appObject: objects(false, ['hXbRtP'], ['hXbRtP']) })).toBe(true);
  });

  it('values are compared case-sensitively', () => {
    expect(accepts({ objectType: types(false, [], ['BarChart']) })).toBe(false);
    expect(accepts({ objectType: types(true, ['BarChart']) })).toBe(true);
    expect(accepts({ method: methods(false, [], ['genericobject::getlayout']) })).toBe(false);
    expect(accepts({ appObject: objects(false, [], ['hxbrtp']) })).toBe(false);
  });

  it('app object (object id): all, all minus exclusions, only inclusions', () => {
    expect(accepts({ appObject: objects(true) })).toBe(true);
    expect(accepts({ appObject: objects(true, ['abc']) })).toBe(true);
    expect(accepts({ appObject: objects(true, ['hXbRtP']) })).toBe(false);
    expect(accepts({ appObject: objects(false, [], ['abc', 'hXbRtP']) })).toBe(true);
    expect(accepts({ appObject: objects(false, [], ['abc']) })).toBe(false);
  });

  it('method: all, all minus exclusions, only inclusions', () => {
    expect(accepts({ method: methods(true) })).toBe(true);
    expect(accepts({ method: methods(true, ['Global::OpenApp']) })).toBe(true);
    expect(accepts({ method: methods(true, ['GenericObject::GetLayout']) })).toBe(false);
    expect(accepts({ method: methods(false, [], ['GenericObject::GetLayout']) })).toBe(true);
    expect(accepts({ method: methods(false, [], ['Global::OpenApp']) })).toBe(false);
  });

  it('all three rules must pass', () => {
    const over = {
      objectType: types(false, [], ['barchart']),
      appObject: objects(false, [], ['hXbRtP']),
      method: methods(false, [], ['GenericObject::GetLayout']),
    };
    expect(accepts(over)).toBe(true);
    expect(accepts(over, event({ objectType: 'table' }))).toBe(false);
    expect(accepts(over, event({ objectId: 'other' }))).toBe(false);
    expect(accepts(over, event({ method: 'Doc::GetObject' }))).toBe(false);
  });

  it('any app entry that passes accepts (the first may fail)', () => {
    const f = filter({
      appSpecific: {
        enable: true,
        app: [
          app([{ appId: SALES_ID }], { method: methods(false, [], ['Global::OpenApp']) }),
          app([{ appName: 'Sales dashboard' }], { objectType: types(false, [], ['barchart']) }),
        ],
      },
    });
    expect(acceptPerfEvent(event(), f)).toBe(true);
    expect(acceptPerfEvent(event({ method: 'Global::OpenApp', objectType: 'table' }), f)).toBe(true);
    expect(acceptPerfEvent(event({ method: 'Doc::GetObject', objectType: 'table' }), f)).toBe(false);
  });

  it('an entry whose include does not match is not used even if its rules would pass', () => {
    const f = filter({ appSpecific: { enable: true, app: [app([{ appId: HR_ID }])] } });
    expect(acceptPerfEvent(event(), f)).toBe(false);
  });
});

describe('allApps', () => {
  const accepts = (over: Partial<MonitorFilter['allApps']>, e: PerfEvent = event()) =>
    acceptPerfEvent(e, filter({ allApps: { enable: true, ...over } }));

  it('appExclude by id, by name, by both (both must equal)', () => {
    expect(accepts({ appExclude: [{ appId: SALES_ID }] })).toBe(false);
    expect(accepts({ appExclude: [{ appId: SALES_ID.toUpperCase() }] })).toBe(false);
    expect(accepts({ appExclude: [{ appName: 'Sales dashboard' }] })).toBe(false);
    expect(accepts({ appExclude: [{ appId: SALES_ID, appName: 'Sales dashboard' }] })).toBe(false);
    expect(accepts({ appExclude: [{ appId: SALES_ID, appName: 'Other' }] })).toBe(true);
    expect(accepts({ appExclude: [{ appId: HR_ID }, { appName: 'HR' }] })).toBe(true);
    expect(accepts({ appExclude: [{ appId: HR_ID }, { appName: 'Sales dashboard' }] })).toBe(false);
  });

  it('appExclude by name does not exclude an event without app name', () => {
    expect(accepts({ appExclude: [{ appName: 'Sales dashboard' }] }, event({ appName: '' }))).toBe(true);
  });

  it('object type rule', () => {
    expect(accepts({ objectType: types(true, ['barchart']) })).toBe(false);
    expect(accepts({ objectType: types(true, ['table']) })).toBe(true);
    expect(accepts({ objectType: types(false, [], ['barchart']) })).toBe(true);
    expect(accepts({ objectType: types(false, [], ['table']) })).toBe(false);
  });

  it('method rule', () => {
    expect(accepts({ method: methods(true, ['GenericObject::GetLayout']) })).toBe(false);
    expect(accepts({ method: methods(true, ['Global::OpenApp']) })).toBe(true);
    expect(accepts({ method: methods(false, [], ['GenericObject::GetLayout']) })).toBe(true);
    expect(accepts({ method: methods(false, [], ['Global::OpenApp']) })).toBe(false);
  });

  it('has no object-id rule: any object id passes', () => {
    expect(accepts({}, event({ objectId: '<Unknown>' }))).toBe(true);
    expect(accepts({}, event({ objectId: '' }))).toBe(true);
  });

  it('exclusion wins over passing rules; both rules must pass', () => {
    expect(accepts({ appExclude: [{ appId: SALES_ID }], objectType: types(false, [], ['barchart']) })).toBe(false);
    expect(
      accepts({ objectType: types(false, [], ['barchart']), method: methods(false, [], ['Global::OpenApp']) }),
    ).toBe(false);
  });

  it('keeps everything but Global::OpenApp and <Unknown> object types (the second §2.6 perf example)', () => {
    const f = filter({
      allApps: { enable: true, objectType: types(true, ['<Unknown>']), method: methods(true, ['Global::OpenApp']) },
    });
    expect(acceptPerfEvent(event(), f)).toBe(true);
    expect(
      acceptPerfEvent(event({ method: 'Global::OpenApp', objectType: '<Unknown>', objectId: '<Unknown>' }), f),
    ).toBe(false);
  });
});

describe('RejectedEventCounter', () => {
  const perf = (
    over: Partial<{
      appId: string;
      appName: string;
      method: string;
      objectType: string;
      processTime: number | null;
    }> = {},
  ) => ({
    appId: SALES_ID,
    appName: 'Sales dashboard',
    method: 'Global::OpenApp',
    objectType: '<Unknown>',
    processTime: 10,
    ...over,
  });
  const drop = (over: Partial<{ source: string; host: string; subsystem: string; level: string }> = {}) => ({
    source: 'qseow-repository',
    host: 'PLAT-N1',
    subsystem: 'System.Repository.Repository.Core.Synchronization',
    level: 'ERROR',
    ...over,
  });

  it('is empty at first', () => {
    const c = new RejectedEventCounter();
    expect(c.size).toBe(0);
    expect(c.snapshotAndReset()).toEqual([]);
  });

  it('counts perf rejections per (appId, appName, method, objectType) with the sum of process_time', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf({ processTime: 2380.3 }));
    c.countPerfFilter(perf({ processTime: 0.5 }));
    c.countPerfFilter(perf({ processTime: null }));
    c.countPerfFilter(perf({ appName: '', processTime: 1 }));
    c.countPerfFilter(perf({ appId: HR_ID, processTime: 1 }));
    c.countPerfFilter(perf({ method: 'Doc::GetObject', processTime: 1 }));
    c.countPerfFilter(perf({ objectType: 'table', processTime: 1 }));
    expect(c.size).toBe(5);
    const snap = c.snapshotAndReset();
    expect(snap).toHaveLength(5);
    expect(snap[0]).toEqual({
      reason: 'perf_filter',
      source: PERF_SOURCE,
      appId: SALES_ID,
      appName: 'Sales dashboard',
      method: 'Global::OpenApp',
      objectType: '<Unknown>',
      counter: 3,
      processTime: 2380.8,
    });
    expect(snap.slice(1).map((e) => e.counter)).toEqual([1, 1, 1, 1]);
    expect(snap[1]).toMatchObject({ appName: '', appId: SALES_ID });
  });

  it('adds nothing to the sum for a non-finite process_time', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf({ processTime: Number.NaN }));
    c.countPerfFilter(perf({ processTime: Number.POSITIVE_INFINITY }));
    c.countPerfFilter(perf({ processTime: 3 }));
    expect(c.snapshotAndReset()).toEqual([expect.objectContaining({ counter: 3, processTime: 3 })]);
  });

  it('keys are exact: no collision between values that would concatenate alike', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf({ appName: 'a,b', method: 'c' }));
    c.countPerfFilter(perf({ appName: 'a', method: 'b,c' }));
    c.countCategoryDrop(drop({ host: 'a|b', subsystem: 'c' }));
    c.countCategoryDrop(drop({ host: 'a', subsystem: 'b|c' }));
    expect(c.size).toBe(4);
  });

  it('counts category drops per (source, host, subsystem, level)', () => {
    const c = new RejectedEventCounter();
    c.countCategoryDrop(drop());
    c.countCategoryDrop(drop());
    c.countCategoryDrop(drop({ level: 'WARN' }));
    c.countCategoryDrop(drop({ host: 'PLAT-N2' }));
    c.countCategoryDrop(drop({ subsystem: 'Other' }));
    c.countCategoryDrop(drop({ source: 'qseow-proxy' }));
    expect(c.snapshotAndReset()).toEqual([
      { reason: 'category_drop', ...drop(), counter: 2 },
      { reason: 'category_drop', ...drop({ level: 'WARN' }), counter: 1 },
      { reason: 'category_drop', ...drop({ host: 'PLAT-N2' }), counter: 1 },
      { reason: 'category_drop', ...drop({ subsystem: 'Other' }), counter: 1 },
      { reason: 'category_drop', ...drop({ source: 'qseow-proxy' }), counter: 1 },
    ]);
  });

  it('keeps the two reasons apart', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf());
    c.countCategoryDrop(drop());
    expect(c.snapshotAndReset().map((e) => e.reason)).toEqual(['perf_filter', 'category_drop']);
  });

  it('snapshotAndReset empties the counter; the next window starts from zero', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf());
    const first = c.snapshotAndReset();
    expect(c.size).toBe(0);
    expect(c.snapshotAndReset()).toEqual([]);
    c.countPerfFilter(perf({ processTime: 4 }));
    expect(c.snapshotAndReset()).toEqual([expect.objectContaining({ counter: 1, processTime: 4 })]);
    // The first snapshot is not changed by later counting.
    expect(first).toEqual([expect.objectContaining({ counter: 1, processTime: 10 })]);
  });

  it('restore adds a failed snapshot back, merged with what was counted since', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf({ processTime: 10 }));
    c.countPerfFilter(perf({ processTime: 5 }));
    c.countCategoryDrop(drop());
    const failed = c.snapshotAndReset();

    c.countPerfFilter(perf({ processTime: 1 }));
    c.countPerfFilter(perf({ appId: HR_ID, processTime: 7 }));
    c.restore(failed);

    const next = c.snapshotAndReset();
    expect(next).toHaveLength(3);
    expect(next).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ reason: 'perf_filter', appId: SALES_ID, counter: 3, processTime: 16 }),
        expect.objectContaining({ reason: 'perf_filter', appId: HR_ID, counter: 1, processTime: 7 }),
        expect.objectContaining({ reason: 'category_drop', counter: 1 }),
      ]),
    );
    // restore copied the entries: the failed snapshot is unchanged.
    expect(failed).toEqual([
      expect.objectContaining({ reason: 'perf_filter', counter: 2, processTime: 15 }),
      expect.objectContaining({ reason: 'category_drop', counter: 1 }),
    ]);
  });

  it('restore into an empty counter reproduces the snapshot; restoring twice doubles it', () => {
    const c = new RejectedEventCounter();
    c.countPerfFilter(perf());
    c.countCategoryDrop(drop());
    const snap = c.snapshotAndReset();
    c.restore(snap);
    expect(c.snapshotAndReset()).toEqual(snap);
    c.restore(snap);
    c.restore(snap);
    expect(c.snapshotAndReset().map((e) => e.counter)).toEqual([2, 2]);
  });
});

describe('rejectedEventTags (§6.6)', () => {
  const perfEntry = (appName: string): RejectedEventEntry => ({
    reason: 'perf_filter',
    source: PERF_SOURCE,
    appId: SALES_ID,
    appName,
    method: 'Global::OpenApp',
    objectType: '<Unknown>',
    counter: 1,
    processTime: 1,
  });

  it('perf_filter: source, app_id, app_name, app_name_set, method, object_type', () => {
    expect(rejectedEventTags(perfEntry('Sales dashboard'))).toEqual({
      reason: 'perf_filter',
      source: 'qseow-qix-perf',
      app_id: SALES_ID,
      app_name: 'Sales dashboard',
      app_name_set: 'true',
      method: 'Global::OpenApp',
      object_type: '<Unknown>',
    });
  });

  it('perf_filter: app_name omitted when empty, app_name_set false', () => {
    const tags = rejectedEventTags(perfEntry(''));
    expect(tags).not.toHaveProperty('app_name');
    expect(tags.app_name_set).toBe('false');
  });

  it('category_drop: source, host, subsystem, level', () => {
    expect(
      rejectedEventTags({
        reason: 'category_drop',
        source: 'qseow-proxy',
        host: 'PLAT-N1',
        subsystem: 'Audit.Proxy',
        level: 'WARN',
        counter: 3,
      }),
    ).toEqual({
      reason: 'category_drop',
      source: 'qseow-proxy',
      host: 'PLAT-N1',
      subsystem: 'Audit.Proxy',
      level: 'WARN',
    });
  });
});

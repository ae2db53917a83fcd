/**
 * The datagram handlers (platform-formats.md §1.3, §2.3) with the spec's example messages: exclusion,
 * counting, enrichment, source flags, the perf filter and categorisation, and what reaches the queue.
 * The queue here records what it is given (the EventQueue port's in-memory stand-in; the end-to-end
 * suite runs the real durable queue).
 */

import { describe, expect, it } from 'vitest';
import { sendOnly } from '../../../../edge-agent/sources/common/batcher.js';
import { EventCounter } from '../../../../edge-agent/sources/udp/counters.js';
import { logEventHandler, userEventHandler } from '../../../../edge-agent/sources/udp/handlers.js';
import type { ReceivedDatagram } from '../../../../edge-agent/sources/udp/listener.js';
import { HandlerFailure } from '../../../../edge-agent/sources/udp/message-queue.js';
import { RejectedEventCounter } from '../../../../edge-agent/sources/udp/rules/perf-filter.js';
import { AppNameList, NO_APP_NAMES } from '../../../../shared/platform/app-names.js';
import { decodeMessage } from '../../../../shared/queue/codec.js';
import type { LogQueuedEvent, QueuedEvent, UserQueuedEvent } from '../../../../shared/queue/events.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { QueueFullError } from '../../../../shared/queue/port.js';
import { captureLog } from '../../../support/audit.js';
import { RecordingQueue, svcConfig } from '../../../support/udp.js';
import { LOG_EXAMPLES, USER_EXAMPLES } from './parse/fixtures.js';

const RECEIVED_AT = Date.UTC(2024, 2, 12, 10, 0, 0);
const datagram = (text: string, address = '10.0.0.7'): ReceivedDatagram => ({
  data: Buffer.from(text, 'utf8'),
  address,
  port: 50000,
  receivedAtMs: RECEIVED_AT,
});

async function userSetup(lines: string[] = [], appNames = NO_APP_NAMES) {
  const config = svcConfig(['  userEvents:', '    enable: true', ...lines]);
  const queue = new RecordingQueue();
  const counter = new EventCounter();
  const log = await captureLog();
  const handle = userEventHandler({
    settings: config.userEvents,
    appNames,
    counter,
    queue: sendOnly(queue),
    clock: new PointClock(),
    log: log.logger,
  });
  return { handle, queue, counter, log };
}

async function logSetup(lines: string[]) {
  const config = svcConfig(['  logEvents:', ...lines]);
  const queue = new RecordingQueue();
  const counter = new EventCounter();
  const rejected = new RejectedEventCounter();
  const log = await captureLog();
  const appNames = new AppNameList();
  appNames.replace([{ id: 'e7af59a0-c243-480d-9571-08727551a66f', name: 'Sales dashboard' }]);
  const handle = logEventHandler({
    settings: config.logEvents,
    appNames,
    counter,
    rejected,
    trackPerfRejections: true,
    queue: sendOnly(queue),
    clock: new PointClock(),
    log: log.logger,
  });
  return { handle, queue, counter, rejected, log };
}

const ALL_SOURCES = [
  '    source:',
  '      engine: { enable: true }',
  '      proxy: { enable: true }',
  '      repository: { enable: true }',
  '      scheduler: { enable: true }',
  '      apiPerf: { enable: true }',
];

describe('user-event handler (§1.3)', () => {
  it('enriches the §1.6 connection example: app id and name, user agent; time = receive time', async () => {
    const names = new AppNameList();
    names.replace([{ id: 'E7AF59A0-C243-480D-9571-08727551A66F', name: 'Sales' }]);
    const { handle, queue, counter } = await userSetup([], names);
    expect(await handle(datagram(USER_EXAMPLES[2]))).toBe('processed');
    const q = queue.events[0] as UserQueuedEvent;
    expect(q.kind).toBe('user-event');
    expect(q.event).toEqual({
      messageType: 'qseow-proxy-connection',
      host: 'PLAT-N1',
      command: 'Open connection',
      user_directory: 'LAB',
      user_id: 'goran',
      user_full: 'LAB\\goran',
      origin: 'AppAccess',
      context:
        '/app/e7af59a0-c243-480d-9571-08727551a66f?reloaduri=https%3a%2f%2fplat.lab.local%2fapp%2fe7af59a0-c243-480d-9571-08727551a66f',
      message:
        "Websocket connection Opened for session '4d0b7e2c-5a1e-4b8e-9f43-2c6f0a7d1b11'. UserAgent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36'",
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      appName: 'Sales',
      uaBrowserName: 'Chrome',
      uaBrowserMajorVersion: '120',
      uaOsName: 'Windows',
      uaOsVersion: 'NT 10.0',
    });
    expect(BigInt(q.timeNs) / 1_000_000n).toBe(BigInt(RECEIVED_AT));
    expect(q.receivedAt).toBe(new Date(RECEIVED_AT).toISOString());
    // What goes on the queue passes the queue's own validation.
    expect(decodeMessage(JSON.stringify({ v: 1, events: queue.events })).ok).toBe(true);
    expect(counter.snapshotAndReset()).toEqual([
      { event_type: 'user', source: 'qseow-proxy-connection', host: 'PLAT-N1', subsystem: 'AppAccess', counter: 1 },
    ]);
  });

  it('gives an unknown app the name <unknown app name>, and parses the Safari example', async () => {
    const { handle, queue } = await userSetup();
    await handle(datagram(USER_EXAMPLES[3]));
    expect((queue.events[0] as UserQueuedEvent).event).toMatchObject({
      appId: '0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
      appName: '<unknown app name>',
      uaBrowserName: 'Safari',
      uaBrowserMajorVersion: '17',
      uaOsName: 'macOS',
      uaOsVersion: '10.15.7',
    });
  });

  it('makes an excluded user invisible: not queued, not counted, still processed', async () => {
    const { handle, queue, counter } = await userSetup(['    excludeUser: [{ directory: lab, userId: GORAN }]']);
    expect(await handle(datagram(USER_EXAMPLES[0]))).toBe('processed');
    expect(queue.events).toEqual([]);
    expect(counter.snapshotAndReset()).toEqual([]);
  });

  it('counts an unknown prefix and a malformed datagram as unknown and failed; one WARN per sender per minute', async () => {
    const { handle, queue, counter, log } = await userSetup();
    expect(await handle(datagram('/qseow-engine/;1;2;3'))).toBe('failed');
    expect(await handle(datagram('/qseow-proxy-session/;PLAT-N1;Start session'))).toBe('failed');
    expect(await handle(datagram('/qseow-proxy-session/;PLAT-N1;x', '10.0.0.8'))).toBe('failed');
    expect(queue.events).toEqual([]);
    expect(counter.snapshotAndReset()).toEqual([
      { event_type: 'user', source: 'unknown', host: 'unknown', subsystem: 'unknown', counter: 3 },
    ]);
    const lines = log.lines().filter((l) => String(l['msg']).includes('user event from'));
    expect(lines.map((l) => [l['level'], l['sender']])).toEqual([
      ['warn', '10.0.0.7'],
      ['debug', '10.0.0.7'],
      ['warn', '10.0.0.8'],
    ]);
    expect(lines[0]?.['datagram']).toBe('/qseow-engine/;1;2;3');
  });

  it('counts but does not queue when no destination wants user events', async () => {
    const config = svcConfig(['  userEvents:', '    enable: true']);
    const counter = new EventCounter();
    const handle = userEventHandler({
      settings: config.userEvents,
      appNames: NO_APP_NAMES,
      counter,
      queue: null,
      clock: new PointClock(),
      log: (await captureLog()).logger,
    });
    expect(await handle(datagram(USER_EXAMPLES[0]))).toBe('processed');
    expect(counter.snapshotAndReset()).toHaveLength(1);
  });

  it('throws when the queue refuses the event (the listener counts it failed)', async () => {
    const { handle, queue } = await userSetup();
    queue.refuse = true;
    await expect(handle(datagram(USER_EXAMPLES[0]))).rejects.toThrow(QueueFullError);
  });
});

describe('log-event handler (§2.3)', () => {
  it('queues each §2.6 example with its own time and the §2.2 keys only', async () => {
    const { handle, queue, counter } = await logSetup([
      ...ALL_SOURCES,
      '    enginePerformanceMonitor:',
      '      enable: true',
      '      appNameLookup: { enable: true }',
      '      monitorFilter:',
      '        allApps: { enable: true }',
    ]);
    for (const text of LOG_EXAMPLES) expect(await handle(datagram(text))).toBe('processed');
    const events = queue.events as LogQueuedEvent[];
    expect(events.map((e) => e.event.source)).toEqual([
      'qseow-engine',
      'qseow-proxy',
      'qseow-repository',
      'qseow-scheduler',
      'qseow-qix-perf',
      'qseow-qix-perf',
      'qseow-proxy',
      'qseow-repository',
      'qseow-scheduler',
    ]);
    // 20240312T101522.123+0100 = 09:15:22.123Z
    expect(BigInt(events[0]?.timeNs ?? '0') / 1_000_000n).toBe(BigInt(Date.UTC(2024, 2, 12, 9, 15, 22, 123)));
    expect(events.every((e) => !('eventTimeMs' in e.event) && !('receivedAtMs' in e.event))).toBe(true);
    expect(events[4]?.event).toMatchObject({
      app_name: 'Sales dashboard',
      method: 'GenericObject::GetLayout',
      process_time: 412.5,
    });
    expect(decodeMessage(JSON.stringify({ v: 1, events })).ok).toBe(true);
    expect(counter.snapshotAndReset().reduce((n, e) => n + e.counter, 0)).toBe(9);
  });

  it('counts but does not queue events of a disabled source', async () => {
    const { handle, queue, counter } = await logSetup(['    source:', '      proxy: { enable: true }']);
    await handle(datagram(LOG_EXAMPLES[0]));
    await handle(datagram(LOG_EXAMPLES[1]));
    expect((queue.events as LogQueuedEvent[]).map((e) => e.event.source)).toEqual(['qseow-proxy']);
    expect(
      counter
        .snapshotAndReset()
        .map((e) => e.source)
        .sort(),
    ).toEqual(['qseow-engine', 'qseow-proxy']);
  });

  it('categorises, and a drop rule drops and counts the event as rejected', async () => {
    const { handle, queue, rejected } = await logSetup([
      ...ALL_SOURCES,
      '    categorise:',
      '      enable: true',
      '      rules:',
      "        - { logLevel: [warn], action: categorise, category: [{ name: qs_log_category, value: access-denied }], filter: [{ type: sw, value: 'Access was denied' }] }",
      "        - { logLevel: [error], action: drop, filter: [{ type: so, value: 'service alive' }] }",
    ]);
    await handle(datagram(LOG_EXAMPLES[1]));
    await handle(datagram(LOG_EXAMPLES[2]));
    expect(queue.events).toHaveLength(1);
    expect((queue.events[0] as LogQueuedEvent).event).toMatchObject({
      source: 'qseow-proxy',
      category: [{ name: 'qs_log_category', value: 'access-denied' }],
    });
    expect(rejected.snapshotAndReset()).toEqual([
      {
        reason: 'category_drop',
        source: 'qseow-repository',
        host: 'PLAT-N1',
        subsystem: 'System.Repository.Repository.Core.Synchronization',
        level: 'ERROR',
        counter: 1,
      },
    ]);
  });

  it('filters engine-performance events and counts the rejected ones with their process time', async () => {
    const { handle, queue, rejected } = await logSetup([
      ...ALL_SOURCES,
      '    enginePerformanceMonitor:',
      '      enable: true',
      '      monitorFilter:',
      '        allApps:',
      '          enable: true',
      '          method: { allMethods: false, someMethodsInclude: [Global::OpenApp] }',
    ]);
    await handle(datagram(LOG_EXAMPLES[4]));
    await handle(datagram(LOG_EXAMPLES[5]));
    expect(
      (queue.events as LogQueuedEvent[]).map((e) => e.event.source === 'qseow-qix-perf' && e.event.method),
    ).toEqual(['Global::OpenApp']);
    expect(rejected.snapshotAndReset()).toEqual([
      {
        reason: 'perf_filter',
        source: 'qseow-qix-perf',
        appId: 'e7af59a0-c243-480d-9571-08727551a66f',
        appName: '',
        method: 'GenericObject::GetLayout',
        objectType: 'barchart',
        counter: 1,
        processTime: 412.5,
      },
    ]);
  });

  it('drops engine-performance events when the monitor is off', async () => {
    const { handle, queue } = await logSetup(ALL_SOURCES);
    expect(await handle(datagram(LOG_EXAMPLES[4]))).toBe('processed');
    expect(queue.events).toEqual([]);
  });
  it('handles a batch: each datagram on its own, their events in one send; with a queue that has room, synchronously', async () => {
    const items = [
      datagram(LOG_EXAMPLES[0]),
      datagram('/qseow-engine/;1;2'),
      datagram(LOG_EXAMPLES[1]),
      datagram(LOG_EXAMPLES[4]),
    ];
    const { handle, queue, counter } = await logSetup(ALL_SOURCES);
    const sends: number[] = [];
    const send = queue.send.bind(queue);
    queue.send = (events) => {
      sends.push(events.length);
      return send(events);
    };
    // The recording queue through sendOnly never takes a batch at once: the batch waits for its one send.
    expect(await handle.batch?.(items)).toEqual(['processed', 'failed', 'processed', 'processed']);
    expect(sends).toEqual([2]);
    expect(counter.snapshotAndReset().reduce((n, e) => n + e.counter, 0)).toBe(4);

    // A queue that takes the events at once (the batcher's offer): no promise at all.
    const offered: string[][] = [];
    const config = svcConfig(['  logEvents:', ...ALL_SOURCES]);
    const taking = {
      send: () => Promise.reject(new Error('offer takes them')),
      offer: (events: readonly QueuedEvent[]) => offered.push(events.map((e) => e.id)) > 0,
    };
    const sync = logEventHandler({
      settings: config.logEvents,
      appNames: NO_APP_NAMES,
      counter: null,
      rejected: null,
      trackPerfRejections: false,
      queue: taking,
      clock: new PointClock(),
      log: (await captureLog()).logger,
    });
    const result = sync.batch?.(items);
    expect(result).toEqual(['processed', 'failed', 'processed', 'processed']);
    expect(offered.map((ids) => ids.length)).toEqual([2]);
  });

  it('fails only the datagram whose handling throws; the rest of its batch is queued', async () => {
    const config = svcConfig(['  logEvents:', ...ALL_SOURCES]);
    const queue = new RecordingQueue();
    const handle = logEventHandler({
      settings: config.logEvents,
      appNames: NO_APP_NAMES,
      counter: null,
      rejected: null,
      trackPerfRejections: false,
      queue: sendOnly(queue),
      clock: new PointClock(),
      log: (await captureLog()).logger,
      wants: (event) => {
        if (event.source === 'qseow-proxy') throw new Error('wants failed');
        return true;
      },
    });
    const outcomes = await handle.batch?.([
      datagram(LOG_EXAMPLES[0]),
      datagram(LOG_EXAMPLES[1]),
      datagram(LOG_EXAMPLES[2]),
    ]);
    expect(outcomes?.map((o) => (o instanceof HandlerFailure ? String(o.error) : o))).toEqual([
      'processed',
      'Error: wants failed',
      'processed',
    ]);
    expect((queue.events as LogQueuedEvent[]).map((e) => e.event.source)).toEqual(['qseow-engine', 'qseow-repository']);
  });
});

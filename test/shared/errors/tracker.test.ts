/**
 * Error tracking (platform-formats.md §10.9): counts per type and server, the daily summary at
 * 00:00 UTC on an injected clock and timer (exactly one line per day, also when the timer fires
 * early or an error arrives first), the reset, the counts since start, subscribers, and the
 * metadata a `svc_errors` point takes from real errors.
 */
import { describe, expect, it } from 'vitest';
import { MonSaasPostError } from '../../../shared/destinations/monsaas/client.js';
import { DailyErrorSummary, nextUtcMidnight } from '../../../shared/errors/daily-summary.js';
import { errorMetadata, errorPoint } from '../../../shared/errors/points.js';
import { ErrorTracker, type TrackedError } from '../../../shared/errors/tracker.js';
import { recordingLog } from '../../support/log.js';
import { freePort, LOOPBACK } from '../../support/ports.js';

/** A wall clock the test moves, and the timers armed on it (fired by the test). */
function manualTime(startIso: string) {
  let now = Date.parse(startIso);
  const armed: { fire: () => void; delayMs: number; cancelled: boolean }[] = [];
  return {
    now: () => now,
    date: () => new Date(now),
    set: (iso: string) => (now = Date.parse(iso)),
    armed,
    setTimer: (fire: () => void, delayMs: number) => {
      const timer = { fire, delayMs, cancelled: false };
      armed.push(timer);
      return () => (timer.cancelled = true);
    },
    /** Fires the last armed timer. */
    fireLast: () => {
      const last = armed[armed.length - 1];
      if (!last || last.cancelled) throw new Error('no armed timer');
      last.fire();
    },
  };
}

const SUMMARY = /^Error counts today \(UTC\): /;

describe('daily error summary', () => {
  it("logs the day's counts at 00:00 UTC as one INFO line, resets them, and arms the next day", async () => {
    const time = manualTime('2024-03-12T22:00:00.000Z');
    const { log, lines } = recordingLog();
    const tracker = new ErrorTracker({ enabled: true, logSummary: true, log, now: time.date });
    const summary = new DailyErrorSummary({ tracker, now: time.now, setTimer: time.setTimer });
    await summary.start();
    expect(time.armed.map((t) => t.delayMs)).toEqual([2 * 3_600_000]);

    tracker.track('HEALTH_API', new Error('down'), { serverName: 'Node1' });
    tracker.track('HEALTH_API', new Error('down'), { serverName: 'Node1' });
    tracker.track('MQTT_PUBLISH', new Error('no broker'));
    time.set('2024-03-13T00:00:00.002Z');
    time.fireLast();

    expect(lines.filter((l) => SUMMARY.test(l.msg))).toEqual([
      {
        level: 'info',
        obj: {
          total: 3,
          details: {
            HEALTH_API: { total: 2, servers: { Node1: 2 } },
            MQTT_PUBLISH: { total: 1, servers: { _no_server_context: 1 } },
          },
          day: '2024-03-12',
        },
        msg: 'Error counts today (UTC): Total=3, Details={"HEALTH_API":{"total":2,"servers":{"Node1":2}},"MQTT_PUBLISH":{"total":1,"servers":{"_no_server_context":1}}}',
      },
    ]);
    expect(tracker.summary()).toEqual({ total: 0, details: {} });
    expect(time.armed.map((t) => t.delayMs)).toEqual([2 * 3_600_000, 86_400_000 - 2]);

    // A quiet day still gets its line.
    time.set('2024-03-14T00:00:00.000Z');
    time.fireLast();
    expect(lines.filter((l) => SUMMARY.test(l.msg)).map((l) => l.msg)).toEqual([
      expect.stringContaining('Total=3'),
      'Error counts today (UTC): Total=0, Details={}',
    ]);
    await summary.stop();
    expect(time.armed.at(-1)?.cancelled).toBe(true);
  });

  it('waits out a timer that fires early, and logs once when an error arrives before the timer', async () => {
    const time = manualTime('2024-03-12T23:59:00.000Z');
    const { log, lines } = recordingLog();
    const tracker = new ErrorTracker({ enabled: true, logSummary: true, log, now: time.date });
    const summary = new DailyErrorSummary({ tracker, now: time.now, setTimer: time.setTimer });
    await summary.start();
    tracker.track('PROXY_API', new Error('x'), { serverName: 'Node2' });

    time.set('2024-03-12T23:59:59.995Z');
    time.fireLast();
    expect(lines.filter((l) => SUMMARY.test(l.msg))).toEqual([]);
    expect(time.armed.at(-1)?.delayMs).toBe(5);

    // Just after midnight an error comes before the timer: yesterday's line first, then today's count.
    time.set('2024-03-13T00:00:00.001Z');
    tracker.track('PROXY_API', new Error('y'), { serverName: 'Node2' });
    time.set('2024-03-13T00:00:00.010Z');
    time.fireLast();
    expect(lines.filter((l) => SUMMARY.test(l.msg)).map((l) => l.msg)).toEqual([
      'Error counts today (UTC): Total=1, Details={"PROXY_API":{"total":1,"servers":{"Node2":1}}}',
    ]);
    expect(tracker.summary().total).toBe(1);
    await summary.stop();
  });

  it('resets at the date change without a line when logSummary is off; counts since start are never reset', () => {
    const time = manualTime('2024-03-12T23:00:00.000Z');
    const { log, lines } = recordingLog();
    const tracker = new ErrorTracker({ enabled: true, log, now: time.date });
    tracker.track('TSDB_V1_WRITE', new Error('a'));
    time.set('2024-03-13T01:00:00.000Z');
    expect(tracker.rollOver()).toBe(true);
    expect(tracker.rollOver()).toBe(false);
    tracker.track('TSDB_V1_WRITE', new Error('b'));
    expect(lines).toEqual([]);
    expect(tracker.summary().total).toBe(1);
    expect([...tracker.sinceStartByType]).toEqual([['TSDB_V1_WRITE', 2]]);
  });

  it('finds the next UTC midnight strictly after a moment', () => {
    expect(new Date(nextUtcMidnight(Date.parse('2024-03-12T10:00:00Z'))).toISOString()).toBe(
      '2024-03-13T00:00:00.000Z',
    );
    expect(new Date(nextUtcMidnight(Date.parse('2024-03-13T00:00:00Z'))).toISOString()).toBe(
      '2024-03-14T00:00:00.000Z',
    );
  });
});

describe('ErrorTracker', () => {
  it('tracks nothing and calls no subscriber when disabled', () => {
    const seen: TrackedError[] = [];
    const tracker = new ErrorTracker({ enabled: false, log: recordingLog().log, sink: (e) => seen.push(e) });
    tracker.track('MQTT_PUBLISH', new Error('x'));
    expect(seen).toEqual([]);
    expect(tracker.summary().total).toBe(0);
    expect([...tracker.sinceStartByType]).toEqual([]);
  });

  it('hands subscribers the known context only, and survives a failing subscriber', () => {
    const { log, lines } = recordingLog();
    const at = new Date('2024-03-12T10:00:00.000Z');
    const tracker = new ErrorTracker({ enabled: true, log, now: () => at });
    const seen: TrackedError[] = [];
    tracker.subscribe(() => {
      throw new Error('subscriber broke');
    });
    const unsubscribe = tracker.subscribe((e) => seen.push(e));
    const err = new Error('down');
    tracker.track('HEALTH_API', err, {
      serverName: 'Node1',
      host: 'node1.lab.local',
      virtualProxy: '',
      module: undefined,
    });
    unsubscribe();
    tracker.track('HEALTH_API', err);
    expect(seen).toEqual([
      { type: 'HEALTH_API', serverName: 'Node1', host: 'node1.lab.local', category: 'unknown', at, error: err },
    ]);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['debug', 'an error-tracking subscriber failed'],
      ['debug', 'an error-tracking subscriber failed'],
    ]);
  });
});

describe('svc_errors point metadata (§6.10)', () => {
  it('takes code, remote address, port and syscall from a real refused connection', async () => {
    const port = await freePort();
    const err: unknown = await fetch(`http://${LOOPBACK}:${port}/write?db=svc&u=admin&p=secret`).catch(
      (e: unknown) => e,
    );
    expect(errorMetadata(err)).toEqual({
      errorCode: 'ECONNREFUSED',
      syscall: 'connect',
      remoteAddress: LOOPBACK,
      remotePort: port,
    });
  });

  it('takes status, request URL without its query and the timeout from a monitoring-SaaS error', () => {
    const err = new MonSaasPostError('failed', {
      kind: 'event',
      account: 'ops',
      url: 'https://user:pw@events.example.com/v1/accounts/1/events?key=abc#x',
      status: 503,
      timeoutMs: 10_000,
      attempts: 4,
    });
    expect(errorMetadata(err)).toEqual({
      httpStatus: 503,
      requestUrl: 'https://events.example.com/v1/accounts/1/events',
      requestTimeoutMs: 10_000,
    });
  });

  it('builds the point with tags and fields only when known, error_count 1 as an integer', () => {
    const e: TrackedError = {
      type: 'PROXY_API',
      serverName: 'Node1',
      host: 'node1.lab.local',
      virtualProxy: '/hdr',
      category: 'http_5xx',
      at: new Date(0),
      error: Object.assign(new Error('bad gateway'), { status: 502 }),
    };
    expect(errorPoint(e, 'svc_errors', '5')).toEqual({
      measurement: 'svc_errors',
      tags: { error_type: 'PROXY_API', server_name: 'Node1', host: 'node1.lab.local', virtual_proxy: '/hdr' },
      fields: {
        error_count: { type: 'int', value: 1 },
        error_category: { type: 'string', value: 'http_5xx' },
        http_status: { type: 'int', value: 502 },
      },
      timeNs: '5',
    });
  });
});

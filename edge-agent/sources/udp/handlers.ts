/**
 * The datagram handlers of the two listeners: platform-formats.md §1.3 (user events) and §2.3 (log
 * events), from parsing to the hand-over to the event queue. A handler resolves to `processed` or
 * `failed` and never loses a datagram silently: a parse failure is counted and logged (WARN at most
 * once per sender per minute), and a queue that refuses the event makes the handler throw, which
 * the listener counts as failed and reports to the error tracker.
 */
import { randomUUID } from 'node:crypto';
import type { SvcConfig } from '../../../shared/config/schema.js';
import { UNKNOWN_APP_NAME, type AppNameLookup } from '../../../shared/platform/app-names.js';
import type { Category, PlatformLogEvent, UserActivity } from '../../../shared/platform/events.js';
import type { LogQueuedEvent, UserQueuedEvent } from '../../../shared/queue/events.js';
import type { EventQueue } from '../../../shared/queue/port.js';
import type { PointClock } from '../../../shared/destinations/tsdb/line-protocol.js';
import { LogThrottle } from '../../../shared/logging/throttle.js';
import type { EventCounter, EventType } from './counters.js';
import type { ReceivedDatagram } from './listener.js';
import type { HandlerOutcome, MessageHandler } from './message-queue.js';
import { parseLogEvent, parseUserEvent, type LogEvent, type ParseFailure } from './parse/index.js';
import { categorise, onceEach } from './rules/categorise.js';
import { exclusionMatcher } from './rules/exclude-user.js';
import { acceptPerfEvent, type RejectedEventCounter } from './rules/perf-filter.js';
import { UserAgentParser } from './user-agent.js';
import type { Log } from '../../../shared/logging/log.js';

/** What both handlers share. */
export interface HandlerDeps {
  appNames: AppNameLookup;
  /** §6.5 counts; null when `platformEvents.eventCount` is not written. */
  counter: EventCounter | null;
  /** Where accepted events go; null when no destination wants this listener's events (§0.6). */
  queue: EventQueue | null;
  /** The process's point clock (§0.3): the point time is decided here, once, for every destination. */
  clock: PointClock;
  log: Log;
}

/**
 * §0.4: a malformed or unrecognised datagram is logged (WARN with its first 512 characters at most
 * once per sender per minute, DEBUG otherwise), counted as `unknown` (§6.5) and fails its handler.
 */
class ParseFailures {
  private readonly throttle = new LogThrottle();

  constructor(
    private readonly listener: EventType,
    private readonly log: Log,
    private readonly counter: EventCounter | null,
  ) {}

  fail(failure: ParseFailure, datagram: ReceivedDatagram): HandlerOutcome {
    this.counter?.countUnknown(this.listener);
    const what = failure.reason === 'unknown_prefix' ? 'unrecognised' : 'malformed';
    const level = this.throttle.take(datagram.address).log ? 'warn' : 'debug';
    this.log[level]({ listener: this.listener, sender: datagram.address, reason: failure.reason, detail: failure.detail, datagram: failure.preview }, `${what} ${this.listener} event from ${datagram.address} (${failure.detail}): ${failure.preview}`);
    return 'failed';
  }
}

function queued(receivedAtMs: number, eventTimeMs: number, clock: PointClock) {
  return { id: randomUUID(), receivedAt: new Date(receivedAtMs).toISOString(), timeNs: clock.next(eventTimeMs).toString() };
}

export interface UserEventHandlerDeps extends HandlerDeps {
  settings: SvcConfig['userEvents'];
}

/** §1.3: parse → exclusion → count → app id/name and user agent → queue. */
export function userEventHandler(deps: UserEventHandlerDeps): MessageHandler<ReceivedDatagram> {
  const excluded = exclusionMatcher(deps.settings.excludeUser);
  const ua = new UserAgentParser();
  const failures = new ParseFailures('user', deps.log, deps.counter);
  return async (datagram): Promise<HandlerOutcome> => {
    const result = parseUserEvent(datagram.data, datagram.receivedAtMs);
    if (!result.ok) return failures.fail(result, datagram);
    const parsed = result.event;
    if (excluded(parsed.user_directory, parsed.user_id)) return 'processed';
    deps.counter?.count('user', parsed.messageType, parsed.host, parsed.origin);
    if (deps.queue === null) return 'processed';

    const { uaText, receivedAtMs, ...fields } = parsed;
    const event: UserActivity = fields;
    if (event.appId !== undefined) event.appName = deps.appNames.nameOf(event.appId) ?? UNKNOWN_APP_NAME;
    if (uaText !== undefined) Object.assign(event, ua.attributes(uaText));
    const q: UserQueuedEvent = { kind: 'user-event', ...queued(receivedAtMs, receivedAtMs, deps.clock), event };
    await deps.queue.send([q]);
    return 'processed';
  };
}

export interface LogEventHandlerDeps extends HandlerDeps {
  settings: SvcConfig['logEvents'];
  /** §6.6 counter, null when `platformEvents.rejectedEventCount` is not written. */
  rejected: RejectedEventCounter | null;
  /** Count perf-filter rejections too (`enginePerformanceMonitor.trackRejectedEvents.enable`). */
  trackPerfRejections: boolean;
  /** Whether some destination takes this event (monsaas takes only some sources and levels); default all. */
  wants?: (event: Pick<PlatformLogEvent, 'source' | 'level'>) => boolean;
}

const SOURCE_FLAGS = {
  'qseow-engine': 'engine',
  'qseow-proxy': 'proxy',
  'qseow-repository': 'repository',
  'qseow-scheduler': 'scheduler',
  'qseow-qix-perf': 'apiPerf',
} as const;

/** The queued form: the §2.2 keys (times travel beside them), categories, the engine-performance app name. */
function platformLogEvent(parsed: LogEvent, categories: readonly Category[], appName: string): PlatformLogEvent {
  if (parsed.source === 'qseow-qix-perf') {
    const { eventTimeMs: _e, receivedAtMs: _r, ...fields } = parsed;
    return { ...fields, app_name: appName };
  }
  const { eventTimeMs: _e, receivedAtMs: _r, ...fields } = parsed;
  return categories.length > 0 ? { ...fields, category: [...categories] } : fields;
}

/** §2.3: parse → count → source flag → perf filter or categorisation → queue. */
export function logEventHandler(deps: LogEventHandlerDeps): MessageHandler<ReceivedDatagram> {
  const { settings } = deps;
  const perf = settings.enginePerformanceMonitor;
  const failures = new ParseFailures('log', deps.log, deps.counter);
  const warnFilterType = onceEach((msg) => deps.log.warn({ listener: 'log' }, msg));
  return async (datagram): Promise<HandlerOutcome> => {
    const result = parseLogEvent(datagram.data, datagram.receivedAtMs);
    if (!result.ok) return failures.fail(result, datagram);
    const parsed = result.event;
    deps.counter?.count('log', parsed.source, parsed.host, parsed.subsystem);
    if (!settings.source[SOURCE_FLAGS[parsed.source]].enable) return 'processed';

    let categories: readonly Category[] = [];
    let appName = '';
    if (parsed.source === 'qseow-qix-perf') {
      if (!perf.enable) return 'processed';
      appName = perf.appNameLookup.enable ? (deps.appNames.nameOf(parsed.app_id) ?? '') : '';
      const accepted = acceptPerfEvent({ appId: parsed.app_id, appName, objectType: parsed.object_type, objectId: parsed.object_id, method: parsed.method }, perf.monitorFilter);
      if (!accepted) {
        if (deps.trackPerfRejections) deps.rejected?.countPerfFilter({ appId: parsed.app_id, appName, method: parsed.method, objectType: parsed.object_type, processTime: parsed.process_time });
        return 'processed';
      }
    } else {
      const outcome = categorise(parsed, settings.categorise, warnFilterType);
      if (outcome.action === 'drop') {
        deps.rejected?.countCategoryDrop(parsed);
        return 'processed';
      }
      categories = outcome.categories;
    }
    if (deps.queue === null || deps.wants?.(parsed) === false) return 'processed';
    const q: LogQueuedEvent = { kind: 'log-event', ...queued(parsed.receivedAtMs, parsed.eventTimeMs, deps.clock), event: platformLogEvent(parsed, categories, appName) };
    await deps.queue.send([q]);
    return 'processed';
  };
}

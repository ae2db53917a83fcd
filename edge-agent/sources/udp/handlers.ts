/**
 * The datagram handlers of the two listeners: platform-formats.md §1.3 (user events) and §2.3 (log
 * events), from parsing to the hand-over to the event queue. A handler resolves to `processed` or
 * `failed` and never loses a datagram silently: a parse failure is counted and logged (WARN at most
 * once per sender per minute), and a queue that refuses the event makes the handler throw, which
 * the listener counts as failed and reports to the error tracker.
 *
 * Both handlers work on batches (the listener's queue hands over what one event-loop turn read,
 * message-queue.ts): every datagram of a batch is checked, counted and filtered on its own, then the
 * batch's events go to the queue in one step: the listener's event batcher takes them synchronously
 * (`offer`) while it has room, so a batch costs no promise at all, and one `send` waits for room
 * otherwise. The one-datagram form runs a batch of one.
 */
import { randomUUID } from 'node:crypto';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { Log } from '../../../shared/logging/log.js';
import { LogThrottle } from '../../../shared/logging/throttle.js';
import { type AppNameLookup, UNKNOWN_APP_NAME } from '../../../shared/platform/app-names.js';
import type { Category, PlatformLogEvent, UserActivity } from '../../../shared/platform/events.js';
import type { LogQueuedEvent, QueuedEvent, UserQueuedEvent } from '../../../shared/queue/events.js';
import type { PointClock } from '../../../shared/queue/point-clock.js';
import type { OfferingQueue } from '../common/batcher.js';
import { exclusionMatcher } from '../common/exclude-user.js';
import type { EventCounter, EventType } from './counters.js';
import type { ReceivedDatagram } from './listener.js';
import type { LogLevelCounts } from './log-levels.js';
import {
  type BatchOutcomes,
  batchHandler,
  HandlerFailure,
  type HandlerOutcome,
  type MessageHandler,
} from './message-queue.js';
import { type LogFields, type ParseFailure, parseLogFields, parseUserEvent } from './parse/index.js';
import { categorise, onceEach } from './rules/categorise.js';
import { acceptPerfEvent, type RejectedEventCounter } from './rules/perf-filter.js';
import { UserAgentParser } from './user-agent.js';

/** What both handlers share. */
export interface HandlerDeps {
  appNames: AppNameLookup;
  /** §6.5 counts; null when `platformEvents.eventCount` is not written. */
  counter: EventCounter | null;
  /**
   * Where accepted events go (the listener's event batcher; a plain EventQueue through `sendOnly`);
   * null when no destination wants this listener's events (§0.6).
   */
  queue: OfferingQueue | null;
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
    this.log[level](
      {
        listener: this.listener,
        sender: datagram.address,
        reason: failure.reason,
        detail: failure.detail,
        datagram: failure.preview,
      },
      `${what} ${this.listener} event from ${datagram.address} (${failure.detail}): ${failure.preview}`,
    );
    return 'failed';
  }
}

/**
 * §0.3 receive time as ISO text, kept for the last millisecond seen: the datagrams of a batch were
 * mostly read in the same millisecond.
 */
class IsoTimes {
  private ms = Number.NaN;
  private text = '';

  of(ms: number): string {
    if (ms !== this.ms) {
      this.ms = ms;
      this.text = new Date(ms).toISOString();
    }
    return this.text;
  }
}

/**
 * A batch's outcomes, and its events on the way to the queue: `pending` marks the datagrams whose
 * outcome is that of the send (`processed` once the queue took the events, their failure if not).
 */
class BatchOutcome<E extends QueuedEvent> {
  readonly outcomes: (HandlerOutcome | HandlerFailure | null)[];
  readonly events: E[] = [];

  constructor(size: number) {
    this.outcomes = new Array<HandlerOutcome | HandlerFailure | null>(size).fill('processed');
  }

  queue(index: number, event: E): void {
    this.outcomes[index] = null;
    this.events.push(event);
  }

  /** Sends the events (synchronously when the queue can take them) and resolves every outcome. */
  send(queue: OfferingQueue | null): BatchOutcomes | Promise<BatchOutcomes> {
    if (this.events.length === 0 || queue === null) return this.settle('processed');
    if (queue.offer(this.events)) return this.settle('processed');
    return queue.send(this.events).then(
      () => this.settle('processed'),
      (err: unknown) => this.settle(new HandlerFailure(err)),
    );
  }

  private settle(outcome: HandlerOutcome | HandlerFailure): BatchOutcomes {
    const out = this.outcomes;
    for (let i = 0; i < out.length; i++) if (out[i] === null) out[i] = outcome;
    return out as BatchOutcomes;
  }
}

export interface UserEventHandlerDeps extends HandlerDeps {
  settings: SvcConfig['userEvents'];
}

/** §1.3: parse → exclusion → count → app id/name and user agent → queue. */
export function userEventHandler(deps: UserEventHandlerDeps): MessageHandler<ReceivedDatagram> {
  const excluded = exclusionMatcher(deps.settings.excludeUser);
  const ua = new UserAgentParser();
  const failures = new ParseFailures('user', deps.log, deps.counter);
  const times = new IsoTimes();
  return batchHandler((datagrams) => {
    const batch = new BatchOutcome<UserQueuedEvent>(datagrams.length);
    for (let i = 0; i < datagrams.length; i++) {
      const datagram = datagrams[i] as ReceivedDatagram;
      const result = parseUserEvent(datagram.data, datagram.receivedAtMs);
      if (!result.ok) {
        batch.outcomes[i] = failures.fail(result, datagram);
        continue;
      }
      const parsed = result.event;
      if (excluded(parsed.user_directory, parsed.user_id)) continue;
      deps.counter?.count('user', parsed.messageType, parsed.host, parsed.origin);
      if (deps.queue === null) continue;

      const { uaText, receivedAtMs, ...fields } = parsed;
      const event: UserActivity = fields;
      if (event.appId !== undefined) event.appName = deps.appNames.nameOf(event.appId) ?? UNKNOWN_APP_NAME;
      if (uaText !== undefined) Object.assign(event, ua.attributes(uaText));
      batch.queue(i, {
        kind: 'user-event',
        id: randomUUID(),
        receivedAt: times.of(receivedAtMs),
        timeNs: deps.clock.nextText(receivedAtMs),
        event,
      });
    }
    return batch.send(deps.queue);
  });
}

export interface LogEventHandlerDeps extends HandlerDeps {
  settings: SvcConfig['logEvents'];
  /** §6.6 counter, null when `platformEvents.rejectedEventCount` is not written. */
  rejected: RejectedEventCounter | null;
  /** Count perf-filter rejections too (`enginePerformanceMonitor.trackRejectedEvents.enable`). */
  trackPerfRejections: boolean;
  /** Whether some destination takes this event (monsaas takes only some sources and levels); default all. */
  wants?: (event: Pick<PlatformLogEvent, 'source' | 'level'>) => boolean;
  /** Events per source and level for the metrics endpoint; absent when nothing reads them. */
  levels?: LogLevelCounts;
}

const SOURCE_FLAGS = {
  'qseow-engine': 'engine',
  'qseow-proxy': 'proxy',
  'qseow-repository': 'repository',
  'qseow-scheduler': 'scheduler',
  'qseow-qix-perf': 'apiPerf',
} as const;

/**
 * The queued form, in place: the parser's object already holds exactly the §2.2 keys (the times
 * travel beside them); categorisation adds `category`, engine performance its `app_name`. Both with
 * a plain named store: Object.assign (a keyed store) would turn an object with this many keys into
 * a slow dictionary-mode one, which JSON.stringify then pays for.
 */
function platformLogEvent(parsed: LogFields, categories: readonly Category[], appName: string): PlatformLogEvent {
  if (parsed.source === 'qseow-qix-perf') {
    const event: typeof parsed & { app_name?: string } = parsed;
    event.app_name = appName;
    if (hasAppName(event)) return event;
    throw new Error('unreachable: app_name was just set');
  }
  if (categories.length === 0) return parsed;
  const event: typeof parsed & { category?: Category[] } = parsed;
  event.category = [...categories];
  return event;
}

const hasAppName = <T extends { app_name?: string }>(event: T): event is T & { app_name: string } =>
  event.app_name !== undefined;

/** §2.3: parse → count → source flag → perf filter or categorisation → queue. */
export function logEventHandler(deps: LogEventHandlerDeps): MessageHandler<ReceivedDatagram> {
  const { settings } = deps;
  const perf = settings.enginePerformanceMonitor;
  const failures = new ParseFailures('log', deps.log, deps.counter);
  const warnFilterType = onceEach((msg) => deps.log.warn({ listener: 'log' }, msg));
  const times = new IsoTimes();
  /** The queued event of one datagram, or its outcome when it goes no further. */
  const handle = (datagram: ReceivedDatagram): LogQueuedEvent | HandlerOutcome => {
    const result = parseLogFields(datagram.data, datagram.receivedAtMs);
    if (!result.ok) return failures.fail(result, datagram);
    const parsed = result.event;
    deps.counter?.count('log', parsed.source, parsed.host, parsed.subsystem);
    const routed = route(parsed);
    // Counted whether or not the event goes further, under the categories it was given (none when it was not categorised).
    deps.levels?.count(parsed.source, parsed.level, parsed.host, routed === 'processed' ? [] : routed.categories);
    if (routed === 'processed' || deps.queue === null || deps.wants?.(parsed) === false) return 'processed';
    const { receivedAtMs } = datagram;
    return {
      kind: 'log-event',
      id: randomUUID(),
      receivedAt: times.of(receivedAtMs),
      timeNs: deps.clock.nextText(result.eventTimeMs),
      event: platformLogEvent(parsed, routed.categories, routed.appName),
    };
  };
  /** The source flag, then the perf filter or the categorisation: the event's categories and app name, or 'processed' when it goes no further. */
  const route = (parsed: LogFields): 'processed' | { categories: readonly Category[]; appName: string } => {
    if (!settings.source[SOURCE_FLAGS[parsed.source]].enable) return 'processed';

    let categories: readonly Category[] = [];
    let appName = '';
    if (parsed.source === 'qseow-qix-perf') {
      if (!perf.enable) return 'processed';
      appName = perf.appNameLookup.enable ? (deps.appNames.nameOf(parsed.app_id) ?? '') : '';
      const accepted = acceptPerfEvent(
        {
          appId: parsed.app_id,
          appName,
          objectType: parsed.object_type,
          objectId: parsed.object_id,
          method: parsed.method,
        },
        perf.monitorFilter,
      );
      if (!accepted) {
        if (deps.trackPerfRejections)
          deps.rejected?.countPerfFilter({
            appId: parsed.app_id,
            appName,
            method: parsed.method,
            objectType: parsed.object_type,
            processTime: parsed.process_time,
          });
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
    return { categories, appName };
  };
  return batchHandler((datagrams) => {
    const batch = new BatchOutcome<LogQueuedEvent>(datagrams.length);
    for (let i = 0; i < datagrams.length; i++) {
      let handled: LogQueuedEvent | HandlerOutcome | HandlerFailure;
      try {
        handled = handle(datagrams[i] as ReceivedDatagram);
      } catch (err) {
        // One datagram's failure is its own: the others of the batch go on.
        handled = new HandlerFailure(err);
      }
      if (typeof handled === 'string' || handled instanceof HandlerFailure) batch.outcomes[i] = handled;
      else batch.queue(i, handled);
    }
    return batch.send(deps.queue);
  });
}

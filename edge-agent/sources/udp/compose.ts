/**
 * The UDP side of the edge (platform-formats.md §1–§3, §6.5–§6.8): the two listeners, their
 * handlers, the event counters and queue-metrics writers, feeding the platform pipeline's durable
 * queue (edge-agent/runtime/platform-pipeline.ts).
 *
 * Start order (after the pipeline): counter and metrics writers → batchers → listeners. The lifecycle
 * stops in reverse: the listeners stop taking datagrams and finish what they accepted, the batchers
 * write what they hold, the writers write their last tick; then the pipeline's queue delivers what
 * is pending (or keeps it on disk for the next start).
 */
import { anyOutput, logListenerEnabled } from '../../../shared/config/outputs.js';
import { EDGE_EVENTS_PER_MESSAGE, wantsLogEvent, wantsUserEvent } from '../../../shared/destinations/registry.js';
import type { AppNameLookup } from '../../../shared/platform/app-names.js';
import type { LocalEventQueue } from '../../../shared/queue/local/index.js';
import type { AppContext } from '../../../shared/runtime/context.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import type { PlatformPipeline } from '../../runtime/platform-pipeline.js';
import { EventBatcher } from '../common/batcher.js';
import { CounterWriter, EventCounter, QueueMetricsWriter } from './counters.js';
import { logEventHandler, userEventHandler } from './handlers.js';
import type { ReceivedDatagram } from './listener.js';
import { type QueueType, UdpListener, type UdpServerSettings } from './listener.js';
import { LogLevelCounts } from './log-levels.js';
import type { MessageHandler } from './message-queue.js';
import { RejectedEventCounter } from './rules/perf-filter.js';

/**
 * Events a listener's batcher holds before its handlers wait (some 10 MB of log events at most): about
 * 100 ms at 50,000 datagrams/s, so a stall of the disk or the event loop drops nothing (docs/udp-events.md;
 * bench/udp.mjs finds the zero-loss rate it allows).
 */
export const BATCHER_EVENTS = 5000;

/**
 * Least time between the starts of two of a listener's batcher rounds (synced journal writes). A
 * synced write costs the kernel about the same whatever it carries, and a round started as soon as
 * the last one ended carries only what arrived during that write: at a steady rate, rounds spaced
 * apart are fewer and fuller, so the kernel's time per datagram falls. bench/udp-steps.mjs measures
 * it (`--rate=25000`, paced as a socket would be: the synced writes of each step and the CPU of the
 * libuv pool that makes them; `--gather=0` is the unspaced rounds). An event is on disk at most this
 * plus one write after its handler ended (docs/udp-events.md); 10 ms at 50,000/s is 500 events, a
 * tenth of what the batcher holds.
 */
export const BATCHER_GATHER_MS = 10;

export interface UdpEdge {
  components: Component[];
  listeners: Partial<Record<QueueType, UdpListener>>;
  queue: LocalEventQueue | null;
  counterWriter: CounterWriter | null;
  metricsWriters: QueueMetricsWriter[];
  /** The log listener's events per source and level (the metrics endpoint reads them); null without it. */
  logLevels: LogLevelCounts | null;
}

export interface UdpEdgeOptions {
  appNames: AppNameLookup;
  /** Where accepted events go (shared with the other platform sources). */
  pipeline: PlatformPipeline;
}

/** The UDP components a config asks for; null when neither listener is enabled. */
export function udpComponents(ctx: AppContext, options: UdpEdgeOptions): UdpEdge | null {
  const { config, logger: log, errors } = ctx;
  const userOn = config.userEvents.enable;
  const logOn = logListenerEnabled(config);
  if (!userOn && !logOn) return null;

  const { queue, outputs } = options.pipeline;
  if (queue === null)
    log.warn(
      {},
      'no destination takes UDP events (tsdb, MQTT or monitoring SaaS with their sendTo… switches): events are received and counted, not stored',
    );

  const pe = config.platformEvents;
  const countersOn = config.tsdbConfig.enable && pe.tsdb.enable && queue !== null;
  const counter = countersOn && pe.eventCount.enable ? new EventCounter() : null;
  const rejected = countersOn && pe.rejectedEventCount.enable ? new RejectedEventCounter() : null;
  const counterWriter =
    queue !== null && (counter !== null || rejected !== null)
      ? new CounterWriter({
          queue,
          clock: ctx.clock,
          intervalMs: pe.tsdb.writeFrequency,
          events: counter && {
            counter,
            measurement: pe.eventCount.tsdb.measurementName,
            tags: pe.eventCount.tsdb.tags,
          },
          rejected: rejected && {
            counter: rejected,
            measurement: pe.rejectedEventCount.tsdb.measurementName,
            perfTags: config.logEvents.enginePerformanceMonitor.trackRejectedEvents.tags,
          },
          log,
        })
      : null;

  const shared = { appNames: options.appNames, counter, clock: ctx.clock, log };
  const listeners: Partial<Record<QueueType, UdpListener>> = {};
  const metricsWriters: QueueMetricsWriter[] = [];
  const batchers: EventBatcher[] = [];
  /** The listener's way into the queue: a batcher that writes its handlers' events in batches (../common/batcher.ts). */
  const batcherFor = (
    name: string,
    errorType: 'UDP_USER_EVENT' | 'UDP_LOG_EVENT',
    module: string,
  ): EventBatcher | null => {
    if (queue === null) return null;
    const batcher = new EventBatcher({
      name,
      queue,
      maxBuffered: BATCHER_EVENTS,
      maxPerMessage: EDGE_EVENTS_PER_MESSAGE,
      gatherMs: BATCHER_GATHER_MS,
      log,
      onWriteError: (err) => errors.track(errorType, err, { module }),
    });
    batchers.push(batcher);
    return batcher;
  };
  const addListener = (
    queueType: QueueType,
    port: number,
    settings: UdpServerSettings,
    handler: MessageHandler<ReceivedDatagram>,
    errorType: 'UDP_USER_EVENT' | 'UDP_LOG_EVENT',
    module: string,
  ) => {
    const listener = new UdpListener({ queueType, port, settings, handler, log, errors, errorType, module });
    listeners[queueType] = listener;
    const m = settings.queueMetrics.tsdb;
    if (m.enable && config.tsdbConfig.enable && queue !== null) {
      metricsWriters.push(
        new QueueMetricsWriter({
          listener,
          queue,
          clock: ctx.clock,
          intervalMs: m.writeFrequency,
          measurement: m.measurementName,
          tags: m.tags,
          log,
        }),
      );
    }
  };
  if (userOn) {
    const settings = config.userEvents.udpServerConfig;
    const batcher = wantsUserEvent(outputs) ? batcherFor('user', 'UDP_USER_EVENT', 'UDP_USER_EVENTS') : null;
    const handler = userEventHandler({ ...shared, settings: config.userEvents, queue: batcher });
    addListener('user_events', settings.portUserActivityEvents, settings, handler, 'UDP_USER_EVENT', 'UDP_USER_EVENTS');
  }
  const logLevels = logOn ? new LogLevelCounts(config.serversToMonitor.servers) : null;
  if (logLevels) {
    const settings = config.logEvents.udpServerConfig;
    const perfTracked = config.logEvents.enginePerformanceMonitor.trackRejectedEvents.enable;
    const handler = logEventHandler({
      ...shared,
      settings: config.logEvents,
      rejected,
      trackPerfRejections: perfTracked,
      queue: anyOutput(outputs.logEvents) ? batcherFor('log', 'UDP_LOG_EVENT', 'UDP_LOG_EVENTS') : null,
      wants: (event) => wantsLogEvent(config, outputs, event),
      levels: logLevels,
    });
    addListener('log_events', settings.portLogEvents, settings, handler, 'UDP_LOG_EVENT', 'UDP_LOG_EVENTS');
  }

  const components: Component[] = [
    ...(counterWriter ? [counterWriter] : []),
    ...metricsWriters,
    ...batchers,
    ...Object.values(listeners),
  ];
  return { components, listeners, queue, counterWriter, metricsWriters, logLevels };
}

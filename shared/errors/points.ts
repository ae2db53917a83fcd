/**
 * Tracked errors as tsdb points (platform-formats.md §6.10): one `svc_errors` point per tracked
 * error, queued as a `points` event of module ERROR_TRACKING_MODULE on the edge's platform queue,
 * so the tsdb destination writes it like the edge's other points (durably, retried while the tsdb
 * is down).
 *
 * No recursion: the tsdb destination writes this module `untracked` (a failure is logged at DEBUG,
 * never tracked), and a point that cannot be built or queued is dropped with a DEBUG line.
 */
import { errorPointsWanted } from '../config/outputs.js';
import type { Log } from '../logging/log.js';
import { type JsonFieldValue, type JsonPoint, pointsEvent } from '../queue/events.js';
import type { PointClock } from '../queue/point-clock.js';
import type { EventQueue } from '../queue/port.js';
import type { AppContext } from '../runtime/context.js';
import type { Component } from '../runtime/lifecycle.js';
import { withoutQuery } from '../util/url.js';
import { DailyErrorSummary } from './daily-summary.js';
import type { ErrorTracker, TrackedError } from './tracker.js';

/** The module of the `points` events that carry `svc_errors` points; the tsdb writes it untracked. */
export const ERROR_TRACKING_MODULE = 'ERROR_TRACKING';

/** §10.9 metadata taken from an error when present. */
export interface ErrorMetadata {
  errorCode?: string;
  httpStatus?: number;
  /** scheme + host + path: no query, no credentials. */
  requestUrl?: string;
  requestTimeoutMs?: number;
  /** From the network-level cause (a system error, which names its `syscall`). */
  remoteAddress?: string;
  remotePort?: number;
  syscall?: string;
}

function prop(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined;
}

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
const integer = (value: unknown): number | undefined => (Number.isSafeInteger(value) ? Number(value) : undefined);

/**
 * The error and what it wraps, outermost first: `cause` chains (fetch's `TypeError: fetch failed`
 * carries the socket error there) and the `errors` of an AggregateError (a connection tried on
 * several addresses). Bounded, and safe against cycles.
 */
function chain(err: unknown): object[] {
  const out: object[] = [];
  const queue: unknown[] = [err];
  while (queue.length > 0 && out.length < 8) {
    const next = queue.shift();
    if (typeof next !== 'object' || next === null || out.includes(next)) continue;
    out.push(next);
    queue.push(prop(next, 'cause'));
    const errors: unknown = prop(next, 'errors');
    if (Array.isArray(errors)) {
      const inner: unknown[] = errors.slice(0, 4);
      queue.push(...inner);
    }
  }
  return out;
}

/** The metadata of `err` and its causes; for each field the outermost error that has it wins. */
export function errorMetadata(err: unknown): ErrorMetadata {
  const links = chain(err);
  const first = <T>(read: (e: object) => T | undefined): T | undefined => {
    for (const e of links) {
      const value = read(e);
      if (value !== undefined) return value;
    }
    return undefined;
  };
  const status = first((e) => {
    const s =
      integer(prop(e, 'status')) ?? integer(prop(e, 'statusCode')) ?? integer(prop(prop(e, 'response'), 'status'));
    return s !== undefined && s >= 100 && s <= 599 ? s : undefined;
  });
  const url = first((e) => {
    const raw = text(prop(e, 'requestUrl')) ?? text(prop(e, 'url'));
    return raw === undefined ? undefined : withoutQuery(raw);
  });
  const network = links.find((e) => text(prop(e, 'syscall')) !== undefined);
  const meta: ErrorMetadata = {};
  const code = first((e) => text(prop(e, 'code')));
  if (code !== undefined) meta.errorCode = code;
  if (status !== undefined) meta.httpStatus = status;
  if (url !== undefined) meta.requestUrl = url;
  // `timeoutMs`: the platform pollers' request errors (edge-agent/sources/platform/http.ts).
  const timeout = first(
    (e) => integer(prop(e, 'requestTimeoutMs')) ?? integer(prop(e, 'timeoutMs')) ?? integer(prop(e, 'timeout')),
  );
  if (timeout !== undefined) meta.requestTimeoutMs = timeout;
  if (network !== undefined) {
    meta.syscall = text(prop(network, 'syscall'));
    const address = text(prop(network, 'address'));
    const port = integer(prop(network, 'port'));
    if (address !== undefined) meta.remoteAddress = address;
    if (port !== undefined) meta.remotePort = port;
  }
  return meta;
}

/** §6.10: the point of one tracked error; tags and fields only when known. */
export function errorPoint(e: TrackedError, measurement: string, timeNs: string): JsonPoint {
  const tags: Record<string, string> = { error_type: e.type, server_name: e.serverName };
  if (e.host) tags['host'] = e.host;
  if (e.virtualProxy) tags['virtual_proxy'] = e.virtualProxy;
  if (e.destinationHost) tags['destination_host'] = e.destinationHost;
  if (e.module) tags['module'] = e.module;
  const str = (value: string): JsonFieldValue => ({ type: 'string', value });
  const int = (value: number): JsonFieldValue => ({ type: 'int', value });
  const fields: Record<string, JsonFieldValue> = { error_count: int(1), error_category: str(e.category) };
  const m = errorMetadata(e.error);
  if (m.errorCode !== undefined) fields['error_code'] = str(m.errorCode);
  if (m.httpStatus !== undefined) fields['http_status'] = int(m.httpStatus);
  if (m.requestUrl !== undefined) fields['request_url'] = str(m.requestUrl);
  if (m.requestTimeoutMs !== undefined) fields['request_timeout_ms'] = int(m.requestTimeoutMs);
  if (m.remoteAddress !== undefined) fields['remote_address'] = str(m.remoteAddress);
  if (m.remotePort !== undefined) fields['remote_port'] = int(m.remotePort);
  if (m.syscall !== undefined) fields['syscall'] = str(m.syscall);
  return { measurement, tags, fields, timeNs };
}

export interface ErrorPointWriterOptions {
  tracker: Pick<ErrorTracker, 'subscribe'>;
  queue: EventQueue;
  measurement: string;
  clock: PointClock;
  log: Log;
  /** Most points waiting for the queue; more are dropped (DEBUG). Default 1000. */
  maxBuffered?: number;
}

/** Points per queued event (a queue message holds at most 1 MiB; a point is a few hundred bytes). */
const POINTS_PER_EVENT = 500;

/**
 * Subscribes to the tracker from its construction and queues each tracked error's point once
 * started. The errors of one moment (a failed batch tracks one per module) go out together, as one
 * event. Subscribed before any component starts, it also keeps the errors of the components that
 * start before it (an MQTT broker down at start, a tsdb that refuses Svc's credentials): they are
 * held, and queued when it starts.
 */
export class ErrorPointWriter implements Component {
  readonly name: string;
  private buffer: JsonPoint[] = [];
  private flushing: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;
  private started = false;

  constructor(private readonly options: ErrorPointWriterOptions) {
    this.name = `error points writer (${options.measurement})`;
    this.unsubscribe = this.options.tracker.subscribe((e) => this.add(e));
  }

  start(): Promise<void> {
    this.started = true;
    if (this.buffer.length > 0) this.flushing ??= this.flush();
    return Promise.resolve();
  }

  /** Stops taking errors and queues what it holds (it stops before the queue does). */
  async stop(): Promise<void> {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    await this.flushing;
  }

  private add(e: TrackedError): void {
    const { log, measurement, clock } = this.options;
    if (this.buffer.length >= (this.options.maxBuffered ?? 1000)) {
      log.debug({ errorType: e.type, measurement }, `${measurement} point dropped: too many waiting for the queue`);
      return;
    }
    try {
      this.buffer.push(errorPoint(e, measurement, clock.next(e.at.getTime()).toString()));
    } catch (err) {
      log.debug({ err, errorType: e.type, measurement }, `${measurement} point cannot be built; dropped`);
      return;
    }
    if (this.started) this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    await new Promise((resolve) => setImmediate(resolve));
    while (this.buffer.length > 0) {
      const points = this.buffer.splice(0, POINTS_PER_EVENT);
      try {
        await this.options.queue.send([pointsEvent(ERROR_TRACKING_MODULE, points)]);
      } catch (err) {
        // Never tracked: tracking it would make another point (§6.10).
        this.options.log.debug(
          { err, points: points.length, measurement: this.options.measurement },
          `${points.length} ${this.options.measurement} point(s) could not be queued; dropped`,
        );
      }
    }
    this.flushing = undefined;
  }
}

/**
 * The error tracking's components (§10.9): the daily summary when `logSummary.enable`, and the
 * `svc_errors` writer when the points are wanted and `queue` (the platform pipeline's) takes them.
 */
export function errorTrackingComponents(
  ctx: Pick<AppContext, 'config' | 'errors' | 'clock' | 'logger'>,
  queue: EventQueue | null,
): Component[] {
  const { config, errors, clock, logger: log } = ctx;
  const settings = config.errorTracking;
  if (!settings.enable) return [];
  const out: Component[] = [];
  if (queue !== null && errorPointsWanted(config))
    out.push(new ErrorPointWriter({ tracker: errors, queue, measurement: settings.tsdb.measurementName, clock, log }));
  if (settings.logSummary.enable) out.push(new DailyErrorSummary({ tracker: errors }));
  return out;
}

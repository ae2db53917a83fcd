/**
 * The audit event API (audit-event-api.md) as one API Gateway HTTP API handler (payload format 2.0).
 * The same handler serves AWS (Lambda entry `lambda.ts`) and local mode (the gateway in
 * functions/local/gateway.ts turns each HTTP request into the same event).
 *
 * Order on the limited endpoints: rate limit → auth → body limits → schema → content and version →
 * idempotency (a repeated eventId is answered from its record) → queue.
 */
import { hash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { SvcConfig } from '../config/schema.js';
import type { Claim, IdempotencyStore } from '../idempotency/port.js';
import type { Logger } from '../logging/logger.js';
import { LogThrottle } from '../logging/throttle.js';
import type { AuditQueuedEvent, QueuedEvent } from '../queue/events.js';
import type { PointClock } from '../queue/point-clock.js';
import {
  type EncodedEvent,
  type EventQueue,
  QueueFullError,
  QueueStorageError,
  QueueUnavailableError,
} from '../queue/port.js';
import type { RateLimitDecision, RateLimiter } from '../ratelimit/port.js';
import { SVC_VERSION } from '../version.js';
import { clientIp } from './client-ip.js';
import { corsHeadersFor } from './cors.js';
import { auditTimeMs } from './datamodel.js';
import { checkContent, validateEnvelope } from './envelope.js';
import { MissingVersionWarner } from './missing-version.js';
import {
  type AuditResponse,
  type IngestionBody,
  ingestionError,
  internalError,
  type Outcome,
  respond,
} from './response.js';
import { AUDIT_EVENT_PATH, TEST_CONNECTION_PATH } from './routes.js';
import { evaluateClientVersion, normaliseVersionHeader } from './versions.js';

export { CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS, CORS_EXPOSE_HEADERS, CORS_MAX_AGE_SECONDS } from './cors.js';
/** Suggested wait after a 503 (queue full), per the spec's "retry after about 30 seconds". */
export const QUEUE_FULL_RETRY_AFTER_SECONDS = 30;

export type AuditRequest = APIGatewayProxyEventV2;
export type { AuditResponse };

export interface AuditHandlerDeps {
  settings: SvcConfig['auditEvents'];
  /** null when `rateLimit.enable` is false. */
  rateLimiter: RateLimiter | null;
  /** null when `idempotency.enable` is false. */
  idempotency: IdempotencyStore | null;
  queue: EventQueue;
  /** Decides each event's tsdb point time when it is queued (platform-formats.md §0.3). */
  clock: PointClock;
  log: Logger;
  /** What the API did, for the operator (counted here, reported by whoever runs the API). */
  counters?: AuditCounters;
  now?: () => number;
}

export interface AuditCounters {
  /** Repeated eventIds answered from the idempotency store instead of being queued again. */
  duplicates: number;
}

/** How long a request waits for a concurrent request with the same eventId before answering 503. */
export const IN_PROGRESS_WAIT_MS = 2000;
const IN_PROGRESS_POLL_MS = 20;
/** Suggested wait after a 503 for an eventId that another request is queueing right now. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

function rateLimitHeaders(decision: RateLimitDecision | null): Record<string, string> {
  if (!decision) return {};
  return {
    'x-ratelimit-limit': String(decision.limit),
    'x-ratelimit-remaining': String(decision.remaining),
    'x-ratelimit-reset': String(decision.resetAt),
  };
}

/** One-shot hashing: no Hash object per request (it cost ≈ 4 µs of a request's CPU under load). */
function digest(text: string): Buffer {
  return hash('sha256', text, 'buffer');
}

/**
 * `Authorization: Bearer <token>`, compared in constant time (hashes make the lengths equal). The
 * configured token's hash is made once (`tokenDigest`), not per request.
 */
function authorised(header: string | undefined, tokenDigest: Buffer): boolean {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
  const given = match?.[1] ?? '';
  return timingSafeEqual(digest(given), tokenDigest) && given !== '';
}

function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const mediaType = value.split(';')[0]?.trim().toLowerCase() ?? '';
  return mediaType === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(mediaType);
}

function header(event: AuditRequest, name: string): string | undefined {
  return event.headers?.[name];
}

/** Claims `id`; while a concurrent request holds it, waits (bounded) for that request to finish. */
async function claimEvent(store: IdempotencyStore, id: string, now: () => number): Promise<Claim> {
  const until = now() + IN_PROGRESS_WAIT_MS;
  for (;;) {
    const claim = await store.claim(id, now());
    if (claim.status !== 'in-progress' || now() >= until) return claim;
    await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_POLL_MS));
  }
}

/**
 * The queue's `send`, for one event per call, but handing the queue the events of all the requests
 * that reach it in one turn of the event loop as one call (after the turn's I/O callbacks, via
 * setImmediate): one message and one journal record for the turn's requests instead of one each,
 * which the consumers then also settle once. Each caller's promise is the batch's: all of the
 * turn's requests are queued, or all are refused (503) — near the queue's capacity a batch that
 * does not fit is refused whole. On Lambda a turn holds one request, so it is one send as before.
 * bench/pipeline.mjs `--sends=together` feeds its queue through it, as the audit API does.
 */
export function sendTogether(queue: EventQueue): (event: QueuedEvent | EncodedEvent) => Promise<void> {
  let batch: (QueuedEvent | EncodedEvent)[] | null = null;
  let sent: Promise<void> = Promise.resolve();
  return (event) => {
    if (batch === null) {
      const events: (QueuedEvent | EncodedEvent)[] = [];
      batch = events;
      sent = new Promise<void>((resolve, reject) => {
        setImmediate(() => {
          batch = null;
          try {
            queue.send(events).then(resolve, reject);
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      });
    }
    batch.push(event);
    return sent;
  };
}

/**
 * The queued event's JSON built around the request's own body (`raw`, which parsed to
 * `queued.event` and passed every check unchanged): the members JSON.stringify(queued) writes, in
 * its order, without stringifying the 2 KB envelope again (≈ 6 µs per request). The text is the
 * client's (its spacing, its escapes); it parses back to the same event, as the in-memory hand-off
 * holds it (so also -0 stays -0, where JSON.stringify wrote 0). Not for a body holding a number
 * JSON.parse made ±Infinity (validateEnvelope's `holdsInfinity`): JSON.stringify writes that as
 * null, and such an event is queued stringified, so its queued text means what it always did.
 */
export function queuedJson(queued: AuditQueuedEvent, raw: string): string {
  const { kind, id, receivedAt, meta, timeNs } = queued;
  const time = timeNs === undefined ? '' : `,"timeNs":${JSON.stringify(timeNs)}`;
  return `{"kind":${JSON.stringify(kind)},"id":${JSON.stringify(id)},"receivedAt":${JSON.stringify(receivedAt)},"event":${raw.trim()},"meta":${JSON.stringify(meta)}${time}}`;
}

/** `toISOString` of a time, kept for the millisecond: requests within one share the text. */
function isoTimes(): (epochMs: number) => string {
  let lastMs = NaN;
  let lastText = '';
  return (epochMs) => {
    if (epochMs !== lastMs) {
      lastText = new Date(epochMs).toISOString();
      lastMs = epochMs;
    }
    return lastText;
  };
}

/** How the front door received a request. */
export interface Arrival {
  /**
   * The body passed maxBodyBytes and was not read (local mode's gateway): the event has no body,
   * and the checks end in 413 where the body would be measured.
   */
  bodyTooLarge: boolean;
}

/** The handler without middleware: routing and the spec's checks. */
export function makeAuditCore(
  deps: AuditHandlerDeps,
): (event: AuditRequest, arrival?: Arrival) => Promise<AuditResponse> {
  const { settings, rateLimiter, idempotency, queue, clock, log } = deps;
  const counters = deps.counters ?? { duplicates: 0 };
  const now = deps.now ?? Date.now;
  const token = settings.apiToken;
  const tokenDigest = digest(token);
  const missingVersion = new MissingVersionWarner(log, now);
  const queueTrouble = new LogThrottle(10_000, now);
  const duplicateSummary = new LogThrottle(60_000, now);
  const send = sendTogether(queue);
  const iso = isoTimes();

  const route = (event: AuditRequest): 'event' | 'test' | null => {
    const path = event.rawPath;
    if (path === AUDIT_EVENT_PATH || path.endsWith(AUDIT_EVENT_PATH)) return 'event';
    if (path === TEST_CONNECTION_PATH || path.endsWith(TEST_CONNECTION_PATH)) return 'test';
    return null;
  };

  return async (event, arrival) => {
    const receivedAt = iso(now());
    const method = event.requestContext.http.method.toUpperCase();
    const target = route(event);
    const error = (
      status: number,
      outcome: Outcome,
      reason: string,
      details?: IngestionBody['details'],
      headers?: Record<string, string>,
    ) => ingestionError(receivedAt, status, outcome, reason, details, headers);

    if (target === null) return error(404, 'dropped', 'Not found');
    const allowed = target === 'event' ? ['POST', 'OPTIONS'] : ['GET', 'OPTIONS'];
    if (method === 'OPTIONS') return { statusCode: 204, headers: {}, body: '' };
    if (!allowed.includes(method))
      return error(405, 'dropped', 'Method not allowed', undefined, { allow: allowed.join(', ') });

    // 1. Rate limit, per client IP.
    const ip = clientIp(event.requestContext.http.sourceIp, header(event, 'x-forwarded-for'), settings.trustedProxies);
    const decision = rateLimiter ? await rateLimiter.consume(ip, now()) : null;
    const limitHeaders = rateLimitHeaders(decision);
    if (decision && !decision.allowed) {
      log.warn({ clientIp: ip, limit: decision.limit }, 'audit API rate limit exceeded');
      return error(
        429,
        'dropped',
        'Too many requests',
        { retryAfterSeconds: decision.retryAfterSeconds },
        { ...limitHeaders, 'retry-after': String(decision.retryAfterSeconds) },
      );
    }

    // 2. Authentication.
    if (token !== '' && !authorised(header(event, 'authorization'), tokenDigest)) {
      log.warn({ clientIp: ip, path: event.rawPath }, 'audit API request without a valid bearer token');
      return error(401, 'dropped', 'Unauthorized', undefined, limitHeaders);
    }

    const versionHeader = header(event, 'x-audit-client-version');
    if (target === 'test') {
      const headerVersion = normaliseVersionHeader(versionHeader);
      const verdict = headerVersion ? evaluateClientVersion(headerVersion, undefined) : null;
      return respond(
        200,
        {
          status: 'ok',
          message: 'The audit API is reachable',
          timestamp: receivedAt,
          ...(verdict
            ? { svcVersion: SVC_VERSION, auditClientVersion: verdict.clientVersion, compatible: verdict.compatible }
            : {}),
        },
        limitHeaders,
      );
    }

    // 3. Body limits and schema.
    const raw =
      event.body === undefined
        ? ''
        : event.isBase64Encoded
          ? Buffer.from(event.body, 'base64').toString('utf8')
          : event.body;
    if (arrival?.bodyTooLarge === true || Buffer.byteLength(raw, 'utf8') > settings.maxBodyBytes) {
      return error(
        413,
        'dropped',
        'Payload too large',
        { errors: [{ message: `the body exceeds ${settings.maxBodyBytes} bytes` }] },
        limitHeaders,
      );
    }
    if (!isJsonContentType(header(event, 'content-type'))) {
      return error(
        415,
        'dropped',
        'Unsupported media type',
        { errors: [{ message: 'Content-Type must be application/json' }] },
        limitHeaders,
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch (err) {
      const why =
        err instanceof SyntaxError
          ? err.message.replace(/\s+in JSON at position.*$/, '').slice(0, 120)
          : 'invalid JSON';
      return error(
        400,
        'dropped',
        'Schema validation failed',
        { errors: [{ instancePath: '', message: `the body is not valid JSON (${why})` }] },
        limitHeaders,
      );
    }
    const structural = validateEnvelope(body);
    if (!structural.ok)
      return error(400, 'dropped', 'Schema validation failed', { errors: structural.errors }, limitHeaders);
    const envelope = structural.envelope;

    // 4. Content and version, all evaluated.
    const violations = checkContent(envelope);
    const version = evaluateClientVersion(versionHeader, envelope.source?.version);
    if (!version.compatible)
      violations.push({
        instancePath: version.from === 'header' ? '' : '/source/version',
        message: version.reason ?? 'incompatible audit client version',
      });
    if (violations.length > 0) {
      log.info(
        { clientIp: ip, eventId: envelope.eventId.slice(0, 64), violations: violations.length },
        'audit event rejected: constraint violations',
      );
      return error(422, 'dropped', 'One or more constraint violations', { errors: violations }, limitHeaders);
    }
    if (version.from === 'none') missingVersion.record(ip, envelope.eventId);

    // 5. Idempotency: a repeated eventId is answered from its record, not queued again.
    const id = envelope.eventId.toLowerCase();
    const claim = idempotency ? await claimEvent(idempotency, id, now) : null;
    if (claim?.status === 'duplicate') {
      counters.duplicates += 1;
      log.debug(
        { clientIp: ip, eventId: id, firstReceivedAt: claim.receivedAt },
        'audit event repeated within the idempotency window: answered 202 without queueing it again',
      );
      // The operator's view: how many, at most once a minute.
      if (duplicateSummary.take('duplicates').log)
        log.info(
          { duplicates: counters.duplicates },
          `audit API: ${counters.duplicates} repeated eventId(s) answered from the idempotency store since start (not queued again)`,
        );
      return respond(
        202,
        { status: 'accepted', receivedAt: claim.receivedAt, outcome: 'processed' } satisfies IngestionBody,
        limitHeaders,
      );
    }
    if (claim?.status === 'in-progress') {
      return error(
        503,
        'error',
        'An event with this eventId is being processed by another request; retry shortly',
        undefined,
        { ...limitHeaders, 'retry-after': String(IN_PROGRESS_RETRY_AFTER_SECONDS) },
      );
    }

    // 6. Queue.
    const queued: AuditQueuedEvent = {
      kind: 'audit',
      id,
      receivedAt,
      event: envelope,
      meta: { clientIp: ip, clientVersion: version.clientVersion },
    };
    queued.timeNs = String(clock.next(auditTimeMs(queued)));
    const sent: QueuedEvent | EncodedEvent = structural.holdsInfinity
      ? queued
      : { event: queued, json: queuedJson(queued, raw) };
    try {
      await send(sent);
      // Only a queued event leaves a record: a refused one (503) lets the client's retry through.
      if (idempotency) await idempotency.complete(id, receivedAt, now());
    } catch (err) {
      await idempotency?.release(id);
      if (err instanceof QueueFullError || err instanceof QueueUnavailableError) {
        const why =
          err instanceof QueueFullError
            ? 'full'
            : err instanceof QueueStorageError
              ? 'cannot store events (disk)'
              : 'unavailable';
        // A full disk under load would otherwise write a line per request, onto the same full disk.
        const { log: write, suppressed } = queueTrouble.take(why);
        if (write)
          log.warn(
            { err, suppressed },
            `audit event queue ${why}: answering 503${suppressed > 0 ? ` (${suppressed} more since the last line)` : ''}`,
          );
        const reason = `The audit event queue ${err instanceof QueueFullError ? 'is full' : err instanceof QueueStorageError ? 'cannot store the event now' : 'is unavailable'}; retry in about 30 seconds`;
        return error(503, 'error', reason, undefined, {
          ...limitHeaders,
          'retry-after': String(QUEUE_FULL_RETRY_AFTER_SECONDS),
        });
      }
      throw err;
    }
    return respond(202, { status: 'accepted', receivedAt, outcome: 'processed' } satisfies IngestionBody, limitHeaders);
  };
}

export type AuditHandler = (event: AuditRequest, context: Context) => Promise<AuditResponse>;

export interface AuditHandlers {
  /** The Lambda handler, and local mode's for every request whose body arrived whole. */
  handler: AuditHandler;
  /**
   * Local mode's gateway calls this, with no body, for a request whose body passes maxBodyBytes:
   * the same checks in the same order (rate limit, token, …), then 413, with the same CORS and
   * rate-limit headers, so the body never has to be read.
   */
  oversized: AuditHandler;
}

/** How long before the Lambda's own timeout the handler gives up and answers 500 itself (with CORS headers, unlike a timeout). */
export const TIMEOUT_EARLY_MS = 5;

class HandlerTimeoutError extends Error {
  override readonly name = 'TimeoutError';
}

/**
 * The core's answer, or a TimeoutError `TIMEOUT_EARLY_MS` before the invocation runs out of time
 * (Lambda's context deadline; local mode's gateway gives 30 s): the caller then answers 500 while
 * it still can.
 */
function beforeDeadline(work: Promise<AuditResponse>, context: Context): Promise<AuditResponse> {
  const remaining =
    typeof context.getRemainingTimeInMillis === 'function' ? context.getRemainingTimeInMillis() : Infinity;
  if (!Number.isFinite(remaining)) return work;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new HandlerTimeoutError('the audit API request ran out of time')),
      Math.max(0, remaining - TIMEOUT_EARLY_MS),
    );
    work.then(
      (response) => {
        clearTimeout(timer);
        resolve(response);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/**
 * Both handlers over one core (one rate limiter, one warner): core, then CORS headers on every
 * answer, and an error boundary that turns any failure (or running out of time) into a 500 that
 * carries only an error id, the log line having the details. Composed by hand, not with middy:
 * per request middy built a request object, ran each middleware as a promise, raced a timer and
 * http-cors cloned the headers — ≈ 10 µs of CPU for what is one merge of precomputed headers.
 */
export function makeAuditHandlers(deps: AuditHandlerDeps): AuditHandlers {
  const core = makeAuditCore(deps);
  const corsFor = corsHeadersFor(deps.settings.cors.allowedOrigins);
  const compose =
    (arrival: Arrival | undefined): AuditHandler =>
    async (event, context) => {
      let response: AuditResponse;
      try {
        response = await beforeDeadline(core(event, arrival), context);
      } catch (err) {
        const errorId = randomUUID();
        deps.log.error({ errorId, err, path: event.rawPath }, 'audit API request failed');
        response = internalError(new Date().toISOString(), errorId);
      }
      const origin = event.headers?.['Origin'] ?? event.headers?.['origin'];
      // Into the answer's own (fresh) header object: a spread of the two into a new one took ≈ 4 µs
      // (V8's slow path for an object that size), Object.assign ≈ 0.1.
      response.headers = Object.assign(response.headers ?? {}, corsFor(origin));
      return response;
    };
  return { handler: compose(undefined), oversized: compose({ bodyTooLarge: true }) };
}

/** The Lambda handler. */
export function makeAuditHandler(deps: AuditHandlerDeps): AuditHandler {
  return makeAuditHandlers(deps).handler;
}

/**
 * The audit event API (audit-event-api.md) as one API Gateway HTTP API handler (payload format 2.0).
 * The same handler serves AWS (Lambda entry `lambda.ts`) and local mode (the gateway in
 * functions/local/gateway/ turns each HTTP request into the same event).
 *
 * A request goes through the steps of `AuditSteps`, in this order, until one of them answers:
 * route (404, 405, OPTIONS) → 1. rate limit → 2. authenticate → (the test-connection endpoint answers
 * here) → 3. read the body (size, content type, JSON) → 4. check the envelope (schema, then content
 * and version) → 5. claim its eventId (a repeated eventId is answered from its record) → 6. enqueue.
 */
import { hash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { SvcConfig } from '../config/schema.js';
import type { IdempotencyStore } from '../idempotency/port.js';
import type { Logger } from '../logging/logger.js';
import { LogThrottle } from '../logging/throttle.js';
import type { AuditQueuedEvent } from '../queue/events.js';
import type { PointClock } from '../queue/point-clock.js';
import {
  type EventQueue,
  QueueFullError,
  QueueStorageError,
  QueueUnavailableError,
  type SendableEvent,
} from '../queue/port.js';
import type { RateLimitDecision, RateLimiter } from '../ratelimit/port.js';
import { SVC_VERSION } from '../version.js';
import { clientIp } from './client-ip.js';
import { corsHeadersFor } from './cors.js';
import { auditTimeMs } from './datamodel.js';
import { checkContent, type PassedEnvelope, validateEnvelope } from './envelope.js';
import { MissingVersionWarner } from './missing-version.js';
import { type AuditResponse, type IngestionBody, ingestionError, internalError, respond } from './response.js';
import { AUDIT_EVENT_PATH, TEST_CONNECTION_PATH } from './routes.js';
import { evaluateClientVersion, normaliseVersionHeader, type VersionVerdict } from './versions.js';

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

/**
 * One-shot hashing: no Hash object per request, as every request's token is hashed.
 * bench/audit-steps.mjs ("handler core") measures the path it is on.
 */
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

/**
 * The queue's `send`, for one event per call, but handing the queue the events of all the requests
 * that reach it in one turn of the event loop as one call (after the turn's I/O callbacks, via
 * setImmediate): one message and one journal record for the turn's requests instead of one each,
 * which the consumers then also settle once. Each caller's promise is the batch's: all of the
 * turn's requests are queued, or all are refused (503) — near the queue's capacity a batch that
 * does not fit is refused whole. On Lambda a turn holds one request, so it is one send as before.
 * bench/pipeline.mjs `--sends=together` feeds its queue through it, as the audit API does.
 */
export function sendTogether(queue: EventQueue): (event: SendableEvent) => Promise<void> {
  let batch: SendableEvent[] | null = null;
  let sent: Promise<void> = Promise.resolve();
  return (event) => {
    if (batch === null) {
      const events: SendableEvent[] = [];
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
 * its order, without stringifying the 2 KB envelope again: that is the most of encoding it
 * (bench/audit-steps.mjs: its "queue codec" step is the encoding this spares, its "handler core"
 * runs with this). The text is the client's (its spacing, its escapes); it parses back to the same
 * event, as the in-memory hand-off holds it (so also -0 stays -0, where JSON.stringify wrote 0). Not for a body holding a number
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

/** The two endpoints of the API (audit-event-api.md); anything else is 404. */
type Endpoint = 'event' | 'test';

/**
 * What a step of the core gives back: the answer that ends the request, or the values the next
 * steps need (and no `answer`). The answer's wrapper is made only on the way out.
 */
type Step<Values> = { readonly answer: AuditResponse } | (Values & { readonly answer?: undefined });

/** Who sent the request, as the rate limit saw them: every later answer carries their rate-limit headers. */
interface Caller {
  ip: string;
  limitHeaders: Record<string, string>;
}

/** The body as text and as parsed JSON: the text is queued as it came (`queuedJson`), the value is checked. */
interface Body {
  raw: string;
  parsed: unknown;
}

/** An envelope that passed every check, ready to claim and queue. */
interface Checked {
  structural: PassedEnvelope;
  /** The key of the idempotency record and the queued event's id: the eventId in lower case. */
  id: string;
  version: Readonly<VersionVerdict>;
}

/**
 * The core's steps, in the order of the file's opening comment, over what they share (the deps,
 * the token's digest, the log throttles). Each step returns the answer that ends the request or
 * lets it go on; `answer` runs them in turn. Made once per handler, so a request costs only what
 * its steps' results need.
 */
class AuditSteps {
  private readonly settings: AuditHandlerDeps['settings'];
  private readonly rateLimiter: RateLimiter | null;
  private readonly idempotency: IdempotencyStore | null;
  private readonly clock: PointClock;
  private readonly log: Logger;
  private readonly counters: AuditCounters;
  private readonly now: () => number;
  /** The configured bearer token ('' for none), and its digest, made once. */
  private readonly token: string;
  private readonly tokenDigest: Buffer;
  private readonly missingVersion: MissingVersionWarner;
  private readonly queueTrouble: LogThrottle;
  private readonly duplicateSummary: LogThrottle;
  private readonly send: (event: SendableEvent) => Promise<void>;
  private readonly iso: (epochMs: number) => string;

  constructor(deps: AuditHandlerDeps) {
    this.settings = deps.settings;
    this.rateLimiter = deps.rateLimiter;
    this.idempotency = deps.idempotency;
    this.clock = deps.clock;
    this.log = deps.log;
    this.counters = deps.counters ?? { duplicates: 0 };
    this.now = deps.now ?? Date.now;
    this.token = deps.settings.apiToken;
    this.tokenDigest = digest(this.token);
    this.missingVersion = new MissingVersionWarner(deps.log, this.now);
    this.queueTrouble = new LogThrottle(10_000, this.now);
    this.duplicateSummary = new LogThrottle(60_000, this.now);
    this.send = sendTogether(deps.queue);
    this.iso = isoTimes();
  }

  /** The request's answer: the steps in turn, until one answers. */
  async answer(event: AuditRequest, arrival: Arrival | undefined): Promise<AuditResponse> {
    const receivedAt = this.iso(this.now());
    const endpoint = this.route(event, receivedAt);
    if (typeof endpoint !== 'string') return endpoint;
    const caller = await this.rateLimit(event, receivedAt);
    if (caller.answer) return caller.answer;
    const unauthorised = this.authenticate(event, caller, receivedAt);
    if (unauthorised) return unauthorised;
    if (endpoint === 'test') return this.testConnection(event, caller, receivedAt);
    const body = this.readBody(event, arrival, caller, receivedAt);
    if (body.answer) return body.answer;
    const checked = this.checkEnvelope(event, body.parsed, caller, receivedAt);
    if (checked.answer) return checked.answer;
    const claimed = this.idempotency ? await this.claim(this.idempotency, checked.id, caller, receivedAt) : undefined;
    if (claimed) return claimed;
    return await this.enqueue(caller, body.raw, checked, receivedAt);
  }

  /** The endpoint the path names, or the answer to a path or method it does not serve (and to OPTIONS). */
  private route(event: AuditRequest, receivedAt: string): Endpoint | AuditResponse {
    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath;
    const endpoint: Endpoint | null =
      path === AUDIT_EVENT_PATH || path.endsWith(AUDIT_EVENT_PATH)
        ? 'event'
        : path === TEST_CONNECTION_PATH || path.endsWith(TEST_CONNECTION_PATH)
          ? 'test'
          : null;
    if (endpoint === null) return ingestionError(receivedAt, 404, 'dropped', 'Not found');
    if (method === 'OPTIONS') return { statusCode: 204, headers: {}, body: '' };
    const allowed = endpoint === 'event' ? 'POST' : 'GET';
    if (method !== allowed)
      return ingestionError(receivedAt, 405, 'dropped', 'Method not allowed', undefined, {
        allow: `${allowed}, OPTIONS`,
      });
    return endpoint;
  }

  /** 1. Rate limit, per client IP. */
  private async rateLimit(event: AuditRequest, receivedAt: string): Promise<Step<Caller>> {
    const ip = clientIp(
      event.requestContext.http.sourceIp,
      header(event, 'x-forwarded-for'),
      this.settings.trustedProxies,
    );
    const decision = this.rateLimiter ? await this.rateLimiter.consume(ip, this.now()) : null;
    const limitHeaders = rateLimitHeaders(decision);
    if (decision && !decision.allowed) {
      this.log.warn({ clientIp: ip, limit: decision.limit }, 'audit API rate limit exceeded');
      return {
        answer: ingestionError(
          receivedAt,
          429,
          'dropped',
          'Too many requests',
          { retryAfterSeconds: decision.retryAfterSeconds },
          { ...limitHeaders, 'retry-after': String(decision.retryAfterSeconds) },
        ),
      };
    }
    return { ip, limitHeaders };
  }

  /** 2. Authentication: the bearer token, when one is configured. */
  private authenticate(event: AuditRequest, caller: Caller, receivedAt: string): AuditResponse | undefined {
    if (this.token === '' || authorised(header(event, 'authorization'), this.tokenDigest)) return undefined;
    this.log.warn({ clientIp: caller.ip, path: event.rawPath }, 'audit API request without a valid bearer token');
    return ingestionError(receivedAt, 401, 'dropped', 'Unauthorized', undefined, caller.limitHeaders);
  }

  /** The test-connection endpoint's answer, with the version verdict when the client sent its version. */
  private testConnection(event: AuditRequest, caller: Caller, receivedAt: string): AuditResponse {
    const headerVersion = normaliseVersionHeader(header(event, 'x-audit-client-version'));
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
      caller.limitHeaders,
    );
  }

  /** 3. The body: its size, its content type, and JSON. */
  private readBody(event: AuditRequest, arrival: Arrival | undefined, caller: Caller, receivedAt: string): Step<Body> {
    const { maxBodyBytes } = this.settings;
    const raw =
      event.body === undefined
        ? ''
        : event.isBase64Encoded
          ? Buffer.from(event.body, 'base64').toString('utf8')
          : event.body;
    if (arrival?.bodyTooLarge === true || Buffer.byteLength(raw, 'utf8') > maxBodyBytes) {
      const details = { errors: [{ message: `the body exceeds ${maxBodyBytes} bytes` }] };
      return { answer: ingestionError(receivedAt, 413, 'dropped', 'Payload too large', details, caller.limitHeaders) };
    }
    if (!isJsonContentType(header(event, 'content-type'))) {
      const details = { errors: [{ message: 'Content-Type must be application/json' }] };
      return {
        answer: ingestionError(receivedAt, 415, 'dropped', 'Unsupported media type', details, caller.limitHeaders),
      };
    }
    try {
      return { raw, parsed: JSON.parse(raw) };
    } catch (err) {
      const why =
        err instanceof SyntaxError
          ? err.message.replace(/\s+in JSON at position.*$/, '').slice(0, 120)
          : 'invalid JSON';
      const details = { errors: [{ instancePath: '', message: `the body is not valid JSON (${why})` }] };
      return {
        answer: ingestionError(receivedAt, 400, 'dropped', 'Schema validation failed', details, caller.limitHeaders),
      };
    }
  }

  /** 4. The envelope: schema (400), then its content and the client's version, all evaluated (422). */
  private checkEnvelope(event: AuditRequest, parsed: unknown, caller: Caller, receivedAt: string): Step<Checked> {
    const { ip, limitHeaders } = caller;
    const structural = validateEnvelope(parsed);
    if (!structural.ok)
      return {
        answer: ingestionError(
          receivedAt,
          400,
          'dropped',
          'Schema validation failed',
          { errors: structural.errors },
          limitHeaders,
        ),
      };
    const envelope = structural.envelope;
    const violations = checkContent(envelope);
    const version = evaluateClientVersion(header(event, 'x-audit-client-version'), envelope.source?.version);
    if (!version.compatible)
      violations.push({
        instancePath: version.from === 'header' ? '' : '/source/version',
        message: version.reason ?? 'incompatible audit client version',
      });
    if (violations.length > 0) {
      this.log.info(
        { clientIp: ip, eventId: envelope.eventId.slice(0, 64), violations: violations.length },
        'audit event rejected: constraint violations',
      );
      const details = { errors: violations };
      return {
        answer: ingestionError(receivedAt, 422, 'dropped', 'One or more constraint violations', details, limitHeaders),
      };
    }
    if (version.from === 'none') this.missingVersion.record(ip, envelope.eventId);
    return { structural, id: envelope.eventId.toLowerCase(), version };
  }

  /**
   * 5. Idempotency: claims the id; a repeated eventId is answered from its record, not queued again.
   * While a concurrent request holds the claim, waits (bounded) for that request to finish, then 503.
   */
  private async claim(
    store: IdempotencyStore,
    id: string,
    caller: Caller,
    receivedAt: string,
  ): Promise<AuditResponse | undefined> {
    const { now } = this;
    const until = now() + IN_PROGRESS_WAIT_MS;
    let claim = await store.claim(id, now());
    while (claim.status === 'in-progress' && now() < until) {
      await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_POLL_MS));
      claim = await store.claim(id, now());
    }
    if (claim.status === 'duplicate') return this.repeated(id, claim.receivedAt, caller);
    if (claim.status === 'in-progress')
      return ingestionError(
        receivedAt,
        503,
        'error',
        'An event with this eventId is being processed by another request; retry shortly',
        undefined,
        { ...caller.limitHeaders, 'retry-after': String(IN_PROGRESS_RETRY_AFTER_SECONDS) },
      );
    return undefined;
  }

  /** A repeated eventId's answer: 202 with the first arrival's time, counted and summed up for the operator. */
  private repeated(id: string, firstReceivedAt: string, caller: Caller): AuditResponse {
    const { counters, log } = this;
    counters.duplicates += 1;
    log.debug(
      { clientIp: caller.ip, eventId: id, firstReceivedAt },
      'audit event repeated within the idempotency window: answered 202 without queueing it again',
    );
    // The operator's view: how many, at most once a minute.
    if (this.duplicateSummary.take('duplicates').log)
      log.info(
        { duplicates: counters.duplicates },
        `audit API: ${counters.duplicates} repeated eventId(s) answered from the idempotency store since start (not queued again)`,
      );
    return respond(
      202,
      { status: 'accepted', receivedAt: firstReceivedAt, outcome: 'processed' } satisfies IngestionBody,
      caller.limitHeaders,
    );
  }

  /** 6. Queue: 202 once the queue holds the event, 503 when it cannot take it. */
  private async enqueue(caller: Caller, raw: string, checked: Checked, receivedAt: string): Promise<AuditResponse> {
    const { clock, idempotency, now, send } = this;
    const { ip } = caller;
    const { id, structural, version } = checked;
    const envelope = structural.envelope;
    const queued: AuditQueuedEvent = {
      kind: 'audit',
      id,
      receivedAt,
      event: envelope,
      meta: { clientIp: ip, clientVersion: version.clientVersion },
    };
    queued.timeNs = String(clock.next(auditTimeMs(queued)));
    const sent: SendableEvent = structural.holdsInfinity ? queued : { event: queued, json: queuedJson(queued, raw) };
    try {
      await send(sent);
      // Only a queued event leaves a record: a refused one (503) lets the client's retry through.
      if (idempotency) await idempotency.complete(id, receivedAt, now());
    } catch (err) {
      await idempotency?.release(id);
      if (err instanceof QueueFullError || err instanceof QueueUnavailableError)
        return this.queueRefused(err, caller, receivedAt);
      throw err;
    }
    return respond(
      202,
      { status: 'accepted', receivedAt, outcome: 'processed' } satisfies IngestionBody,
      caller.limitHeaders,
    );
  }

  /** 503 for a queue that is full or cannot store: the client retries later, and the log says so once in a while. */
  private queueRefused(err: QueueFullError | QueueUnavailableError, caller: Caller, receivedAt: string): AuditResponse {
    const why =
      err instanceof QueueFullError
        ? 'full'
        : err instanceof QueueStorageError
          ? 'cannot store events (disk)'
          : 'unavailable';
    // A full disk under load would otherwise write a line per request, onto the same full disk.
    const { log: write, suppressed } = this.queueTrouble.take(why);
    if (write)
      this.log.warn(
        { err, suppressed },
        `audit event queue ${why}: answering 503${suppressed > 0 ? ` (${suppressed} more since the last line)` : ''}`,
      );
    const reason = `The audit event queue ${err instanceof QueueFullError ? 'is full' : err instanceof QueueStorageError ? 'cannot store the event now' : 'is unavailable'}; retry in about 30 seconds`;
    return ingestionError(receivedAt, 503, 'error', reason, undefined, {
      ...caller.limitHeaders,
      'retry-after': String(QUEUE_FULL_RETRY_AFTER_SECONDS),
    });
  }
}

/** The handler without middleware: routing and the spec's checks, as the steps of `AuditSteps`. */
export function makeAuditCore(
  deps: AuditHandlerDeps,
): (event: AuditRequest, arrival?: Arrival) => Promise<AuditResponse> {
  const steps = new AuditSteps(deps);
  return (event, arrival) => steps.answer(event, arrival);
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
 * http-cors cloned the headers, all for what is one merge of precomputed headers.
 * bench/audit-steps.mjs measures what the composition costs ("handler whole" against "handler
 * core"); test/shared/audit/cors.test.ts holds the headers to those http-cors gave.
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
      // Into the answer's own (fresh) header object: a spread of the two into a new one takes V8's
      // slow path for an object that size (bench/audit-steps.mjs: "handler whole" against "handler core").
      response.headers = Object.assign(response.headers ?? {}, corsFor(origin));
      return response;
    };
  return { handler: compose(undefined), oversized: compose({ bodyTooLarge: true }) };
}

/** The Lambda handler. */
export function makeAuditHandler(deps: AuditHandlerDeps): AuditHandler {
  return makeAuditHandlers(deps).handler;
}

/**
 * GET a JSON document from a platform API over mutual TLS (platform-formats.md §4, §5). node:https,
 * because fetch cannot present a client certificate. One deadline covers the whole request,
 * redirects included, so a poll never outlasts its timeout.
 *
 * Every failure is a PlatformRequestError whose fields the error tracker's `categorise`
 * (shared/errors/tracker.ts, §10.9) reads: `code` (ETIMEDOUT, ECONNREFUSED …), `statusCode`, a
 * message that says `TLS` for handshake and certificate failures, and the name
 * `InvalidResponseError` for an answer that is not what the API promises. Messages are Svc's own
 * words, never text from the response or the host name, so that a body or a host that happens to
 * contain "timeout" or "cert" cannot change the category.
 */
import { randomInt } from 'node:crypto';
import { type IncomingMessage, validateHeaderName, validateHeaderValue } from 'node:http';
import { Agent, request } from 'node:https';
import { proxyAgentOptions } from '../../../shared/runtime/proxy.js';
import type { ClientTls } from './tls.js';

/** §4 / §5.1: the health and session APIs answer within 5 s. */
export const HEALTH_TIMEOUT_MS = 5_000;
export const SESSION_TIMEOUT_MS = 5_000;
/** §5.2 (Svc choice): the app list of a large site takes longer to build. */
export const APP_LIST_TIMEOUT_MS = 30_000;
/** §4: redirects followed by the health poll (the other APIs are not redirected). */
export const HEALTH_MAX_REDIRECTS = 5;

/** One header: name and value, as sent. */
export type Header = readonly [name: string, value: string];

export interface GetJsonRequest {
  url: URL;
  /** The fixed headers of the API, in order. */
  headers: readonly Header[];
  /**
   * Configured headers (`servers[].headers`), sent after the fixed ones and replacing one of the same
   * name (compared case-insensitively). They go only to the URL's origin: a redirect elsewhere drops them.
   */
  extraHeaders?: Readonly<Record<string, string>>;
  tls: ClientTls;
  timeoutMs: number;
  maxRedirects?: number;
  /** Larger bodies are refused (InvalidResponseError). */
  maxBodyBytes: number;
  /** 4: connect over IPv4 only (the app list, §5.2). */
  family?: 4;
  /** Aborts the request (Svc is stopping): it rejects with RequestCancelledError. */
  signal?: AbortSignal;
}

export interface JsonResponse {
  body: unknown;
  /** The URL that answered (after redirects). */
  url: URL;
  /** When the whole body had arrived (ms): the receive time of §0.3. */
  receivedAtMs: number;
}

/** What a request error says about where it went (§6.10 `request_url`, `request_timeout_ms`). */
interface RequestContext {
  /** scheme + host + path; the query (which holds the Xrfkey) is left out. */
  url: string;
  timeoutMs: number;
}

function requestContext(url: URL, timeoutMs: number): RequestContext {
  return { url: `${url.protocol}//${url.host}${url.pathname}`, timeoutMs };
}

/** Every failure of a platform request. */
export abstract class PlatformRequestError extends Error {
  /** scheme + host + path (no query). */
  readonly url: string;
  readonly timeoutMs: number;
  /** The poll's context (§10.9 `{host}`, `{host, virtualProxy}`), set by the poller that made the request. */
  host?: string;
  virtualProxy?: string;

  constructor(message: string, context: RequestContext, options?: { cause?: unknown }) {
    super(message, options);
    this.url = context.url;
    this.timeoutMs = context.timeoutMs;
  }
}

/** No complete answer within the deadline: category `timeout`. */
export class RequestTimeoutError extends PlatformRequestError {
  override readonly name = 'RequestTimeoutError';
  readonly code = 'ETIMEDOUT';
  constructor(context: RequestContext) {
    super(`no complete answer within ${context.timeoutMs} ms (timeout)`, context);
  }
}

const CONNECTION_REASONS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed for now',
  ECONNRESET: 'connection reset by the server',
  EPIPE: 'connection closed by the server',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EADDRNOTAVAIL: 'address not available',
};

/** The connection failed (refused, reset, no such host): categories `connection_refused`, `host_not_found`, `connection_reset`. */
export class ConnectionError extends PlatformRequestError {
  override readonly name = 'ConnectionError';
  readonly code: string;
  readonly syscall: string | undefined;
  readonly address: string | undefined;
  readonly port: number | undefined;
  constructor(
    code: string,
    context: RequestContext,
    cause: unknown,
    details: { syscall?: string; address?: string; port?: number },
  ) {
    super(`${CONNECTION_REASONS[code] ?? 'connection failed'} (${code})`, context, { cause });
    this.code = code;
    this.syscall = details.syscall;
    this.address = details.address;
    this.port = details.port;
  }
}

/** The TLS handshake failed: a certificate was refused on either side. Category `certificate_error`. */
export class TlsError extends PlatformRequestError {
  override readonly name = 'TlsError';
  readonly code: string;
  constructor(code: string, reason: string, context: RequestContext, cause: unknown) {
    super(`TLS handshake failed: ${reason}`, context, { cause });
    this.code = code;
  }
}

/** An HTTP error status (4xx, 5xx): categories `auth_error`, `not_found`, `rate_limited`, `http_5xx`, `http_4xx`. */
export class HttpStatusError extends PlatformRequestError {
  override readonly name = 'HttpStatusError';
  readonly statusCode: number;
  /** The start of the body (control characters removed), for the log. */
  readonly bodyPreview: string;
  constructor(statusCode: number, bodyPreview: string, context: RequestContext) {
    super(`HTTP ${statusCode}`, context);
    this.statusCode = statusCode;
    this.bodyPreview = bodyPreview;
  }
}

/**
 * The answer is not what the API promises: a status other than 200 that is no error (204, a redirect
 * not followed), a body that is not JSON, too large, or of the wrong shape. Category `invalid_response`.
 */
export class InvalidResponseError extends PlatformRequestError {
  override readonly name = 'InvalidResponseError';
  readonly statusCode: number | undefined;
  constructor(message: string, context: RequestContext, statusCode?: number) {
    super(`invalid response: ${message}`, context);
    this.statusCode = statusCode;
  }
}

/** The request was cancelled because Svc is stopping: not a failure of the platform, never tracked. */
export class RequestCancelledError extends PlatformRequestError {
  override readonly name = 'RequestCancelledError';
  constructor(context: RequestContext) {
    super('cancelled: Svc is stopping', context);
  }
}

/** A response body of a wrong shape, found by the caller's validation after the request. */
export function invalidBody(response: JsonResponse, problem: string, timeoutMs: number): InvalidResponseError {
  return new InvalidResponseError(problem, requestContext(response.url, timeoutMs));
}

const XRFKEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** §5.1 (Svc choice): 16 random characters of [A-Za-z0-9], new for every request. */
export function xrfkey(): string {
  let key = '';
  for (let i = 0; i < 16; i++) key += XRFKEY_ALPHABET[randomInt(XRFKEY_ALPHABET.length)];
  return key;
}

/** A configured header name and value that node:http would refuse, or undefined when both are fine. */
export function headerProblem(name: string, value: string): string | undefined {
  try {
    validateHeaderName(name);
  } catch {
    return 'is not a valid HTTP header name';
  }
  try {
    validateHeaderValue(name, value);
  } catch {
    return 'has a value that cannot be sent in an HTTP header (line breaks or other control characters)';
  }
  return undefined;
}

/** The headers in sending order: `extra` replaces a fixed header of the same name in its place. */
function mergeHeaders(fixed: readonly Header[], extra: Readonly<Record<string, string>>): Record<string, string> {
  const merged = new Map<string, Header>();
  for (const [name, value] of [...fixed, ...Object.entries(extra)]) merged.set(name.toLowerCase(), [name, value]);
  return Object.fromEntries([...merged.values()]);
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** OpenSSL's and Node's codes of a TLS or certificate failure (verification codes have no prefix). */
const TLS_CODE =
  /^(ERR_SSL_|ERR_TLS_|ERR_OSSL_)|CERT|UNABLE_TO_|CRL_|INVALID_CA|PATH_LENGTH_EXCEEDED|INVALID_PURPOSE|HOSTNAME_MISMATCH/;

function field(err: unknown, name: string): unknown {
  return typeof err === 'object' && err !== null ? Reflect.get(err, name) : undefined;
}

function stringField(err: unknown, name: string): string | undefined {
  const value = field(err, name);
  return typeof value === 'string' ? value : undefined;
}

function numberField(err: unknown, name: string): number | undefined {
  const value = field(err, name);
  return typeof value === 'number' ? value : undefined;
}

/** A socket-level error of node:https as one of ours. */
function classify(err: unknown, context: RequestContext): PlatformRequestError {
  if (err instanceof PlatformRequestError) return err;
  const code = stringField(err, 'code') ?? 'UNKNOWN';
  if (TLS_CODE.test(code) || stringField(err, 'library') === 'SSL routines') {
    // OpenSSL's reason (`tlsv13 alert certificate required`) or Node's sentence (`self-signed certificate`).
    const reason =
      stringField(err, 'reason') ?? (err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err));
    return new TlsError(code, reason, context, err);
  }
  const address = stringField(err, 'address');
  const port = numberField(err, 'port');
  const syscall = stringField(err, 'syscall');
  return new ConnectionError(code, context, err, {
    ...(syscall ? { syscall } : {}),
    ...(address ? { address } : {}),
    ...(port !== undefined ? { port } : {}),
  });
}

const CONTROL = /[\u0000-\u001f\u007f]/g;

/**
 * GETs `req.url` and parses the JSON body of its 200 answer. Rejects with a PlatformRequestError:
 * timeout, connection, TLS, HTTP status ≥ 400, or an invalid response (another status, a redirect
 * beyond `maxRedirects` or to a non-https URL, a body that is too large or not JSON).
 */
export async function getJson(req: GetJsonRequest): Promise<JsonResponse> {
  const slots = requestSlots(req.tls);
  if (!(await slots.acquire(req.signal))) throw new RequestCancelledError(requestContext(req.url, req.timeoutMs));
  try {
    return await getJsonInSlot(req);
  } finally {
    slots.release();
  }
}

/**
 * Most requests of one client context in flight at once. Every target is polled at the same moment
 * (§0.7: at start, then every interval), and a TLS handshake costs milliseconds of CPU: with hundreds
 * of servers, all handshakes at once took longer than the 5 s timeout, which counted for every request
 * from the tick, and polls failed although each server answered at once (bench/pollers.mjs). A poll
 * waits for a slot first; its timeout starts when its request is sent, so it measures the server,
 * not the queue. A poll still waiting at the next tick skips that tick, as a slow poll does.
 */
export const MAX_REQUESTS_IN_FLIGHT = 32;

/** A FIFO semaphore: acquire() resolves true with a slot, or false when `signal` aborts first. */
export class RequestSlots {
  private free: number;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Requests waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }

  acquire(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.free > 0) {
      this.free -= 1;
      return Promise.resolve(true);
    }
    return new Promise<boolean>((resolve) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i !== -1) this.waiting.splice(i, 1);
        resolve(false);
      };
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.free += 1;
  }
}

const slotsOfContext = new WeakMap<ClientTls, RequestSlots>();

/** The slots of one client context: all pollers of a process share its context, and so its slots. */
export function requestSlots(tls: ClientTls): RequestSlots {
  let slots = slotsOfContext.get(tls);
  if (slots === undefined) {
    slots = new RequestSlots(MAX_REQUESTS_IN_FLIGHT);
    slotsOfContext.set(tls, slots);
  }
  return slots;
}

async function getJsonInSlot(req: GetJsonRequest): Promise<JsonResponse> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, req.timeoutMs);
  const cancel = () => controller.abort();
  req.signal?.addEventListener('abort', cancel, { once: true });
  try {
    if (req.signal?.aborted) throw new RequestCancelledError(requestContext(req.url, req.timeoutMs));
    let url = req.url;
    const origin = url.origin;
    for (let redirects = 0; ; redirects++) {
      const context = requestContext(url, req.timeoutMs);
      const headers = mergeHeaders(req.headers, url.origin === origin ? (req.extraHeaders ?? {}) : {});
      let answer: Answer;
      try {
        answer = await getOnce(url, headers, req, controller.signal);
      } catch (err) {
        if (req.signal?.aborted) throw new RequestCancelledError(context);
        throw timedOut ? new RequestTimeoutError(context) : classify(err, context);
      }
      const { status } = answer;
      if (status === 200) {
        const body = answer.body.toString('utf8').replace(/^\uFEFF/, '');
        try {
          return { body: JSON.parse(body), url, receivedAtMs: Date.now() };
        } catch {
          throw new InvalidResponseError(`the body of ${answer.body.length} bytes is not JSON`, context, status);
        }
      }
      if (status >= 400)
        throw new HttpStatusError(status, answer.body.toString('utf8', 0, 300).replace(CONTROL, ' ').trim(), context);
      if (!REDIRECTS.has(status))
        throw new InvalidResponseError(`HTTP ${status}; only 200 carries the answer`, context, status);
      const max = req.maxRedirects ?? 0;
      if (redirects >= max)
        throw new InvalidResponseError(
          max === 0 ? `HTTP ${status}, a redirect, which this API does not make` : `more than ${max} redirects`,
          context,
          status,
        );
      const location = answer.location;
      if (location === undefined)
        throw new InvalidResponseError(`HTTP ${status}, a redirect without a Location header`, context, status);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new InvalidResponseError(`HTTP ${status}, a redirect to an invalid URL`, context, status);
      }
      // The client certificate and the configured headers go over TLS only.
      if (next.protocol !== 'https:')
        throw new InvalidResponseError(`HTTP ${status}, a redirect away from https`, context, status);
      url = next;
    }
  } finally {
    clearTimeout(timer);
    req.signal?.removeEventListener('abort', cancel);
  }
}

/**
 * Most TLS sessions kept per client context: one per API endpoint polled (a server's health port,
 * its proxy port, the repository), with room for thousands of servers. A cache smaller than the
 * endpoints polled in turn would evict each session before its next use. A session is a few KB.
 */
export const MAX_TLS_SESSIONS = 10_000;

const sessionAgents = new WeakMap<ClientTls, Agent>();

/**
 * The agent of one client context (the secure context built once from the checked files). It keeps
 * no sockets, only the TLS sessions the servers hand out, so that the next poll of a server resumes
 * its session: an abbreviated handshake without the server's certificate chain to verify and convert
 * and without a signature with the client key. A full handshake made every poll cost more than all
 * else of a poll together (bench/pollers.mjs: 8.6 against 3.8 ms of CPU per server and interval),
 * all of it at each tick, when every target is polled at once. A server that does not resume (a
 * restart, an expired ticket, another certificate) gets a full handshake with every check, as before.
 */
function sessionAgent(tls: ClientTls): Agent {
  let agent = sessionAgents.get(tls);
  if (agent === undefined) {
    agent = new Agent({
      // Through the process's proxy (CONNECT: the mutual TLS stays end to end) unless NO_PROXY names the server.
      ...proxyAgentOptions(),
      keepAlive: false,
      secureContext: tls.secureContext,
      rejectUnauthorized: tls.rejectUnauthorized,
      maxCachedSessions: MAX_TLS_SESSIONS,
    });
    sessionAgents.set(tls, agent);
  }
  return agent;
}

interface Answer {
  status: number;
  location: string | undefined;
  body: Buffer;
}

/** One request: the status, Location and body (at most `maxBodyBytes`; error statuses only their start). */
function getOnce(url: URL, headers: Record<string, string>, req: GetJsonRequest, signal: AbortSignal): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const context = requestContext(url, req.timeoutMs);
    const outgoing = request(
      url,
      {
        method: 'GET',
        headers,
        // A fresh connection per poll (polls are seconds apart; a pooled socket would outlive a stop),
        // resuming the TLS session of the previous poll of that server (sessionAgent).
        agent: sessionAgent(req.tls),
        signal,
        ...(req.family ? { family: req.family } : {}),
      },
      (res: IncomingMessage) => {
        const status = res.statusCode ?? 0;
        // An error page or a redirect is read only for its start; a 200 body up to the limit.
        const limit = status === 200 ? req.maxBodyBytes : 4096;
        const declared = Number(res.headers['content-length']);
        if (status === 200 && Number.isFinite(declared) && declared > limit) {
          res.destroy();
          reject(
            new InvalidResponseError(`the body is ${declared} bytes; at most ${limit} are accepted`, context, status),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let bytes = 0;
        let ended = false;
        res.on('data', (chunk: Buffer) => {
          if (bytes > limit) return;
          bytes += chunk.length;
          chunks.push(chunk);
          if (bytes > limit && status === 200) {
            res.destroy();
            reject(new InvalidResponseError(`the body is larger than ${limit} bytes`, context, status));
          }
        });
        res.on('error', reject);
        res.on('end', () => {
          ended = true;
          resolve({ status, location: res.headers.location, body: Buffer.concat(chunks) });
        });
        // Closed before its end (the deadline's abort, the server gone): never left pending.
        res.on('close', () => {
          if (!ended) reject(Object.assign(new Error('the response ended early'), { code: 'ECONNRESET' }));
        });
      },
    );
    outgoing.on('error', reject);
    outgoing.end();
  });
}

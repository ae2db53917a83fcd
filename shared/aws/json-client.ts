/**
 * A lean client for AWS's JSON protocol (1.0: SQS, DynamoDB; 1.1: Secrets Manager, SSM): one SigV4-signed POST per call on
 * node:http(s), with a keep-alive agent, connect and request timeouts, and retries as the AWS SDK's
 * standard mode does them. Why not the SDK: importing @aws-sdk/client-sqs and client-dynamodb costs
 * a Lambda cold start ~90 ms (hundreds of CommonJS files to resolve and compile) for three calls
 * that are each one POST (docs/deployment.md, "AWS clients"). Not global fetch: loading undici costs
 * ~10 ms at its first use.
 *
 * The wire protocol (https://smithy.io/2.0/aws/protocols/aws-json-1_0-protocol.html, and 1.1, which
 * differs only in its content type): POST `/`, `Content-Type: application/x-amz-json-1.0`, `X-Amz-Target: <prefix>.<Operation>`, the input as
 * a JSON body; the answer is the output as JSON, or an error: HTTP ≥ 300 with `__type` (or the
 * `x-amzn-ErrorType` header) naming it and `message` saying what went wrong. SQS is
 * "query-compatible": the SDK sends `x-amzn-query-mode: true` and SQS answers with its older error
 * code in `x-amzn-query-error: <code>;<Sender|Receiver>` (e.g. AWS.SimpleQueueService.NonExistentQueue);
 * both names are kept (AwsServiceError name and code).
 *
 * Retries (@smithy/core's retry module, the SDK's "standard" mode): throttling (HTTP 429 and the
 * SDK's throttling error names) and transient errors (HTTP 500, 502, 503, 504, the SDK's transient
 * names, timeouts, connection errors) are retried; other errors (a 400 such as a validation error,
 * a 501) are not. Up to maxAttempts attempts (default 3), waiting a random time from 0 to
 * min(base × 2^retry, 20 s) between them ("full jitter", base 100 ms). Not done: the SDK's retry
 * quota (a client-wide token bucket that stops retrying when most calls fail).
 *
 * Clock skew (clock-skew.ts, as the SDK): requests are signed at the process clock's corrected time.
 * A refusal for the signing time (InvalidSignatureException "Signature expired", RequestTimeTooSkewed,
 * …) whose `Date` header shows the skew sets the offset, and the call signs again at once with it,
 * without counting an attempt; such a refusal is retryable (`clockSkew`), never a refusal of the
 * request itself: the edge keeps its events and sends them again.
 *
 * Proxy: the agents take the process's proxy (shared/runtime/proxy.ts), or the one given.
 *
 * The output is returned as `unknown`: each operation's caller (sqs.ts, dynamodb.ts) checks the
 * shape it reads, because a response body is outside input.
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ProxyEnv } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { proxyAgentOptions } from '../runtime/proxy.js';
import { isRecord } from '../util/records.js';
import { type AwsClock, awsClock, isClockSkewRefusal } from './clock-skew.js';
import type { CredentialProvider } from './credentials.js';
import { signRequest } from './sigv4.js';

/** The SDK's throttling error names (@smithy/core retry, THROTTLING_ERROR_CODES) and SQS's query code for it. */
const THROTTLING_NAMES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
  'AWS.SimpleQueueService.RequestThrottled',
]);
/** The SDK's transient error names and status codes (TRANSIENT_ERROR_CODES, TRANSIENT_ERROR_STATUS_CODES). */
const TRANSIENT_NAMES = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
const TRANSIENT_STATUS = new Set([500, 502, 503, 504]);
/** Connection errors the SDK retries (NODEJS_TIMEOUT_ERROR_CODES, NODEJS_NETWORK_ERROR_CODES). */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/** The SDK's cap on one retry delay (MAXIMUM_RETRY_DELAY). */
const MAX_RETRY_DELAY_MS = 20_000;

export interface AwsServiceErrorDetails {
  /** Short error name: `ConditionalCheckFailedException`, `QueueDoesNotExist`, `TimeoutError`, `ECONNREFUSED`, `HTTP 502`. */
  name: string;
  /** What AWS said (its `message`), or what went wrong on the way. */
  message: string;
  /** SQS's query-compatible code (`AWS.SimpleQueueService.NonExistentQueue`), or a connection error's errno code. */
  code?: string;
  /** HTTP status; undefined when no answer came. */
  status?: number;
  requestId?: string;
  retryable: boolean;
  /** Whose fault: the request's (it fails the same way again) or the service's (or the network's). */
  fault: 'client' | 'server';
  /** `SQS.SendMessageBatch`. */
  operation: string;
  /** A refusal for the signing time (a skewed clock): retryable, the request itself is fine. */
  clockSkew?: boolean;
  cause?: unknown;
}

/** Every failure of a call: an error answer, a malformed answer, a timeout or a connection error. */
export class AwsServiceError extends Error {
  readonly code: string | undefined;
  readonly status: number | undefined;
  readonly requestId: string | undefined;
  readonly retryable: boolean;
  readonly fault: 'client' | 'server';
  readonly operation: string;
  readonly clockSkew: boolean;

  constructor(details: AwsServiceErrorDetails) {
    super(details.message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = details.name;
    this.code = details.code;
    this.status = details.status;
    this.requestId = details.requestId;
    this.retryable = details.retryable;
    this.fault = details.fault;
    this.operation = details.operation;
    this.clockSkew = details.clockSkew ?? false;
  }
}

/** Where a client sends, as whom, and how patiently: what the SQS and DynamoDB clients take from their callers. */
export interface AwsClientSettings {
  region: string;
  credentials: CredentialProvider;
  /** Where requests go unless a call names its own: an `http(s)://host[:port]` origin. */
  endpoint?: string;
  /** Attempts per call, the first included (default 3, the SDK's). */
  maxAttempts?: number;
  /** Longest wait for a connection (default 5 s). */
  connectTimeoutMs?: number;
  /** Longest wait from sending a request to having its whole answer (default 30 s). */
  requestTimeoutMs?: number;
  /** First retry's largest delay; it doubles per retry (default 100 ms, the SDK's). */
  baseDelayMs?: number;
  /** The clock requests are signed with (default the process's, awsClock). */
  clock?: AwsClock;
  /** The proxy of its agents (default the process's: shared/runtime/proxy.ts). */
  proxyEnv?: ProxyEnv;
}

export interface AwsJsonClientOptions extends AwsClientSettings {
  /** The service's name in messages: `SQS`, `DynamoDB`. */
  serviceName: string;
  /** SigV4 signing name: `sqs`, `dynamodb`. */
  signingName: string;
  /** X-Amz-Target prefix: `AmazonSQS`, `DynamoDB_20120810`. */
  targetPrefix: string;
  /** Send `x-amzn-query-mode: true` and read `x-amzn-query-error` (SQS). */
  queryCompatible?: boolean;
  /** The JSON protocol's version: 1.0 (SQS, DynamoDB, the default) or 1.1 (Secrets Manager, SSM). */
  jsonVersion?: '1.0' | '1.1';
}

interface RawResponse {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
  sentAt: number;
  receivedAt: number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function header(headers: IncomingMessage['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** `com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException` → `ConditionalCheckFailedException` (the SDK's sanitizeErrorCode). */
export function shortErrorName(raw: string): string {
  let name = raw.split(',')[0] ?? raw;
  name = name.split(':')[0] ?? name;
  const hash = name.indexOf('#');
  return hash >= 0 ? name.slice(hash + 1) : name;
}

function errnoCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

export class AwsJsonClient {
  private readonly options: AwsJsonClientOptions;
  private readonly maxAttempts: number;
  private readonly connectTimeoutMs: number;
  private readonly requestTimeoutMs: number;
  private readonly baseDelayMs: number;
  private readonly clock: AwsClock;
  // One keep-alive agent per scheme: a warm Lambda or the edge's forwarder reuses its TLS connections.
  private readonly httpsAgent: HttpsAgent;
  private readonly httpAgent: HttpAgent;

  constructor(options: AwsJsonClientOptions) {
    this.options = options;
    this.clock = options.clock ?? awsClock;
    const proxy = proxyAgentOptions(options.proxyEnv);
    this.httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 50, ...proxy });
    this.httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 50, ...proxy });
    this.maxAttempts = options.maxAttempts ?? 3;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    this.baseDelayMs = options.baseDelayMs ?? 100;
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1)
      throw new RangeError(`maxAttempts must be a positive integer, not ${this.maxAttempts}`);
    if (options.endpoint !== undefined) parseEndpoint(options.endpoint, `${options.serviceName} endpoint`);
  }

  /**
   * Calls `operation` with `input`; resolves to the parsed JSON output (an object, `{}` for an empty
   * body) or rejects with an AwsServiceError after the retries.
   */
  async call(
    operation: string,
    input: object,
    endpoint: string | undefined = this.options.endpoint,
  ): Promise<Record<string, unknown>> {
    const name = `${this.options.serviceName}.${operation}`;
    if (endpoint === undefined) throw new Error(`${name}: no endpoint`);
    const url = parseEndpoint(endpoint, `${this.options.serviceName} endpoint`);
    const body = JSON.stringify(input);
    let resigned = false;
    for (let attempt = 1; ; attempt++) {
      const offset = this.clock.offsetMs;
      try {
        return await this.attempt(operation, name, url, body);
      } catch (err) {
        // The clock was corrected (by this answer or a concurrent call's): signing again at once is
        // what fixes it, not a failed attempt. Once per call: a second refusal waits like any other.
        if (err instanceof AwsServiceError && err.clockSkew && this.clock.offsetMs !== offset && !resigned) {
          resigned = true;
          attempt--;
          continue;
        }
        if (!(err instanceof AwsServiceError) || !err.retryable || attempt >= this.maxAttempts) throw err;
        // Full jitter, as the SDK's standard mode: anything from 0 to the capped exponential step.
        await sleep(Math.floor(Math.random() * Math.min(this.baseDelayMs * 2 ** attempt, MAX_RETRY_DELAY_MS)));
      }
    }
  }

  /** Closes the kept-alive connections (an edge agent stopping, a test ending). */
  destroy(): void {
    this.httpsAgent.destroy();
    this.httpAgent.destroy();
  }

  private async attempt(operation: string, name: string, url: URL, body: string): Promise<Record<string, unknown>> {
    let credentials;
    try {
      credentials = await this.options.credentials();
    } catch (err) {
      // Retryable: credentials that cannot be had now (an unset variable, an SSO session to renew,
      // an instance role not reachable) may be there later; the edge keeps its events meanwhile
      // rather than dead-lettering them.
      throw new AwsServiceError({
        name: 'CredentialsError',
        message: `${name}: ${err instanceof Error ? err.message : String(err)}`,
        retryable: true,
        fault: 'client',
        operation: name,
        cause: err,
      });
    }
    const signedWithOffsetMs = this.clock.offsetMs;
    const headers = signRequest(
      {
        method: 'POST',
        host: url.host,
        path: '/',
        // Content-Length is set before signing and so signed, as the SDK does.
        headers: {
          'content-length': String(Buffer.byteLength(body)),
          'content-type': `application/x-amz-json-${this.options.jsonVersion ?? '1.0'}`,
          'x-amz-target': `${this.options.targetPrefix}.${operation}`,
          ...(this.options.queryCompatible ? { 'x-amzn-query-mode': 'true' } : {}),
        },
        body,
      },
      { service: this.options.signingName, region: this.options.region, credentials, date: this.clock.signingDate() },
    );
    const response = await this.send(url, headers, body, name);
    return this.parse(response, name, signedWithOffsetMs);
  }

  /** One HTTP exchange; network trouble and timeouts reject as retryable AwsServiceErrors. */
  private send(url: URL, headers: Record<string, string>, body: string, operation: string): Promise<RawResponse> {
    const secure = url.protocol === 'https:';
    const request = secure ? httpsRequest : httpRequest;
    const sentAt = Date.now();
    return new Promise<RawResponse>((resolve, reject) => {
      let settled = false;
      const fail = (err: AwsServiceError) => {
        if (settled) return;
        settled = true;
        clearTimeout(requestTimer);
        clearTimeout(connectTimer);
        req.destroy();
        reject(err);
      };
      const timeout = (what: string, ms: number) =>
        fail(
          new AwsServiceError({
            name: 'TimeoutError',
            message: `${what} ${url.host} within ${ms} ms`,
            retryable: true,
            fault: 'server',
            operation,
          }),
        );
      const req = request({
        protocol: url.protocol,
        hostname: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/',
        headers,
        agent: secure ? this.httpsAgent : this.httpAgent,
      });
      const requestTimer = setTimeout(() => timeout('no answer from', this.requestTimeoutMs), this.requestTimeoutMs);
      let connectTimer: NodeJS.Timeout | undefined;
      req.on('socket', (socket) => {
        // A kept-alive socket is already connected; only a new one can hang connecting.
        if (!socket.connecting) return;
        connectTimer = setTimeout(() => timeout('no connection to', this.connectTimeoutMs), this.connectTimeoutMs);
        socket.once(secure ? 'secureConnect' : 'connect', () => clearTimeout(connectTimer));
      });
      req.on('error', (err) => {
        const code = errnoCode(err);
        fail(
          new AwsServiceError({
            name: code ?? err.name,
            message: `${operation} could not reach ${url.host}: ${err.message}`,
            ...(code ? { code } : {}),
            retryable: code !== undefined && NETWORK_CODES.has(code),
            fault: 'server',
            operation,
            cause: err,
          }),
        );
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err) =>
          fail(
            new AwsServiceError({
              name: errnoCode(err) ?? 'ECONNRESET',
              message: `${operation}: the answer from ${url.host} broke off: ${err.message}`,
              retryable: true,
              fault: 'server',
              operation,
              cause: err,
            }),
          ),
        );
        res.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(requestTimer);
          clearTimeout(connectTimer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
            sentAt,
            receivedAt: Date.now(),
          });
        });
      });
      req.end(body);
    });
  }

  /** The output of a 2xx answer, or the AwsServiceError of any other. */
  private parse(response: RawResponse, operation: string, signedWithOffsetMs: number): Record<string, unknown> {
    const requestId = header(response.headers, 'x-amzn-requestid') ?? header(response.headers, 'x-amz-request-id');
    const common = { operation, status: response.status, ...(requestId ? { requestId } : {}) };
    let data: unknown = {};
    let parseError: string | undefined;
    if (response.body.trim() !== '') {
      try {
        data = JSON.parse(response.body);
      } catch (err) {
        parseError = err instanceof Error ? err.message : String(err);
      }
    }
    if (response.status >= 200 && response.status < 300) {
      if (parseError !== undefined || !isRecord(data)) {
        throw new AwsServiceError({
          ...common,
          name: 'MalformedResponse',
          message: `${operation} answered HTTP ${response.status} with a body that is not a JSON object (${parseError ?? `a JSON ${Array.isArray(data) ? 'array' : typeof data}`}): ${snippet(response.body)}`,
          retryable: false,
          fault: 'server',
        });
      }
      return data;
    }
    const fields = isRecord(data) ? data : {};
    const text = (key: string) => (typeof fields[key] === 'string' ? fields[key] : undefined);
    const queryError = this.options.queryCompatible ? header(response.headers, 'x-amzn-query-error') : undefined;
    const [queryCode, queryFault] = queryError ? queryError.split(';') : [];
    const rawType =
      text('__type') ?? header(response.headers, 'x-amzn-errortype') ?? text('code') ?? text('Code') ?? queryCode;
    const name = rawType ? shortErrorName(rawType) : `HTTP ${response.status}`;
    const message =
      text('message') ??
      text('Message') ??
      (parseError !== undefined
        ? `HTTP ${response.status}: ${snippet(response.body)}`
        : `HTTP ${response.status} with no error message`);
    const throttling =
      response.status === 429 ||
      THROTTLING_NAMES.has(name) ||
      (queryCode !== undefined && THROTTLING_NAMES.has(queryCode));
    const transient = TRANSIENT_STATUS.has(response.status) || TRANSIENT_NAMES.has(name);
    const fault =
      queryFault === 'Sender' ? 'client' : queryFault === 'Receiver' || response.status >= 500 ? 'server' : 'client';
    const sample = {
      date: header(response.headers, 'date'),
      age: header(response.headers, 'age'),
      sentAt: response.sentAt,
      receivedAt: response.receivedAt,
      signedWithOffsetMs,
    };
    const clockSkew = isClockSkewRefusal(name, message, this.clock.skewOf(sample));
    if (clockSkew) this.clock.correct(sample);
    throw new AwsServiceError({
      ...common,
      name,
      message,
      ...(queryCode ? { code: queryCode } : {}),
      retryable: throttling || transient || clockSkew,
      fault,
      ...(clockSkew ? { clockSkew } : {}),
    });
  }
}

function snippet(body: string): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  return flat === '' ? '(empty)' : flat.length > 200 ? `${flat.slice(0, 200)}…` : flat;
}

/**
 * A service's endpoint for `region`, as the AWS SDK resolves it: the configured one, else
 * AWS_ENDPOINT_URL_<SERVICE> (e.g. `DYNAMODB`, `SECRETS_MANAGER`, `SSM`), else AWS_ENDPOINT_URL (both
 * ignored when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else `https://<host>.<region>.amazonaws.com`
 * (`.amazonaws.com.cn` in China regions). Not done: the SDK's FIPS and dual-stack variants.
 */
export function serviceEndpoint(
  service: { envName: string; host: string; name: string },
  region: string,
  configured: string | undefined,
  env: NodeJS.ProcessEnv,
): string {
  if (configured) return configured;
  if (env['AWS_IGNORE_CONFIGURED_ENDPOINT_URLS']?.toLowerCase() !== 'true') {
    const fromEnv = env[`AWS_ENDPOINT_URL_${service.envName}`] || env['AWS_ENDPOINT_URL'];
    if (fromEnv) return fromEnv;
  }
  if (region === '') throw new Error(`no AWS region for ${service.name} (AWS_REGION is not set)`);
  return `https://${service.host}.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;
}

/** An `http(s)://` URL's origin as a URL; anything else is a configuration error naming `what`. */
export function parseEndpoint(endpoint: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new Error(`${what} "${endpoint}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new Error(`${what} "${endpoint}" must be an http:// or https:// URL`);
  return new URL(url.origin);
}

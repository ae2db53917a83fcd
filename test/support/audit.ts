/**
 * Fixtures for the audit API: valid envelopes from a factory, and the API behind both front doors
 * (the Lambda handler called with API Gateway events, and the local gateway over real HTTP).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { expect } from 'vitest';
import { localContext } from '../../functions/local/gateway/event.js';
import { LocalGateway } from '../../functions/local/gateway/gateway.js';
import { validateEnvelope } from '../../shared/audit/envelope.js';
import { type AuditHandler, makeAuditHandlers } from '../../shared/audit/handler.js';
import { parseConfigText } from '../../shared/config/load.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';
import { LocalIdempotencyStore } from '../../shared/idempotency/local.js';
import type { Log } from '../../shared/logging/log.js';
import { createLogger, type Logger } from '../../shared/logging/logger.js';
import type { AuditQueuedEvent, QueuedEvent } from '../../shared/queue/events.js';
import { LocalEventQueue } from '../../shared/queue/local/index.js';
import { PointClock } from '../../shared/queue/point-clock.js';
import type { EventQueue } from '../../shared/queue/port.js';
import { MemoryRateLimiter } from '../../shared/ratelimit/memory.js';

export const CLIENT_VERSION = '0.3.2';

/** A `payload.context` with every member the rules name (docs/audit-api.md), each valid. */
export function payloadContext(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    appId: randomUUID(),
    appName: 'Sales Analysis 2026',
    sheetId: 'a1b2c3',
    sheetName: 'Overview',
    user: 'UserDirectory=LAB; UserId=goran',
    userAgent:
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    ...over,
  };
}

/**
 * A valid envelope of type navigation.sheet.loaded; `over` replaces top-level members. Its
 * timestamp is a second before the call: a fixed date would fall out of a store's retention (the
 * tsdb's default is 10 days) as the calendar moves on, and the tests writing there would fail.
 */
export function envelope(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    schemaVersion: 1,
    eventId: randomUUID(),
    timestamp: new Date(Date.now() - 1000).toISOString(),
    type: 'navigation.sheet.loaded',
    correlationId: '42',
    source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: CLIENT_VERSION },
    payload: { context: payloadContext(), event: { sheetTitle: 'Overview' } },
    ...over,
  };
}

/** An audit event as the audit API queues it, from a valid envelope (`over` replaces envelope members). */
export function auditQueued(over: Record<string, unknown> = {}): AuditQueuedEvent {
  const checked = validateEnvelope(envelope(over));
  if (!checked.ok) throw new Error(`fixture envelope is invalid: ${JSON.stringify(checked.errors)}`);
  return {
    kind: 'audit',
    id: checked.envelope.eventId.toLowerCase(),
    receivedAt: new Date().toISOString(),
    event: checked.envelope,
    meta: { clientIp: '127.0.0.1', clientVersion: CLIENT_VERSION },
  };
}

/**
 * A valid `payload.event` for each type with payload rules, with every member the rules name
 * (`full`), or with only the required ones (`minimal`: each of these types has some).
 */
export function typedEvents(): Record<string, { full: Record<string, unknown>; minimal: Record<string, unknown> }> {
  const txn = randomUUID();
  return {
    'selection.state.changed': {
      full: { selectionTxnId: txn, details: [{ field: 'Region', values: ['EU'] }] },
      minimal: { selectionTxnId: txn, details: [] },
    },
    'app.model.validated': {
      full: { captureScheduled: true, selectionTxnId: txn, dataStateId: 17 },
      minimal: { selectionTxnId: txn },
    },
    'screenshot.url.received': {
      full: {
        screenshotUrl: 'https://analytics.example.com/printing/export/a1b2c3.png?serverNodeId=n1',
        selectionTxnId: txn,
        objectId: 'kPjmXq',
        crop: {
          width: 640.5,
          height: 480,
          top: 0,
          left: 12.25,
          scrollTop: 0,
          scrollAreaOffsetY: 3,
          renderingOverflow: 0,
        },
      },
      minimal: { screenshotUrl: 'https://analytics.example.com/printing/export/a1b2c3.png', selectionTxnId: txn },
    },
    'event.unsupported.visualization': {
      full: {
        vizType: 'sn-sankey-chart',
        selectionTxnId: txn,
        objectId: 'kPjmXq',
        title: 'Flows',
        trigger: 'selection',
        dataStateId: 'ds-17',
      },
      minimal: { vizType: 'sn-sankey-chart', selectionTxnId: txn },
    },
    'object.view.duration': {
      full: {
        objectId: 'kPjmXq',
        selectionTxnId: txn,
        enterSelectionTxnId: 'txn-7',
        leaveSelectionTxnId: null,
        enteredAt: '2026-11-22T10:15:02.000Z',
        visible: true,
        dataStateId: 1732270502000,
        duration: 20_123,
        leftAt: '2026-11-22T10:15:22.123Z',
      },
      minimal: { objectId: 'kPjmXq', duration: 20.5, leftAt: '2026-11-22T10:15:22Z' },
    },
  };
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  /** Parsed body (undefined when empty). */
  json: Record<string, unknown> | undefined;
}

export interface ApiRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string as is. */
  body?: unknown;
  /** Client address; the HTTP door binds to it (any 127.0.0.0/8 address). */
  sourceIp?: string;
}

/** Captured log lines (JSON objects). */
export interface LogCapture {
  logger: Logger;
  lines: () => Record<string, unknown>[];
}

export async function captureLog(level: 'debug' | 'info' = 'debug'): Promise<LogCapture> {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const { logger } = await createLogger({ level, destination: stream, pretty: false });
  return {
    logger,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

export interface AuditApi {
  door: 'lambda' | 'http';
  call(req: ApiRequest): Promise<ApiResponse>;
  /** Events the queue delivered to its consumer. */
  delivered: QueuedEvent[];
  log: LogCapture;
  config: SvcConfig;
  close(): Promise<void>;
}

export interface ApiOptions {
  /** YAML lines under `Svc.auditEvents:` (indented by 4). */
  yaml?: string[];
  /** Replace the queue (e.g. one that fails). */
  queue?: EventQueue;
}

function configFor(lines: string[]): SvcConfig {
  const text = ['Svc:', '  auditEvents:', '    enable: true', ...lines].join('\n');
  return parseConfigText(`${text}\n`, 'test.yaml', {}).config;
}

/** The API Gateway v2 event of `req` with `body` (the Lambda door's input; handler tests build theirs here too). */
export function apiEvent(req: ApiRequest, body: string | undefined): APIGatewayProxyEventV2 {
  const path = req.path ?? '/api/v1/audit-event';
  const headers = Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers,
    requestContext: {
      accountId: '123456789012',
      apiId: 'api',
      domainName: 'api.example.com',
      domainPrefix: 'api',
      http: {
        method: req.method ?? 'POST',
        path,
        protocol: 'HTTP/1.1',
        sourceIp: req.sourceIp ?? '127.0.0.1',
        userAgent: 'test',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    ...(body === undefined ? {} : { body }),
    isBase64Encoded: false,
  };
}

function bodyText(req: ApiRequest): string | undefined {
  if (req.body === undefined) return undefined;
  return typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
}

function defaultHeaders(req: ApiRequest): Record<string, string> {
  return req.body === undefined ? {} : { 'content-type': 'application/json' };
}

export function toApiResponse(status: number, headers: Record<string, string>, text: string): ApiResponse {
  return { status, headers, text, json: text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>) };
}

async function callLambda(handler: AuditHandler, req: ApiRequest): Promise<ApiResponse> {
  const body = bodyText(req);
  // A fresh context per call, as Lambda gives: one made once runs out of time 30 s later, and middy answers 500.
  const result = await handler(
    apiEvent({ ...req, headers: { ...defaultHeaders(req), ...req.headers } }, body),
    localContext('svc-audit-test', randomUUID()),
  );
  const headers = Object.fromEntries(
    Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
  );
  return toApiResponse(result.statusCode ?? 200, headers, result.body ?? '');
}

function callHttp(port: number, req: ApiRequest): Promise<ApiResponse> {
  const body = bodyText(req);
  return new Promise((resolve, reject) => {
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: req.method ?? 'POST',
        path: req.path ?? '/api/v1/audit-event',
        headers: { ...defaultHeaders(req), ...req.headers },
        localAddress: req.sourceIp ?? '127.0.0.1',
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const headers: Record<string, string> = {};
          for (const [k, v] of Object.entries(res.headers))
            if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
          resolve(toApiResponse(res.statusCode ?? 0, headers, text));
        });
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

export interface GatewayApi extends AuditApi {
  door: 'http';
  gateway: LocalGateway;
  port: number;
}

/** The audit API with a memory queue that records deliveries, behind the chosen door. */
export async function startAuditApi(door: 'lambda' | 'http', options: ApiOptions = {}): Promise<AuditApi> {
  return door === 'http' ? startGatewayApi(options) : startApi(options, 'lambda');
}

/** The audit API behind the local gateway, which the caller can reach over raw sockets too. */
export function startGatewayApi(options: ApiOptions = {}): Promise<GatewayApi> {
  return startApi(options, 'http');
}

/**
 * The real durable queue in a fresh directory, started; its one consumer group runs the real writer
 * handler over a destination that records what it is given (`delivered`).
 */
export async function recordingQueue(
  log: Log,
  capacity: number,
): Promise<{ queue: LocalEventQueue; delivered: QueuedEvent[]; directory: string }> {
  const delivered: QueuedEvent[] = [];
  const directory = mkdtempSync(join(tmpdir(), 'svc-queue-'));
  const queue = new LocalEventQueue({
    directory,
    capacity,
    maxReceiveCount: 3,
    log,
    groups: [
      {
        name: 'recorder',
        batchSize: 100,
        batchWindowMs: 0,
        handler: makeWriterHandler({
          destination: {
            name: 'recorder',
            takes: () => true,
            write: (events) => {
              delivered.push(...events);
              return Promise.resolve(new Set<string>());
            },
          },
          claimCheck: null,
          log,
        }),
      },
    ],
  });
  await queue.start();
  return { queue, delivered, directory };
}

async function startApi(options: ApiOptions, door: 'lambda'): Promise<AuditApi>;
async function startApi(options: ApiOptions, door: 'http'): Promise<GatewayApi>;
async function startApi(options: ApiOptions, door: 'lambda' | 'http'): Promise<AuditApi | GatewayApi> {
  const config = configFor(options.yaml ?? []);
  const settings = config.auditEvents;
  const log = await captureLog();
  const { queue: memory, delivered, directory } = await recordingQueue(log.logger, settings.queue.capacity);
  // The real local idempotency store, in the queue's directory as in `svc local`.
  const idempotency = settings.idempotency.enable
    ? new LocalIdempotencyStore({
        directory,
        windowSeconds: settings.idempotency.windowSeconds,
        maxEntries: settings.idempotency.maxEntries,
        log: log.logger,
      })
    : null;
  await idempotency?.start();
  const handlers = makeAuditHandlers({
    settings,
    rateLimiter: settings.rateLimit.enable ? new MemoryRateLimiter({ limit: settings.rateLimit.maxPerMinute }) : null,
    idempotency,
    queue: options.queue ?? memory,
    clock: new PointClock(),
    log: log.logger,
  });
  const stopStores = async () => {
    await idempotency?.stop();
    await memory.stop();
  };
  if (door === 'lambda') {
    return { door, call: (req) => callLambda(handlers.handler, req), delivered, log, config, close: stopStores };
  }
  const gateway = new LocalGateway({
    name: 'audit API',
    host: '127.0.0.1',
    port: 0,
    ...handlers,
    log: log.logger,
    limits: settings,
  });
  await gateway.start();
  const port = gateway.address.port;
  return {
    door,
    gateway,
    port,
    call: (req) => callHttp(port, req),
    delivered,
    log,
    config,
    close: async () => {
      await gateway.stop();
      await stopStores();
    },
  };
}

/** Asserts the ingestion response shape of an error and returns its errors' messages. */
export function expectError(res: ApiResponse, status: number, reason: string, outcome = 'dropped'): string[] {
  expect(res.status, res.text).toBe(status);
  expect(res.json).toMatchObject({ status: 'error', outcome, reason });
  expect(Date.parse(String(res.json?.['receivedAt']))).not.toBeNaN();
  expect(res.text).not.toMatch(/\bat .*:\d+:\d+|\/work\/|node_modules|Error:/);
  const details = res.json?.['details'] as { errors?: { message: string }[] } | undefined;
  return (details?.errors ?? []).map((e) => e.message);
}

/**
 * API Gateway's side of the local gateway: a Node HTTP request becomes the event API Gateway's HTTP
 * API (payload format 2.0) would send for it, the invocation gets a Lambda context, and the
 * handler's result becomes the HTTP answer. Nothing here refuses a request: that is the policing's
 * (policing.ts).
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';

/** A Lambda handler of API Gateway HTTP API events, as the gateway invokes it. */
export type HttpApiHandler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;

/** The time a local invocation has, as a Lambda's timeout (the handler answers 500 just before it). */
export const LOCAL_INVOCATION_MS = 30_000;

const unsupported = (): never => {
  throw new Error('callback-style completion is not supported by the local gateway');
};

/**
 * A Lambda context for local invocations; only what handlers read is meaningful. A class, so a
 * request costs one object (its methods live on the prototype), not an object and three closures.
 */
class LocalContext implements Context {
  callbackWaitsForEmptyEventLoop = false;
  readonly functionVersion = '$LATEST';
  readonly invokedFunctionArn: string;
  readonly memoryLimitInMB = '0';
  readonly logGroupName = 'local';
  readonly logStreamName = 'local';
  private readonly deadline = Date.now() + LOCAL_INVOCATION_MS;
  constructor(
    readonly functionName: string,
    readonly awsRequestId: string,
  ) {
    this.invokedFunctionArn = `arn:aws:lambda:local:000000000000:function:${functionName}`;
  }
  getRemainingTimeInMillis(): number {
    return Math.max(0, this.deadline - Date.now());
  }
  done = unsupported;
  fail = unsupported;
  succeed = unsupported;
}

/** The context of one local invocation, its deadline `LOCAL_INVOCATION_MS` from now. */
export function localContext(functionName: string, requestId: string): Context {
  return new LocalContext(functionName, requestId);
}

/** A request target the URL parser would leave as it is: a path of plain characters, no query. */
const PLAIN_PATH = /^\/(?!\/)[\w\-/]*$/;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const twoDigits = (value: number): string => (value < 10 ? `0${value}` : String(value));
let timeSecond = NaN;
let timeText = '';

/** API Gateway's `requestContext.time` ("24/Nov/2026:19:03:58 +0000"): made once per second, not per request. */
export function apiGatewayTime(epochMs: number): string {
  const second = Math.floor(epochMs / 1000);
  if (second !== timeSecond) {
    const date = new Date(second * 1000);
    timeText = `${twoDigits(date.getUTCDate())}/${MONTHS[date.getUTCMonth()] ?? ''}/${date.getUTCFullYear()}:${twoDigits(date.getUTCHours())}:${twoDigits(date.getUTCMinutes())}:${twoDigits(date.getUTCSeconds())} +0000`;
    timeSecond = second;
  }
  return timeText;
}

/**
 * The request's headers as API Gateway (payload 2.0) gives them: names in lower case, a repeated
 * header's values joined by commas (Node would join most with ", " and keep only the first of
 * some), and the Cookie headers not among them but split into `cookies`. From `rawHeaders`, the
 * headers as they arrived. The object has no prototype, so a header named like an Object.prototype
 * member ("constructor", "__proto__") is a header like any other.
 */
function headersOf(raw: readonly string[]): { headers: Record<string, string>; cookies: string[] | undefined } {
  const headers = Object.create(null) as Record<string, string>;
  let cookies: string[] | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] ?? '').toLowerCase();
    const value = raw[i + 1] ?? '';
    if (name === 'cookie') {
      for (const part of value.split(';')) {
        const cookie = part.trim();
        if (cookie !== '') (cookies ??= []).push(cookie);
      }
      continue;
    }
    const before = headers[name];
    headers[name] = before === undefined ? value : `${before},${value}`;
  }
  return { headers, cookies };
}

/** The first label of the host ("api" of "api.example.com"), as API Gateway's `domainPrefix`. */
function domainPrefixOf(host: string): string {
  const dot = host.indexOf('.');
  return dot < 0 ? host : host.slice(0, dot);
}

/**
 * The API Gateway HTTP API event (payload format 2.0) for a request, as API Gateway would send it
 * (https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-develop-integrations-lambda.html).
 * Every event has the same members in the same order (`cookies`, `queryStringParameters` and
 * `body` are undefined when API Gateway leaves them out), so the handler's code sees one shape.
 * The body is UTF-8 text (`isBase64Encoded` false), as the gateway always gave it.
 */
export function toHttpApiEvent(
  req: IncomingMessage,
  body: Buffer,
  requestId: string = randomUUID(),
  epochMs: number = Date.now(),
): APIGatewayProxyEventV2 {
  const target = req.url ?? '/';
  let rawPath: string;
  let rawQueryString = '';
  let query: Record<string, string> | undefined;
  if (PLAIN_PATH.test(target)) {
    rawPath = target;
  } else {
    const url = new URL(target, 'http://local');
    rawPath = url.pathname;
    rawQueryString = url.search.slice(1);
    for (const [name, value] of url.searchParams) {
      query ??= Object.create(null) as Record<string, string>;
      const before = query[name];
      query[name] = before === undefined ? value : `${before},${value}`;
    }
  }
  const { headers, cookies } = headersOf(req.rawHeaders);
  const host = headers['host'] ?? 'localhost';
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    cookies,
    headers,
    queryStringParameters: query,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: host,
      domainPrefix: domainPrefixOf(host),
      http: {
        method: req.method ?? 'GET',
        path: rawPath,
        protocol: `HTTP/${req.httpVersion}`,
        sourceIp: req.socket.remoteAddress ?? '',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: apiGatewayTime(epochMs),
      timeEpoch: epochMs,
    },
    body: body.length > 0 ? body.toString('utf8') : undefined,
    isBase64Encoded: false,
  };
}

/** Lower-case header names, kept: the answers use a handful of names, over and over. */
const lowerNames = new Map<string, string>();
function lowerName(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) {
    lower = name.toLowerCase();
    if (lowerNames.size < 256) lowerNames.set(name, lower);
  }
  return lower;
}

/** The result's headers as Node writes them: names in lower case, each value as text. */
function headersOfResult(result: APIGatewayProxyStructuredResultV2): Record<string, string> {
  const out = Object.create(null) as Record<string, string>;
  const headers = result.headers;
  if (headers) for (const name of Object.keys(headers)) out[lowerName(name)] = String(headers[name]);
  return out;
}

/**
 * Writes a handler's result as the HTTP answer, with one writeHead + end; `close` ends the
 * connection once it is written (Node closes it after a `connection: close` answer).
 */
export function writeResult(res: ServerResponse, result: APIGatewayProxyStructuredResultV2, close: boolean): void {
  const status = result.statusCode ?? 200;
  const body = result.body ?? '';
  const headers = headersOfResult(result);
  // A length rather than chunks; a 204 or 304 has no body and must not announce one (RFC 9110 §8.6).
  if (status !== 204 && status !== 304) headers['content-length'] = String(Buffer.byteLength(body));
  if (close) headers['connection'] = 'close';
  res.writeHead(status, headers);
  res.end(body);
}

/** An answer as the bytes to write straight to the socket, for the moments Node has no ServerResponse to give (clientError). */
export function rawAnswer(result: APIGatewayProxyStructuredResultV2): string {
  const status = result.statusCode ?? 500;
  const body = result.body ?? '';
  const headers = {
    ...headersOfResult(result),
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * AWS Signature Version 4 for the lean JSON-protocol client (json-client.ts), on node:crypto: the
 * canonical request, the string to sign, the signing key and the Authorization header.
 * https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html
 *
 * Why not the SDK's signer (@smithy/signature-v4): importing it alone costs ~39 ms of a Lambda cold
 * start; this file is a few dozen lines. test/shared/aws/sigv4.test.ts holds it to the SDK's signer
 * (same request, credentials and date → the same Authorization header).
 *
 * What is signed is what the SDK's clients sign for SQS and DynamoDB: every header of the request
 * except the ones the SDK never signs (user-agent, connection, …), with `host`, `x-amz-date`,
 * `x-amz-content-sha256` and, when the credentials have a session token, `x-amz-security-token`.
 * Only S3 needs `x-amz-content-sha256`, but the SDK's signer adds it for every service (its
 * applyChecksum defaults to true and neither the SQS nor the DynamoDB client turns it off), so the
 * requests stay what the services (and emulators, proxies, VPC endpoints) see from the SDK today.
 */
import { createHash, createHmac } from 'node:crypto';

/** The credentials a request is signed with. */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  /** When temporary credentials stop working (a provider refreshes them before). */
  expiration?: Date;
}

export interface SignableRequest {
  method: string;
  /** Host header value: the hostname, and `:port` when it is not the scheme's default. */
  host: string;
  /** The absolute path as it goes on the wire, e.g. `/` (the canonical path encodes it once more, as AWS wants for every service but S3). */
  path: string;
  /** Query parameters (decoded); each name and value is URI-encoded for the canonical query. */
  query?: Readonly<Record<string, string>>;
  /** Headers to sign and send, lower- or mixed-case names. */
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
}

export interface SigningScope {
  /** Signing name: `sqs`, `dynamodb`. */
  service: string;
  region: string;
  credentials: AwsCredentials;
  /** The signing time (default now). */
  date?: Date;
}

/** Headers the SDK never signs (proxies and agents may change them), from @smithy/signature-v4's constants. */
const UNSIGNABLE_HEADERS = new Set([
  'authorization',
  'cache-control',
  'connection',
  'expect',
  'from',
  'keep-alive',
  'max-forwards',
  'pragma',
  'referer',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'user-agent',
  'x-amzn-trace-id',
]);

const sha256Hex = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding as SigV4 wants it: encodeURIComponent plus `!'()*`. */
function uriEncode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** The path normalized (no empty, `.` or `..` segments) and URI-encoded (again): SigV4 for every service but S3. */
function canonicalPath(path: string): string {
  const segments: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment);
  }
  const normalized = `${path.startsWith('/') ? '/' : ''}${segments.join('/')}${segments.length > 0 && path.endsWith('/') ? '/' : ''}`;
  return uriEncode(normalized).replace(/%2F/g, '/');
}

/** `20261122T101523Z` and `20261122` of a date. */
function amzDates(date: Date): { long: string; short: string } {
  const long = date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
  return { long, short: long.slice(0, 8) };
}

/** Signing keys by date, region, service and secret: derived once a day per client (four HMACs each). */
const keyCache = new Map<string, Buffer>();

function signingKey(secretAccessKey: string, shortDate: string, region: string, service: string): Buffer {
  const cacheKey = `${shortDate}/${region}/${service}/${sha256Hex(secretAccessKey)}`;
  let key = keyCache.get(cacheKey);
  if (key === undefined) {
    key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, shortDate), region), service), 'aws4_request');
    // A long-running edge agent sees a new date every day and new credentials every hour or so.
    if (keyCache.size > 50) keyCache.clear();
    keyCache.set(cacheKey, key);
  }
  return key;
}

/**
 * The request's headers with `host`, `x-amz-date`, `x-amz-content-sha256`, `x-amz-security-token`
 * (when there is a session token) and `authorization` added (names lower-case). The body is not changed.
 */
export function signRequest(request: SignableRequest, scope: SigningScope): Record<string, string> {
  const { long, short } = amzDates(scope.date ?? new Date());
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers['host'] = request.host;
  headers['x-amz-date'] = long;
  const payloadHash = sha256Hex(request.body);
  headers['x-amz-content-sha256'] ??= payloadHash;
  if (scope.credentials.sessionToken) headers['x-amz-security-token'] = scope.credentials.sessionToken;

  const signed = Object.keys(headers)
    .filter((name) => !UNSIGNABLE_HEADERS.has(name) && !/^(proxy|sec)-/.test(name))
    .sort();
  const canonicalHeaders = signed
    .map(
      (name) =>
        `${name}:${(headers[name] ?? '')
          .replace(/[\r\n]/g, ' ')
          .replace(/[ \t]+/g, ' ')
          .replace(/^ | $/g, '')}\n`,
    )
    .join('');
  const signedHeaders = signed.join(';');
  const canonicalQuery = Object.entries(request.query ?? {})
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalRequest = [
    request.method.toUpperCase(),
    canonicalPath(request.path),
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join('\n');

  const credentialScope = `${short}/${scope.region}/${scope.service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', long, credentialScope, sha256Hex(canonicalRequest)].join('\n');
  const signature = createHmac(
    'sha256',
    signingKey(scope.credentials.secretAccessKey, short, scope.region, scope.service),
  )
    .update(stringToSign)
    .digest('hex');
  headers['authorization'] =
    `AWS4-HMAC-SHA256 Credential=${scope.credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
  return headers;
}

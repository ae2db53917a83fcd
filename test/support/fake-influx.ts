/**
 * A local stand-in for InfluxDB 2.x and 3.x (and the write endpoint of 1.x) for tests: no 2.x or 3.x
 * server can be installed here (Debian ships only influxd 1.6; the 2.x/3.x builds are downloads
 * from outside the reachable registries), so this server answers their HTTP APIs the way the
 * real ones do, as far as Svc uses them:
 *
 *   version 1: POST /write?db=&precision=ns (Basic auth when `username` is set), GET /ping
 *   version 2: POST /api/v2/write?org=&bucket=&precision=ns, GET /api/v2/orgs?org=,
 *              GET /api/v2/buckets?name=&orgID=, POST /api/v2/buckets (Authorization: Token)
 *   version 3: POST /api/v3/write_lp?db=&precision=nanosecond, POST /api/v3/configure/database
 *              (Authorization: Bearer, when `token` is set)
 *
 * Every request is recorded (method, path, query, headers, body; gzip bodies are inflated). A write
 * is all or nothing here: 204 and every line stored, or an error and nothing stored.
 * Failures on demand: `failNext(n, status)` answers the next n requests with that status;
 * `poison(text)` fails every write whose body contains `text` (exercises the chunk ladder);
 * `hangNext(n)` never answers the next n requests (timeouts); `refuseConnections()` closes the
 * listener and every open connection, `acceptConnections()` listens on the same port again.
 * With `tls` (a certificate and key a test made) it serves https, as InfluxDB Cloud and most
 * production installs do.
 *
 *   const fake = await startFakeInflux({ version: 2, token: 't', org: 'acme' });
 *   ... fake.writes(), fake.lines(), fake.buckets ...
 *   await fake.close();
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { LOOPBACK } from './ports.js';

export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  /** Raw query string without `?` (exact order and encoding as sent). */
  rawQuery: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** Body as text (inflated when it was gzip-encoded). */
  body: string;
  /** The status answered; undefined for a request left hanging. */
  status: number | undefined;
}

export interface FakeInfluxOptions {
  version: 1 | 2 | 3;
  /** v2/v3: the accepted token; v3 without one accepts requests without Authorization. */
  token?: string;
  /** v1: Basic auth credentials; without them any request is accepted. */
  username?: string;
  password?: string;
  /** v2: the organisation (name) that exists. Default `svc-org`. */
  org?: string;
  /** v2: buckets that exist from the start; v1/v3: databases that exist from the start (v1 without it: any). */
  existing?: string[];
  /** Serve https with this certificate and key (PEM text). */
  tls?: { cert: string; key: string };
}

export interface FakeBucket {
  id: string;
  orgID: string;
  name: string;
  description: string;
  retentionRules: unknown;
}

export interface FakeDatabase {
  name: string;
  retentionPeriod: string | undefined;
}

export interface FakeFailure {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface FakeInflux {
  readonly version: 1 | 2 | 3;
  readonly host: typeof LOOPBACK;
  readonly port: number;
  /** `http://127.0.0.1:<port>`, or `https://…` with `tls` */
  readonly url: string;
  readonly orgId: string;
  /** Every request, in arrival order. */
  readonly requests: RecordedRequest[];
  readonly buckets: Map<string, FakeBucket>;
  readonly databases: Map<string, FakeDatabase>;
  /** Requests to the write endpoint of the version. */
  writes(): RecordedRequest[];
  /** Lines stored by successful writes, in order. */
  lines(): string[];
  /** The next `count` requests (of any kind) are answered with `failure`. */
  failNext(count: number, failure: FakeFailure | number): void;
  /** Every write whose body contains `text` is answered with `failure` (default 400). */
  poison(text: string, failure?: FakeFailure | number): void;
  /** The next `count` requests get no answer until the server is closed or connections are refused. */
  hangNext(count: number): void;
  /** Clears the recorded requests and lines, failures, poisons and hangs (not buckets/databases). */
  reset(): void;
  /** Stops listening and destroys every open connection: new requests get ECONNREFUSED. */
  refuseConnections(): Promise<void>;
  /** Listens on the same port again. */
  acceptConnections(): Promise<void>;
  close(): Promise<void>;
}

function writePath(version: 1 | 2 | 3): string {
  return version === 1 ? '/write' : version === 2 ? '/api/v2/write' : '/api/v3/write_lp';
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: LOOPBACK, port }, () => {
      server.off('error', reject);
      const address = server.address();
      if (address === null || typeof address === 'string') reject(new Error('fake influx: no port'));
      else resolve(address.port);
    });
  });
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function asFailure(failure: FakeFailure | number): FakeFailure {
  return typeof failure === 'number' ? { status: failure } : failure;
}

export async function startFakeInflux(options: FakeInfluxOptions): Promise<FakeInflux> {
  const version = options.version;
  const orgName = options.org ?? 'svc-org';
  const orgId = '0a1b2c3d4e5f6071';
  const requests: RecordedRequest[] = [];
  const stored: string[] = [];
  const buckets = new Map<string, FakeBucket>();
  const databases = new Map<string, FakeDatabase>();
  let nextId = 1;
  for (const name of options.existing ?? []) {
    if (version === 2)
      buckets.set(name, { id: `b${nextId++}`, orgID: orgId, name, description: '', retentionRules: [] });
    else databases.set(name, { name, retentionPeriod: undefined });
  }
  let failures: FakeFailure[] = [];
  let poisons: { text: string; failure: FakeFailure }[] = [];
  let hangs = 0;
  const hanging = new Set<ServerResponse>();
  const sockets = new Set<Socket>();

  const send = (
    res: ServerResponse,
    record: RecordedRequest,
    status: number,
    body?: unknown,
    headers: Record<string, string> = {},
  ): void => {
    record.status = status;
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, {
      ...(text !== '' ? { 'content-type': 'application/json; charset=utf-8' } : {}),
      ...(version === 1 ? { 'x-influxdb-version': '1.6.7-fake' } : {}),
      ...headers,
    });
    res.end(text);
  };

  const authorised = (req: IncomingMessage): boolean => {
    const auth = req.headers.authorization;
    if (version === 1) {
      if (options.username === undefined) return true;
      const expected = `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`;
      return auth === expected;
    }
    if (version === 2) return auth === `Token ${options.token ?? ''}`;
    if (options.token === undefined) return true;
    return auth === `Bearer ${options.token}`;
  };

  const unauthorised = (res: ServerResponse, record: RecordedRequest): void => {
    if (version === 1) send(res, record, 401, { error: 'authorization failed' });
    else if (version === 2) send(res, record, 401, { code: 'unauthorized', message: 'unauthorized access' });
    else send(res, record, 401, { error: 'the request was not authenticated' });
  };

  const handleWrite = (res: ServerResponse, record: RecordedRequest): void => {
    const q = record.query;
    if (version === 1) {
      const db = q.db ?? '';
      // Without `existing`, any database is accepted.
      if (options.existing !== undefined && !databases.has(db)) {
        send(res, record, 404, { error: `database not found: "${db}"` });
        return;
      }
    } else if (version === 2) {
      if (q.org !== orgName && q.org !== orgId) {
        send(res, record, 404, { code: 'not found', message: `organization name "${q.org ?? ''}" not found` });
        return;
      }
      if (!buckets.has(q.bucket ?? '')) {
        send(res, record, 404, { code: 'not found', message: `bucket "${q.bucket ?? ''}" not found` });
        return;
      }
    } else {
      const db = q.db ?? '';
      // InfluxDB 3 Core creates a missing database on the first write.
      if (db !== '' && !databases.has(db)) databases.set(db, { name: db, retentionPeriod: undefined });
    }
    const poisoned = poisons.find((p) => record.body.includes(p.text));
    if (poisoned !== undefined) {
      const { status, body, headers } = poisoned.failure;
      const message =
        body ??
        (version === 2
          ? JSON.stringify({ code: 'invalid', message: `poisoned line: ${poisoned.text}` })
          : JSON.stringify({ error: `poisoned line: ${poisoned.text}` }));
      send(res, record, status, message, headers);
      return;
    }
    stored.push(...record.body.split('\n').filter((l) => l !== ''));
    send(res, record, 204);
  };

  const handleV2Api = (res: ServerResponse, record: RecordedRequest): void => {
    const q = record.query;
    if (record.method === 'GET' && record.path === '/api/v2/orgs') {
      if (q.org !== undefined && q.org !== orgName) {
        send(res, record, 404, { code: 'not found', message: `organization name "${q.org}" not found` });
        return;
      }
      send(res, record, 200, {
        links: { self: '/api/v2/orgs' },
        orgs: [{ id: orgId, name: orgName, description: '' }],
      });
      return;
    }
    if (record.method === 'GET' && record.path === '/api/v2/buckets') {
      const list = [...buckets.values()].filter(
        (b) => (q.name === undefined || b.name === q.name) && (q.orgID === undefined || b.orgID === q.orgID),
      );
      send(res, record, 200, { links: { self: '/api/v2/buckets' }, buckets: list });
      return;
    }
    if (record.method === 'POST' && record.path === '/api/v2/buckets') {
      const body: unknown = JSON.parse(record.body);
      if (
        typeof body !== 'object' ||
        body === null ||
        !('name' in body) ||
        typeof body.name !== 'string' ||
        !('orgID' in body) ||
        typeof body.orgID !== 'string'
      ) {
        send(res, record, 400, { code: 'invalid', message: 'bucket name and orgID are required' });
        return;
      }
      if (body.orgID !== orgId) {
        send(res, record, 404, { code: 'not found', message: 'organization not found' });
        return;
      }
      if (buckets.has(body.name)) {
        send(res, record, 422, { code: 'conflict', message: `bucket with name ${body.name} already exists` });
        return;
      }
      const bucket: FakeBucket = {
        id: `b${nextId++}`,
        orgID: body.orgID,
        name: body.name,
        description: 'description' in body && typeof body.description === 'string' ? body.description : '',
        retentionRules: 'retentionRules' in body ? body.retentionRules : [],
      };
      buckets.set(bucket.name, bucket);
      send(res, record, 201, bucket);
      return;
    }
    send(res, record, 404, { code: 'not found', message: 'path not found' });
  };

  const handleV3Api = (res: ServerResponse, record: RecordedRequest): void => {
    if (record.method === 'POST' && record.path === '/api/v3/configure/database') {
      const body: unknown = JSON.parse(record.body);
      if (typeof body !== 'object' || body === null || !('db' in body) || typeof body.db !== 'string') {
        send(res, record, 400, { error: 'invalid request body' });
        return;
      }
      if (databases.has(body.db)) {
        send(res, record, 409, { error: 'attempted to create a resource that already exists' });
        return;
      }
      const retention =
        'retention_period' in body && typeof body.retention_period === 'string' ? body.retention_period : undefined;
      databases.set(body.db, { name: body.db, retentionPeriod: retention });
      send(res, record, 200);
      return;
    }
    send(res, record, 404, { error: 'not found' });
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    void (async () => {
      const raw = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://fake');
      const gzip = req.headers['content-encoding'] === 'gzip';
      const record: RecordedRequest = {
        method: req.method ?? '',
        path: url.pathname,
        rawQuery: url.search.replace(/^\?/, ''),
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: (gzip ? gunzipSync(raw) : raw).toString('utf8'),
        status: undefined,
      };
      requests.push(record);
      if (hangs > 0) {
        hangs--;
        hanging.add(res);
        res.on('close', () => hanging.delete(res));
        return;
      }
      const failure = failures.shift();
      if (failure !== undefined) {
        send(
          res,
          record,
          failure.status,
          failure.body ??
            (version === 2
              ? { code: 'internal error', message: `failure on demand (${failure.status})` }
              : { error: `failure on demand (${failure.status})` }),
          failure.headers,
        );
        return;
      }
      if (version === 1 && record.path === '/ping') {
        send(res, record, 204);
        return;
      }
      if (!authorised(req)) {
        unauthorised(res, record);
        return;
      }
      if (record.method === 'POST' && record.path === writePath(version)) handleWrite(res, record);
      else if (version === 2) handleV2Api(res, record);
      else if (version === 3) handleV3Api(res, record);
      else send(res, record, 404, '404 page not found\n');
    })().catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    });
  };
  const server: Server = options.tls ? createHttpsServer(options.tls, handler) : createServer(handler);
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  const port = await listen(server, 0);

  const dropConnections = (): void => {
    for (const res of hanging) res.destroy();
    hanging.clear();
    for (const socket of sockets) socket.destroy();
    sockets.clear();
  };
  const stopListening = (): Promise<void> =>
    new Promise<void>((resolve) => {
      if (!server.listening) {
        resolve();
        return;
      }
      server.close(() => resolve());
      dropConnections();
    });

  return {
    version,
    host: LOOPBACK,
    port,
    url: `${options.tls ? 'https' : 'http'}://${LOOPBACK}:${port}`,
    orgId,
    requests,
    buckets,
    databases,
    writes: () => requests.filter((r) => r.method === 'POST' && r.path === writePath(version)),
    lines: () => [...stored],
    failNext: (count, failure) => {
      for (let i = 0; i < count; i++) failures.push(asFailure(failure));
    },
    poison: (text, failure = 400) => {
      poisons.push({ text, failure: asFailure(failure) });
    },
    hangNext: (count) => {
      hangs += count;
    },
    reset: () => {
      requests.length = 0;
      stored.length = 0;
      failures = [];
      poisons = [];
      hangs = 0;
    },
    refuseConnections: stopListening,
    acceptConnections: async () => {
      if (!server.listening) await listen(server, port);
    },
    close: stopListening,
  };
}

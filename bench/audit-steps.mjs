/**
 * What each step of an audit request costs, without HTTP: the handler whole (CORS and the
 * error boundary) and without it, and the steps on their own — JSON.parse, the structural and
 * content checks, the client-version verdict, the rate limiter, the queue codec, the idempotency
 * store and the durable journal. µs per request, the best of --reps passes over --requests
 * different valid 2 KB envelopes, in this one process (no load generator: compare the steps with
 * each other, and `bench/audit-api.mjs` for the whole server).
 *
 *   npm run build && node bench/audit-steps.mjs [--requests=20000] [--reps=3]
 *
 * The handler is composed as functions/local/audit.ts composes it (the same makeAuditHandlers),
 * with a queue that only encodes (the durable queue is measured as its own step).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, loadNow, machineLine, positive } from './lib.mjs';

const N = Math.round(positive('requests', 'BENCH_REQUESTS', 20_000));
const REPS = Math.round(positive('reps', 'BENCH_REPS', 3));
const dist = (path) => import(new URL(`../dist/${path}`, import.meta.url).href);
const [
  { makeAuditHandlers, makeAuditCore },
  { parseConfigText },
  { MemoryRateLimiter },
  { PointClock },
  envelopeModule,
  { evaluateClientVersion },
  { encodePacked },
  { LocalIdempotencyStore },
  { LocalEventQueue },
] = await Promise.all([
  dist('shared/audit/handler.js'),
  dist('shared/config/load.js'),
  dist('shared/ratelimit/memory.js'),
  dist('shared/queue/point-clock.js'),
  dist('shared/audit/envelope.js'),
  dist('shared/audit/versions.js'),
  dist('shared/queue/codec.js'),
  dist('shared/idempotency/local.js'),
  dist('shared/queue/local/index.js'),
]);
const { validateEnvelope, checkContent, tooDeep, MAX_NESTING_DEPTH } = envelopeModule;

const TOKEN = 'bench-token-0123456789abcdef';
const yaml = [
  'Svc:',
  '  auditEvents:',
  '    enable: true',
  `    apiToken: ${TOKEN}`,
  '    rateLimit:',
  '      enable: true',
  '      maxPerMinute: 1000000',
  '    cors:',
  '      allowedOrigins: [https://analytics.example.com]',
  '',
].join('\n');
const settings = parseConfigText(yaml, 'bench.yaml', {}).config.auditEvents;
const log = { debug() {}, info() {}, warn() {}, error() {}, child: () => log };
const queue = { send: (events) => (encodePacked(events), Promise.resolve()) };
const deps = {
  settings,
  rateLimiter: new MemoryRateLimiter({ limit: 1_000_000 }),
  idempotency: null,
  queue,
  clock: new PointClock(),
  log,
};
const { handler } = makeAuditHandlers(deps);
const core = makeAuditCore(deps);

const envelope = () => ({
  schemaVersion: 1,
  eventId: randomUUID(),
  timestamp: new Date().toISOString(),
  type: 'selection.state.changed',
  correlationId: randomUUID(),
  source: { kind: 'qlik-sense-extension', name: 'audit-qs', version: '0.3.2' },
  payload: {
    context: {
      appId: randomUUID(),
      appName: 'Sales Analysis 2026',
      sheetId: 'a1b2c3',
      sheetName: 'Overview',
      user: 'UserDirectory=LAB; UserId=goran',
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0',
    },
    event: {
      selectionTxnId: randomUUID(),
      details: Array.from({ length: 14 }, (_, j) => ({
        field: `Region ${j}`,
        values: ['EU', 'US', 'APAC'],
        state: 'selected',
        cardinality: 120 + j,
      })),
    },
  },
});
const bodies = Array.from({ length: N }, () => JSON.stringify(envelope()));
const parsed = bodies.map((b) => JSON.parse(b));
const queued = parsed.map((event) => ({
  kind: 'audit',
  id: event.eventId,
  receivedAt: new Date().toISOString(),
  meta: { clientIp: '127.0.0.2', clientVersion: '0.3.2' },
  event,
}));
const requestOf = (body) => ({
  version: '2.0',
  routeKey: '$default',
  rawPath: '/api/v1/audit-event',
  rawQueryString: '',
  isBase64Encoded: false,
  body,
  headers: {
    host: '127.0.0.1',
    'content-type': 'application/json',
    'content-length': String(body.length),
    authorization: `Bearer ${TOKEN}`,
    'x-audit-client-version': '0.3.2',
    origin: 'https://analytics.example.com',
    'user-agent': 'bench',
    connection: 'keep-alive',
  },
  requestContext: {
    http: {
      method: 'POST',
      path: '/api/v1/audit-event',
      sourceIp: '127.0.0.2',
      protocol: 'HTTP/1.1',
      userAgent: 'bench',
    },
    requestId: 'r',
    routeKey: '$default',
    stage: '$default',
    timeEpoch: Date.now(),
  },
});
const requests = bodies.map(requestOf);
const context = { getRemainingTimeInMillis: () => 30_000, awsRequestId: 'bench', functionName: 'audit' };

const dir = mkdtempSync(join(tmpdir(), 'svc-bench-steps-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
const store = new LocalIdempotencyStore({ directory: dir, windowSeconds: 86_400, maxEntries: N * (REPS + 1), log });
await store.start();
const journal = new LocalEventQueue({
  directory: join(dir, 'queue'),
  capacity: N * (REPS + 1),
  maxReceiveCount: 3,
  log,
  groups: [
    { name: 'ack', batchSize: 1000, batchWindowMs: 0, handler: () => Promise.resolve({ batchItemFailures: [] }) },
  ],
});
await journal.start();

/** The best of REPS passes of `step` over the N requests, in µs per request. */
async function measure(step) {
  let best = Infinity;
  for (let rep = 0; rep < REPS; rep++) {
    const t0 = performance.now();
    await step(rep);
    best = Math.min(best, performance.now() - t0);
  }
  return (best * 1000) / N;
}

const expect202 = (r) => {
  if (r.statusCode !== 202) throw new Error(`expected 202, got ${r.statusCode}: ${r.body}`);
};
const steps = [
  // 32 requests at a time, as the server has them in flight: the handler hands the queue one
  // event-loop turn's events together (after setImmediate), so one request at a time would time
  // a turn of the loop per request.
  [
    'handler whole (CORS, error boundary; 32 at a time)',
    async () => {
      for (let i = 0; i < N; i += 32)
        (await Promise.all(requests.slice(i, i + 32).map((r) => handler(r, context)))).forEach(expect202);
    },
  ],
  [
    'handler core (no CORS, no error boundary; 32 at a time)',
    async () => {
      for (let i = 0; i < N; i += 32)
        (await Promise.all(requests.slice(i, i + 32).map((r) => core(r)))).forEach(expect202);
    },
  ],
  [
    '  JSON.parse of the body',
    () => {
      for (const b of bodies) JSON.parse(b);
    },
  ],
  [
    '  nesting depth (tooDeep)',
    () => {
      for (const p of parsed) tooDeep(p, MAX_NESTING_DEPTH);
    },
  ],
  [
    '  envelope schema (validateEnvelope, depth included)',
    () => {
      for (const p of parsed) validateEnvelope(p);
    },
  ],
  [
    '  content rules (checkContent)',
    () => {
      for (const p of parsed) checkContent(p);
    },
  ],
  [
    '  client version (evaluateClientVersion)',
    () => {
      for (let i = 0; i < N; i++) evaluateClientVersion('0.3.2', '0.3.2');
    },
  ],
  [
    '  rate limiter (memory, 16 addresses)',
    async () => {
      for (let i = 0; i < N; i++) await deps.rateLimiter.consume(`127.0.0.${2 + (i % 16)}`, Date.now());
    },
  ],
  [
    '  queue codec (encodePacked of one event)',
    () => {
      for (const q of queued) encodePacked([q]);
    },
  ],
  // Each pass claims fresh keys, so every claim is a new record (as every request in audit-api.mjs is).
  [
    'idempotency store (local: claim + complete, 32 at a time)',
    async (rep) => {
      for (let i = 0; i < N; i += 32)
        await Promise.all(
          parsed.slice(i, i + 32).map(async (p) => {
            const key = `${rep}:${p.eventId}`;
            const at = new Date().toISOString();
            await store.claim(key, Date.now());
            await store.complete(key, at, Date.now());
          }),
        );
    },
  ],
  [
    'durable journal (send + fdatasync, 32 sends in flight)',
    async () => {
      for (let i = 0; i < N; i += 32) await Promise.all(queued.slice(i, i + 32).map((q) => journal.send([q])));
    },
  ],
];

console.log('audit request steps: µs per request, without HTTP');
console.log(`machine     ${machineLine()}`);
console.log(`load avg    ${loadNow().text} at start`);
console.log(
  `requests    ${N.toLocaleString('en-US')} valid ~${Math.round(bodies[0].length / 100) / 10} KB envelopes, best of ${REPS} passes\n`,
);
for (const [name, step] of steps) console.log(`${name.padEnd(58)} ${fmt(await measure(step), 2).padStart(8)} µs`);
await journal.stop();
await store.stop();
console.log(`\nload avg    ${loadNow().text} at the end`);

/**
 * The cost model: the monthly AWS bill per million audit events and per million platform events, from
 * list prices (PRICES below, with their date and source) and figures MEASURED in this run.
 *
 *   npm run bench:cost                 # = npm run -s build && node bench/cost.mjs
 *   node bench/cost.mjs [--batches=20] [--forward-batch=1000] [--memory=512]
 *
 * (or BENCH_BATCHES, BENCH_FORWARD_BATCH, BENCH_MEMORY_MB). It imports the BUILT modules from ../dist.
 * Only 127.0.0.1 is used: fauxqs (SQS + S3 emulator, in this process) and a local HTTP endpoint that
 * accepts line protocol (answers /write with 204 and /query with the database list) stand in for
 * SQS, S3 and the tsdb.
 *
 * Measured here:
 * - events per SQS request and bytes per request: the real SqsEventQueue (packing, 1 MiB limit,
 *   batches of 10) against fauxqs, (a) one send per audit event, as the audit API sends, and
 *   (b) platform log events, parsed by the real parser from the simulator's datagrams, sent in
 *   chunks of --forward-batch events, as the edge's forwarder drains its local queue;
 * - Lambda duration: the real audit handler for one request (its queue SqsEventQueue → fauxqs;
 *   rate limit and idempotency off, see below), and the real writer handlers for one batch of the
 *   stack's batch size: the tsdb writer to the local line-protocol endpoint, the parquet writer to a
 *   fauxqs bucket. Median of --batches runs after a first, unmeasured one (the cold start's module
 *   init is bench/bundles.mjs's figure).
 *
 * Modelled (not measured): Lambda gets CPU in proportion to memory (1,769 MB = one vCPU), so the
 * local durations are scaled by 1769 / --memory (this machine's core ≈ one vCPU; network waits do not
 * scale, so this overestimates); every event source batch is full (the stack's maxBatchSize, or the
 * 6 MB invocation payload limit) — at low rates batches are smaller and invocations more; the DynamoDB
 * rate limiter and idempotency store each write one item (≤ 1 KB: 1 write request unit) per audit
 * request; SQS bills every 64 KB of a request's payload as one request, and Lambda's pollers receive
 * up to 10 messages per ReceiveMessage and delete them in batches of 10. Not counted: free tiers,
 * storage (S3, SQS retention), CloudWatch logs and alarms, data transfer, the SQS pollers' empty
 * receives on an idle queue (a few per minute per queue, independent of the events).
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fmt, int, loadNow, machineLine, median, positive } from './lib.mjs';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const load = (path) => import(pathToFileURL(join(REPO, 'dist', path)).href);

const BATCHES = Math.round(positive('batches', 'BENCH_BATCHES', 20));
const FORWARD_BATCH = Math.round(positive('forward-batch', 'BENCH_FORWARD_BATCH', 1000));
const MEMORY_MB = positive('memory', 'BENCH_MEMORY_MB', 512);
const LOOPBACK = '127.0.0.1';

/**
 * List prices, us-east-1, as known on 2025-01 (the first tier of each; not re-checked online: this
 * machine has no internet, so check them against the pages before relying on the result).
 */
const PRICES = {
  date: '2025-01 (us-east-1, first tier; not re-checked online)',
  apiGatewayHttpPerMillion: {
    usd: 1.0,
    source:
      'https://aws.amazon.com/api-gateway/pricing/ (HTTP APIs, first 300 million requests; metered in 512 KB increments)',
  },
  lambdaRequestPerMillion: { usd: 0.2, source: 'https://aws.amazon.com/lambda/pricing/' },
  lambdaArmGbSecond: {
    usd: 0.0000133334,
    source: 'https://aws.amazon.com/lambda/pricing/ (Arm, first 7.5 billion GB-s per month)',
  },
  sqsStandardPerMillion: {
    usd: 0.4,
    source: 'https://aws.amazon.com/sqs/pricing/ (standard queues; each 64 KB chunk of a payload is one request)',
  },
  s3PutPerThousand: { usd: 0.005, source: 'https://aws.amazon.com/s3/pricing/ (S3 Standard PUT, COPY, POST, LIST)' },
  s3GetPerThousand: { usd: 0.0004, source: 'https://aws.amazon.com/s3/pricing/ (S3 Standard GET)' },
  dynamoWritePerMillion: {
    usd: 0.625,
    source: 'https://aws.amazon.com/dynamodb/pricing/on-demand/ (write request units, on-demand, since 2024-11)',
  },
};

const SQS_CHUNK = 65_536;
const LAMBDA_FULL_VCPU_MB = 1769;
const LAMBDA_PAYLOAD_BYTES = 6 * 1024 * 1024;
const SQS_RECEIVE_MAX = 10;

const [
  { startFauxqs },
  { SQSClient, CreateQueueCommand },
  { S3Client, CreateBucketCommand },
  { SqsEventQueue },
  { LeanSqsClient },
  { parseConfigText },
  { makeWriterHandler },
  { tsdbWriterDestination },
  { parquetWriterDestination },
  { PointClock },
  { makeAuditHandler },
  { createJsonLogger },
  { ErrorTracker },
  { encodePacked },
  { createDatagramGenerator, LOG_KINDS },
  { parseLogEvent },
  { auditEnvelope, simulatedClientVersion },
  { SeededRandom },
] = await Promise.all([
  import('fauxqs'),
  import('@aws-sdk/client-sqs'),
  import('@aws-sdk/client-s3'),
  load('shared/queue/sqs.js'),
  load('shared/aws/sqs.js'),
  load('shared/config/load.js'),
  load('shared/destinations/handler.js'),
  load('shared/destinations/tsdb/build.js'),
  load('shared/destinations/files/build-parquet.js'),
  load('shared/queue/point-clock.js'),
  load('shared/audit/handler.js'),
  load('shared/logging/pino-core.js'),
  load('shared/errors/tracker.js'),
  load('shared/queue/codec.js'),
  load('edge-agent/simulate/messages.js'),
  load('edge-agent/sources/udp/parse/log-event.js'),
  load('edge-agent/simulate/platform/audit.js'),
  load('edge-agent/simulate/random.js'),
]);

/** A local endpoint that takes InfluxDB 1.x line protocol: /write → 204, /query → the database exists. */
async function startLineProtocolEndpoint() {
  let lines = 0;
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      if (req.url?.startsWith('/write')) {
        lines += Buffer.concat(chunks).toString('utf8').split('\n').filter(Boolean).length;
        res.writeHead(204).end();
      } else if (req.url?.startsWith('/query')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            results: [{ statement_id: 0, series: [{ name: 'databases', columns: ['name'], values: [['svc']] }] }],
          }),
        );
      } else res.writeHead(204).end();
    });
  });
  await new Promise((resolve) => server.listen(0, LOOPBACK, resolve));
  return {
    port: server.address().port,
    lines: () => lines,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}

/**
 * Svc's own SQS client (the audit Lambda's and the forwarder's, shared/aws/sqs.ts), recording the
 * payload bytes of every SendMessageBatch; `admin`, the AWS SDK's client, creates the queue.
 */
function recordingSqs(endpoint) {
  const local = { region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } };
  const admin = new SQSClient({ endpoint, ...local, maxAttempts: 1 });
  const lean = new LeanSqsClient({
    endpoint,
    region: local.region,
    credentials: () => Promise.resolve(local.credentials),
    maxAttempts: 1,
  });
  const requests = [];
  const client = {
    sendMessageBatch(input) {
      requests.push({
        messages: input.Entries.length,
        bytes: input.Entries.reduce((n, e) => n + Buffer.byteLength(e.MessageBody, 'utf8'), 0),
      });
      return lean.sendMessageBatch(input);
    },
  };
  const destroy = () => {
    admin.destroy();
    lean.destroy();
  };
  return { client, admin, requests, destroy };
}

/** Sends `chunks` of events with the real SqsEventQueue; what it took in requests, messages and bytes. */
async function packing(endpoint, name, chunks) {
  const { client, admin, requests, destroy } = recordingSqs(endpoint);
  const { QueueUrl } = await admin.send(new CreateQueueCommand({ QueueName: name }));
  const queue = new SqsEventQueue({ client, queueUrl: QueueUrl, claimCheck: null });
  for (const chunk of chunks) await queue.send(chunk);
  const events = chunks.reduce((n, c) => n + c.length, 0);
  const messages = requests.reduce((n, r) => n + r.messages, 0);
  const bytes = requests.reduce((n, r) => n + r.bytes, 0);
  const billedSends = requests.reduce((n, r) => n + Math.max(1, Math.ceil(r.bytes / SQS_CHUNK)), 0);
  destroy();
  return {
    events,
    requests: requests.length,
    messages,
    bytes,
    billedSends,
    eventsPerRequest: events / requests.length,
    eventsPerMessage: events / messages,
    bytesPerEvent: bytes / events,
  };
}

function record(messageId, events) {
  return {
    messageId,
    receiptHandle: messageId,
    body: encodePacked(events),
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:svc',
    awsRegion: 'us-east-1',
    messageAttributes: {},
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: '0',
      SenderId: 'bench',
      ApproximateFirstReceiveTimestamp: '0',
    },
  };
}

/** Median ms of `handler(batch())` over BATCHES runs, after one unmeasured run (the destination's prepare). */
async function timeBatches(handler, batch) {
  const first = await handler(batch());
  if (first.batchItemFailures.length > 0) throw new Error(`writer failed ${first.batchItemFailures.length} message(s)`);
  const times = [];
  for (let i = 0; i < BATCHES; i++) {
    const event = batch();
    const t0 = performance.now();
    const out = await handler(event);
    times.push(performance.now() - t0);
    if (out.batchItemFailures.length > 0) throw new Error(`writer failed ${out.batchItemFailures.length} message(s)`);
  }
  return median(times);
}

async function main() {
  console.log(`bench/cost: ${machineLine()}`);
  console.log(`load average at start: ${loadNow().text}\n`);
  const fauxqs = await startFauxqs({ port: 0, logger: false });
  const endpoint = `http://${LOOPBACK}:${fauxqs.port}`;
  const tsdb = await startLineProtocolEndpoint();
  const s3 = new S3Client({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    forcePathStyle: true,
  });
  await s3.send(new CreateBucketCommand({ Bucket: 'svc-parquet' }));
  process.env.AWS_ACCESS_KEY_ID ??= 'local';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'local';

  const { config } = parseConfigText(
    `Svc:
  tsdbConfig: {enable: true, host: ${LOOPBACK}, port: ${tsdb.port}, v1Config: {dbName: svc}}
  auditEvents:
    enable: true
    destination:
      enable: true
      type: tsdb, parquet
      parquet: {s3: {enable: true, bucket: svc-parquet, region: us-east-1, endpoint: '${endpoint}'}}
  userEvents: {enable: true, sendToTsdb: {enable: true}}
  logEvents:
    source: {engine: {enable: true}, proxy: {enable: true}, repository: {enable: true}, scheduler: {enable: true}}
    sendToTsdb: {enable: true}
`,
    'bench-cost.yaml',
    {},
  );
  const logger = createJsonLogger({ level: process.env.BENCH_LOG_LEVEL ?? 'warn' });
  const ctx = { config, logger, errors: new ErrorTracker({ enabled: false, log: logger }), clock: new PointClock() };
  const audit = config.auditEvents;

  // Typical events: audit envelopes of the simulator's audit client, log events of its datagrams.
  const gen = createDatagramGenerator({ seed: 42, kinds: LOG_KINDS.filter((k) => k !== 'qix-perf'), malformed: 0 });
  const random = new SeededRandom(42);
  const version = simulatedClientVersion();
  const auditEvent = () => ({
    kind: 'audit',
    id: randomUUID(),
    receivedAt: new Date().toISOString(),
    event: auditEnvelope(random, gen.options.pool, version, Date.now()),
    meta: { clientIp: '192.0.2.1', clientVersion: version },
    timeNs: String(BigInt(Date.now()) * 1_000_000n),
  });
  const logEvent = () => {
    const parsed = parseLogEvent(gen.next().data, Date.now());
    if (!parsed.ok) throw new Error('the simulator made a datagram the parser refused');
    // The queued form, as edge-agent/sources/udp/handlers.ts makes it: the times travel beside the keys (no categories configured).
    const { eventTimeMs, receivedAtMs: _received, ...event } = parsed.event;
    return {
      kind: 'log-event',
      id: randomUUID(),
      receivedAt: new Date().toISOString(),
      timeNs: String(BigInt(Math.floor(eventTimeMs)) * 1_000_000n),
      event,
    };
  };

  // 1. Packing, measured with the real adapter.
  const auditPack = await packing(
    endpoint,
    'cost-audit',
    Array.from({ length: 2000 }, () => [auditEvent()]),
  );
  const platformPack = await packing(
    endpoint,
    'cost-platform',
    Array.from({ length: 10 }, () => Array.from({ length: FORWARD_BATCH }, logEvent)),
  );

  // 2. Lambda durations, measured with the real handlers.
  const auditSqs = recordingSqs(endpoint);
  const { QueueUrl } = await auditSqs.admin.send(new CreateQueueCommand({ QueueName: 'cost-audit-api' }));
  const auditHandler = makeAuditHandler({
    settings: { ...audit, apiToken: '' },
    rateLimiter: null,
    idempotency: null,
    queue: new SqsEventQueue({ client: auditSqs.client, queueUrl: QueueUrl, claimCheck: null }),
    clock: new PointClock(),
    log: logger,
  });
  const request = () => ({
    version: '2.0',
    rawPath: '/api/v1/audit-event',
    routeKey: 'POST /api/v1/audit-event',
    isBase64Encoded: false,
    headers: { 'content-type': 'application/json', 'x-audit-client-version': version },
    body: JSON.stringify(auditEnvelope(random, gen.options.pool, version, Date.now())),
    requestContext: {
      http: { method: 'POST', path: '/api/v1/audit-event', sourceIp: '192.0.2.1' },
      requestId: randomUUID(),
    },
  });
  const auditTimes = [];
  for (let i = 0; i <= BATCHES * 5; i++) {
    const t0 = performance.now();
    const res = await auditHandler(request(), { awsRequestId: randomUUID() });
    if (i > 0) auditTimes.push(performance.now() - t0);
    if (res.statusCode !== 202) throw new Error(`audit handler answered ${res.statusCode}: ${res.body}`);
  }
  const auditMs = median(auditTimes);

  const tsdbBatch = Math.min(audit.destination.tsdb.maxBatchSize, 10_000);
  const parquetBatch = Math.min(audit.destination.parquet.maxBatchSize, 10_000);
  const tsdbHandler = makeWriterHandler({
    destination: tsdbWriterDestination(ctx),
    onlyTakenKinds: true,
    claimCheck: null,
    log: logger,
  });
  const parquetHandler = makeWriterHandler({
    destination: parquetWriterDestination(ctx),
    onlyTakenKinds: true,
    claimCheck: null,
    log: logger,
  });
  // Audit path: one event per message (as sent), a full batch of the stack's batch size.
  const auditBatch = (n) => () => ({ Records: Array.from({ length: n }, (_, i) => record(`m${i}`, [auditEvent()])) });
  const tsdbAuditMs = await timeBatches(tsdbHandler, auditBatch(tsdbBatch));
  const parquetAuditMs = await timeBatches(parquetHandler, auditBatch(parquetBatch));
  // Platform path: packed messages, as many as fit one invocation (batch size and 6 MB payload).
  const platformMessagesPerInvocation = Math.max(
    1,
    Math.min(tsdbBatch, Math.floor(LAMBDA_PAYLOAD_BYTES / (platformPack.bytes / platformPack.messages))),
  );
  const platformEventsPerInvocation = Math.round(platformMessagesPerInvocation * platformPack.eventsPerMessage);
  const perMessage = Math.round(platformPack.eventsPerMessage);
  const tsdbPlatformMs = await timeBatches(tsdbHandler, () => ({
    Records: Array.from({ length: platformMessagesPerInvocation }, (_, i) =>
      record(`p${i}`, Array.from({ length: perMessage }, logEvent)),
    ),
  }));

  // 3. The bill.
  const scale = LAMBDA_FULL_VCPU_MB / MEMORY_MB;
  const gb = MEMORY_MB / 1024;
  const P = PRICES;
  const M = 1_000_000;
  const lambda = (invocations, ms) => ({
    requests: (invocations / M) * P.lambdaRequestPerMillion.usd,
    compute: invocations * (Math.ceil(ms * scale) / 1000) * gb * P.lambdaArmGbSecond.usd,
  });
  const sqs = (pack, queues) => {
    const messages = (M / pack.eventsPerMessage) * queues;
    const bytes = M * pack.bytesPerEvent * queues;
    const sends = (M / pack.events) * pack.billedSends * queues;
    const receives = Math.max(messages / SQS_RECEIVE_MAX, bytes / SQS_CHUNK);
    const deletes = messages / SQS_RECEIVE_MAX;
    return { sends, receives, deletes, usd: ((sends + receives + deletes) / M) * P.sqsStandardPerMillion.usd };
  };

  const auditDestinations = 2; // tsdb and parquet: the audit API sends every event to each destination's queue
  const a = {
    api: P.apiGatewayHttpPerMillion.usd,
    auditLambda: lambda(M, auditMs),
    dynamo: ((audit.rateLimit.enable ? 1 : 0) + (audit.idempotency.enable ? 1 : 0)) * P.dynamoWritePerMillion.usd,
    sqs: sqs(auditPack, auditDestinations),
    tsdbWriter: lambda(M / tsdbBatch, tsdbAuditMs),
    parquetWriter: lambda(M / parquetBatch, parquetAuditMs),
    s3Puts: (M / parquetBatch / 1000) * P.s3PutPerThousand.usd,
  };
  const p = {
    sqs: sqs(platformPack, 1),
    tsdbWriter: lambda(M / platformEventsPerInvocation, tsdbPlatformMs),
    claimChecks: 0,
  };
  const lambdaUsd = (l) => l.requests + l.compute;
  const auditTotal =
    a.api +
    lambdaUsd(a.auditLambda) +
    a.dynamo +
    a.sqs.usd +
    lambdaUsd(a.tsdbWriter) +
    lambdaUsd(a.parquetWriter) +
    a.s3Puts;
  const platformTotal = p.sqs.usd + lambdaUsd(p.tsdbWriter) + p.claimChecks;

  console.log(`Prices: ${P.date}`);
  for (const [key, value] of Object.entries(P))
    if (key !== 'date') console.log(`  ${key.padEnd(26)} $${value.usd}  ${value.source}`);
  console.log('\nMeasured in this run:');
  console.log(
    `  audit events, one send each (audit API): ${fmt(auditPack.eventsPerRequest, 2)} events per SendMessageBatch, ${int(auditPack.bytesPerEvent)} bytes per event, ${fmt(auditPack.billedSends / auditPack.requests, 2)} billed requests per send`,
  );
  console.log(
    `  platform log events, sends of ${int(FORWARD_BATCH)} (edge forwarder): ${fmt(platformPack.eventsPerRequest, 1)} events per SendMessageBatch, ${fmt(platformPack.eventsPerMessage, 1)} per message, ${int(platformPack.bytesPerEvent)} bytes per event, ${fmt(platformPack.billedSends / platformPack.requests, 1)} billed requests (64 KB chunks) per send`,
  );
  console.log(`  audit handler, one request: ${fmt(auditMs, 2)} ms (median of ${auditTimes.length})`);
  console.log(
    `  tsdb writer, ${int(tsdbBatch)} audit events: ${fmt(tsdbAuditMs, 1)} ms; parquet writer, ${int(parquetBatch)} audit events: ${fmt(parquetAuditMs, 1)} ms; tsdb writer, ${int(platformMessagesPerInvocation)} packed messages = ${int(platformEventsPerInvocation)} log events: ${fmt(tsdbPlatformMs, 1)} ms (medians of ${BATCHES})`,
  );
  console.log(`  line-protocol endpoint received ${int(tsdb.lines())} lines`);
  console.log(
    `\nModel: ${MEMORY_MB} MB arm64, local ms × ${fmt(scale, 2)} (1,769 MB = 1 vCPU), full batches; rate limit ${audit.rateLimit.enable ? 'on' : 'off'}, idempotency ${audit.idempotency.enable ? 'on' : 'off'} (defaults); audit events to ${auditDestinations} destinations (tsdb, parquet)\n`,
  );

  const rows = [
    ['per million audit events', 'quantity', 'USD'],
    ['API Gateway HTTP API', `${int(M)} requests`, a.api],
    ['Lambda audit function', `${int(M)} × ${fmt(auditMs * scale, 1)} ms`, lambdaUsd(a.auditLambda)],
    [
      'DynamoDB (rate limit, idempotency)',
      `${int(M * ((audit.rateLimit.enable ? 1 : 0) + (audit.idempotency.enable ? 1 : 0)))} writes`,
      a.dynamo,
    ],
    ['SQS (send, receive, delete)', `${int(a.sqs.sends + a.sqs.receives + a.sqs.deletes)} requests`, a.sqs.usd],
    ['Lambda tsdb writer', `${int(M / tsdbBatch)} × ${fmt(tsdbAuditMs * scale, 0)} ms`, lambdaUsd(a.tsdbWriter)],
    [
      'Lambda parquet writer',
      `${int(M / parquetBatch)} × ${fmt(parquetAuditMs * scale, 0)} ms`,
      lambdaUsd(a.parquetWriter),
    ],
    ['S3 PUT (parquet files)', `${int(M / parquetBatch)} PUTs`, a.s3Puts],
    ['total', '', auditTotal],
    ['per million platform events (tsdb)', '', ''],
    ['SQS (send, receive, delete)', `${int(p.sqs.sends + p.sqs.receives + p.sqs.deletes)} requests`, p.sqs.usd],
    [
      'Lambda tsdb writer',
      `${int(M / platformEventsPerInvocation)} × ${fmt(tsdbPlatformMs * scale, 0)} ms`,
      lambdaUsd(p.tsdbWriter),
    ],
    ['S3 PUT (claim checks)', 'none: no message passes 1 MiB', p.claimChecks],
    ['total', '', platformTotal],
  ];
  const cell = (v) => (typeof v === 'number' ? `$${v < 0.01 ? v.toFixed(4) : v.toFixed(2)}` : v);
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => cell(r[c]).length)));
  for (const r of rows) console.log(`| ${r.map((v, c) => cell(v).padEnd(widths[c])).join(' | ')} |`);
  console.log(`\nload average at end: ${loadNow().text}`);

  auditSqs.destroy();
  s3.destroy();
  await tsdb.stop();
  await fauxqs.stop();
}

await main();

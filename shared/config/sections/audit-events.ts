/** `auditEvents`: the audit event HTTP ingest API, its queue and its writers. */
import { Type } from '@sinclair/typebox';
import { Feature, Int, Millis, Port, Required, Secret, Section, Str, StringList, Tags } from '../builders.js';

/** The writers `destination.type` may list; its pattern and description are built from this list. */
export const AUDIT_DESTINATION_TYPES = ['tsdb', 'parquet', 'tablefile', 'json'] as const;
export type AuditDestinationType = (typeof AUDIT_DESTINATION_TYPES)[number];

/** The settings every batching writer shares; `directory` null for a writer without files (tsdb). */
const batching = (what: string, directory: string | null, writeFrequency: number) => ({
  ...(directory === null
    ? {}
    : {
        exportDirectory: Str(
          directory,
          `Directory for the ${what} files; relative paths resolve from the working directory`,
        ),
      }),
  maxBatchSize: Int(1000, 1, 100_000, `Events per ${what} batch`),
  writeFrequency: Millis(writeFrequency, 100, `Longest time an event waits in the ${what} buffer before it is written`),
  staticTags: Tags(`Static tags added to every ${what} row`),
});

export const auditEvents = Feature(
  'Audit event HTTP ingest API (audit-event-api.md)',
  false,
  'Enable the audit event HTTP ingest API',
  {
    host: Str('127.0.0.1', "Where local mode's gateway listens", { minLength: 1 }),
    port: Port(8181, "Port of local mode's gateway"),
    apiToken: Secret(
      'Bearer token required by POST /api/v1/audit-event and GET /api/v1/test-connection; empty = no token required (a warning is logged at start)',
    ),
    maxBodyBytes: Int(
      1_048_576,
      1024,
      10_485_760,
      "Largest accepted request body in bytes; larger bodies get 413 (local mode's gateway answers as soon as the Content-Length header or the body passes it, and closes the connection)",
    ),
    headersTimeout: Millis(
      10_000,
      100,
      "Local mode only: longest time a request's line and headers may take to arrive, from the connection (or, on a kept-alive connection, from the request's first byte); a slower client gets 408 and the connection is closed",
    ),
    bodyTimeout: Millis(
      10_000,
      100,
      'Local mode only: longest time a request body may take to arrive, from the end of its headers; a slower body gets 408 and the connection is closed',
    ),
    maxConnectionsPerClient: Int(
      32,
      1,
      100_000,
      'Local mode only: open connections allowed per client address (the socket peer, not X-Forwarded-For); at the limit a new connection replaces the longest idle kept-alive one, or is closed at once, without an answer, when none is idle; the addresses in trustedProxies are not limited',
    ),
    trustedProxies: StringList(
      'Peer IP addresses whose X-Forwarded-For header is believed for the client IP; in local mode they are also exempt from maxConnectionsPerClient',
      ['10.0.0.5'],
      Type.String({ format: 'ip', 'x-expect': 'an IPv4 or IPv6 address' }),
    ),
    rateLimit: Feature(
      'HTTP rate limit per client IP, fixed 1-minute window',
      true,
      'Enable the per-IP HTTP rate limit',
      {
        maxPerMinute: Int(300, 1, 1_000_000, 'Requests per minute per client IP'),
      },
    ),
    cors: Section('CORS for browser callers', {
      allowedOrigins: StringList(
        'Origins (scheme://host[:port]) allowed for browser callers; empty = no browser origin is allowed',
        ['https://analytics.example.com'],
        Type.String({
          pattern: '^https?://[^/\\s]+$',
          'x-expect': 'an origin such as https://analytics.example.com (no path)',
        }),
      ),
    }),
    idempotency: Feature(
      'One record per eventId, so a retried event is queued once (docs/audit-api.md)',
      true,
      'Answer a repeated eventId from the record instead of queueing it again',
      {
        windowSeconds: Int(
          86_400,
          60,
          31_536_000,
          'How long a record is kept: a repeat within this many seconds of the first receipt is not queued again',
        ),
        maxEntries: Int(
          250_000,
          1000,
          50_000_000,
          'Local mode: records held in memory (about 100 bytes each); past this the oldest are forgotten before their window ends',
        ),
      },
    ),
    queue: Section('Internal queue between the API and the writers', {
      capacity: Int(10_000, 1, 10_000_000, 'Events the local queue holds before the API answers 503'),
      rateLimit: Feature(
        'Global throughput limit of the queue (not per IP)',
        false,
        'Enable the queue throughput limit',
        {
          maxPerMinute: Int(600, 1, 10_000_000, 'Events per minute taken from the queue'),
        },
      ),
    }),
    aws: Section(
      'Limits of the audit API the AWS stack deploys (cdk synth / deploy, docs/deployment.md#limits-of-the-audit-api-on-aws); local mode ignores them',
      {
        throttle: Feature(
          "Throttling of the API Gateway stage: requests over it get 429 from API Gateway, before the function runs; it caps all clients together, where rateLimit caps each client's IP",
          true,
          'Throttle the API stage',
          {
            requestsPerSecond: Int(
              0,
              0,
              1_000_000,
              'Steady rate of requests per second the stage admits; 0 = derived: rateLimit.maxPerMinute per second (as many requests a second as one client may send in a minute, i.e. 60 clients at their limit; read also while rateLimit is off), at most 10,000 (the default account quota)',
            ),
            burst: Int(
              0,
              0,
              1_000_000,
              'Most requests the stage admits at once (the size of its token bucket); 0 = derived: 2 × rateLimit.maxPerMinute (one client may send two windows back to back across a minute boundary), at most 5,000 (the default account quota)',
            ),
          },
        ),
        reservedConcurrency: Feature(
          'Reserved concurrency of the audit function: it both guarantees and caps how many instances run at once; reserving fails the deploy when it would leave the account fewer than 100 unreserved executions (docs/deployment.md)',
          true,
          'Reserve (and cap) the concurrency of the audit function',
          {
            executions: Int(
              0,
              0,
              100_000,
              "Concurrent executions reserved for the audit function; 0 = derived: ⌈the stage's steady rate / 10⌉ (what it needs at 100 ms a request), at least 10",
            ),
          },
        ),
      },
    ),
    destination: Feature('Writers for accepted events', false, 'Write accepted events to destinations', {
      type: Str('parquet', `Comma-delimited list of active writers, among: ${AUDIT_DESTINATION_TYPES.join(', ')}`, {
        pattern: `^\\s*(${AUDIT_DESTINATION_TYPES.join('|')})\\s*(,\\s*(${AUDIT_DESTINATION_TYPES.join('|')})\\s*)*$`,
        'x-expect': `a comma-delimited list of ${AUDIT_DESTINATION_TYPES.join(', ')}`,
      }),
      tsdb: Section('tsdb writer; the connection is Svc.tsdbConfig', {
        measurementName: Str('audit_events', 'Measurement of audit event points', { minLength: 1 }),
        ...batching('tsdb', null, 5000),
      }),
      parquet: Section('Parquet writer: a file is closed at maxBatchSize rows or after writeFrequency', {
        ...batching('parquet', 'audit-events/parquet', 60_000),
        s3: Feature('Write the parquet files to S3 instead of the directory', false, 'Write to S3', {
          bucket: Required('Bucket name'),
          prefix: Str('audit-events/', 'Key prefix'),
          region: Str('us-east-1', 'AWS region', { minLength: 1 }),
          endpoint: Str('', 'Endpoint URL of an S3-compatible service; empty = AWS'),
        }),
      }),
      tablefile: Section(
        'Table-file (QVD) writer: a file is closed at maxBatchSize rows or after writeFrequency',
        batching('tablefile', 'audit-events/tablefile', 60_000),
      ),
      json: Section('JSON writers', {
        objectdata: Feature(
          'One JSON file per event for payload.event.objectData, written immediately (no batching)',
          false,
          'Write payload.event.objectData to per-event JSON files',
          {
            exportDirectory: Str('audit-events/json', 'Directory for those files', { minLength: 1 }),
            staticTags: Tags('Static tags added to each file'),
          },
        ),
      }),
    }),
  },
);

/**
 * The contract between the CDK stack (infra/) and the functions: entry files, environment names,
 * routes, table keys, limits and the destinations a writer Lambda can serve. It has no runtime
 * dependencies (it re-exports only constants from dependency-free modules), so `cdk synth` loads
 * none of the functions' libraries. infra/ imports this file and nothing else of functions/ or
 * shared/ but the config loader (an eslint rule holds it so).
 */
export { AUDIT_EVENT_PATH, TEST_CONNECTION_PATH } from '../shared/audit/routes.js';
export { IDEMPOTENCY_TABLE_KEYS } from '../shared/idempotency/port.js';
export { SQS_MAX_MESSAGE_BYTES } from '../shared/queue/port.js';
export { RATE_LIMIT_TABLE_KEYS } from '../shared/ratelimit/port.js';

/**
 * Destinations a writer Lambda can serve: tsdb, monsaas, and parquet when it writes to S3. MQTT and
 * the table-file and JSON writers need the premises (a broker, a local directory), so they run on
 * the edge or in local mode only (shared/config/placement.ts has the rule).
 */
export const CLOUD_DESTINATIONS = ['tsdb', 'parquet', 'monsaas'] as const;
export type CloudDestinationName = (typeof CLOUD_DESTINATIONS)[number];

/**
 * The Lambda entry files, relative to the repository root: the audit API, and the writer of each
 * cloud destination. Each writer has its own thin entry over functions/writers/writer.ts, importing
 * only its destination's builder, so each bundle holds one destination's code.
 */
export const ENTRIES = {
  audit: 'functions/audit/lambda.ts',
  writers: {
    tsdb: 'functions/writers/tsdb.ts',
    parquet: 'functions/writers/parquet.ts',
    monsaas: 'functions/writers/monsaas.ts',
  },
} as const satisfies { audit: string; writers: Record<CloudDestinationName, string> };

/** The environment of the functions: one list of names, so the stack and the functions cannot drift apart. */
export const LAMBDA_ENV = {
  /** Path of the resolved config document bundled with the function (BUNDLED_CONFIG_FILE; shared/config/resolved.ts). */
  config: 'SVC_CONFIG',
  /** JSON object: destination name → URL of that destination's SQS queue (the audit API sends to all). */
  eventQueueUrls: 'SVC_EVENT_QUEUE_URLS',
  /** The destination a writer function serves (tsdb, parquet, …). */
  destination: 'SVC_DESTINATION',
  rateLimitTable: 'SVC_RATE_LIMIT_TABLE',
  /** The audit API's idempotency table (set when `auditEvents.idempotency.enable`). */
  idempotencyTable: 'SVC_IDEMPOTENCY_TABLE',
  /** Bucket for queue messages over the SQS size limit (claim checks). */
  claimCheckBucket: 'SVC_CLAIM_CHECK_BUCKET',
} as const;

/** Key prefix of queue claim checks in the claim-check bucket (the stack expires it by lifecycle rule). */
export const CLAIM_CHECK_PREFIX = 'claim-checks/';

/**
 * File name of the config inside a function bundle: the resolved config document synth makes from
 * the YAML config (shared/config/resolved.ts), not the YAML itself.
 */
export const BUNDLED_CONFIG_FILE = 'svc.json';

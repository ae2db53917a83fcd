/**
 * The environment contract between the CDK stack (infra/) and the Lambda entry points: one list of
 * names, so the stack and the functions cannot drift apart.
 */
export const LAMBDA_ENV = {
  /** Path of the YAML config bundled with the function. */
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

/** File name of the config inside a function bundle. */
export const BUNDLED_CONFIG_FILE = 'svc.yaml';

/** A required variable; a missing one is a deployment error worth a clear message at cold start. */
export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`environment variable ${name} is not set (the CDK stack sets it; see infra/)`);
  return value;
}

/** Parses SVC_EVENT_QUEUE_URLS: a JSON object of destination name → queue URL. */
export function queueUrls(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const text = requiredEnv(LAMBDA_ENV.eventQueueUrls, env);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${LAMBDA_ENV.eventQueueUrls} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${LAMBDA_ENV.eventQueueUrls} must be a JSON object of destination → queue URL`);
  const out: Record<string, string> = {};
  for (const [name, url] of Object.entries(value)) {
    if (typeof url !== 'string' || url === '') throw new Error(`${LAMBDA_ENV.eventQueueUrls}.${name} must be a queue URL`);
    out[name] = url;
  }
  return out;
}

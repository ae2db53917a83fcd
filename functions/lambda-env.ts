/**
 * The environment contract between the CDK stack (infra/) and the Lambda entry points: one list of
 * names, so the stack and the functions cannot drift apart.
 */
export const LAMBDA_ENV = {
  /** Path of the YAML config bundled with the function. */
  config: 'SVC_CONFIG',
  eventQueueUrl: 'SVC_EVENT_QUEUE_URL',
  rateLimitTable: 'SVC_RATE_LIMIT_TABLE',
  /** Bucket for queue messages over the SQS size limit (claim checks). */
  claimCheckBucket: 'SVC_CLAIM_CHECK_BUCKET',
} as const;

/** File name of the config inside a function bundle. */
export const BUNDLED_CONFIG_FILE = 'svc.yaml';

/** A required variable; a missing one is a deployment error worth a clear message at cold start. */
export function requiredEnv(name: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = env[name];
  if (!value) throw new Error(`environment variable ${name} is not set (the CDK stack sets it; see infra/)`);
  return value;
}

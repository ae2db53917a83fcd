/** Reading the environment the CDK stack gives the functions (the names are in contract.ts). */
import { LAMBDA_ENV } from './contract.js';

export { BUNDLED_CONFIG_FILE, CLAIM_CHECK_PREFIX, LAMBDA_ENV } from './contract.js';

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
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${LAMBDA_ENV.eventQueueUrls} must be a JSON object of destination → queue URL`);
  const out: Record<string, string> = {};
  for (const [name, url] of Object.entries(value)) {
    if (typeof url !== 'string' || url === '')
      throw new Error(`${LAMBDA_ENV.eventQueueUrls}.${name} must be a queue URL`);
    out[name] = url;
  }
  return out;
}

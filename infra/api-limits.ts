/**
 * The limits of the deployed audit API, from `Svc.auditEvents.aws` and, where a key is 0, derived
 * from the per-IP rate limit (`Svc.auditEvents.rateLimit.maxPerMinute`): the stage's throttling and
 * the audit function's reserved concurrency. docs/deployment.md ("Limits of the audit API on AWS")
 * has the arithmetic.
 */
import type { SvcConfig } from '../shared/config/schema.js';

/** API Gateway's default account quotas for HTTP APIs: a stage limit above them has no effect unless AWS raised them. */
export const ACCOUNT_RATE_QUOTA = 10_000;
export const ACCOUNT_BURST_QUOTA = 5_000;

/**
 * The time a request may hold an audit function instance when its reserved concurrency is derived:
 * several times what a warm request takes (the handler, a DynamoDB round trip or two, an SQS send),
 * so cold starts and slow calls have room.
 */
export const REQUEST_SECONDS_BUDGET = 0.1;
/** The least concurrency a derived reservation gives, so a few cold starts at once do not throttle a slow client. */
export const MIN_DERIVED_CONCURRENCY = 10;
/**
 * Lambda keeps 100 executions of the account's concurrency unreserved; with the default quota of
 * 1,000 a stack can reserve at most this many (fewer if other functions reserve some).
 */
export const DEFAULT_ACCOUNT_RESERVABLE = 900;

/** Stage throttling in API Gateway's terms. */
export interface StageThrottle {
  /** Steady requests per second. */
  rateLimit: number;
  /** Requests admitted at once above the steady rate. */
  burstLimit: number;
}

export interface AuditApiLimits {
  /** Undefined while `aws.throttle.enable` is false. */
  throttle: StageThrottle | undefined;
  /** Undefined while `aws.reservedConcurrency.enable` is false. */
  reservedConcurrency: number | undefined;
  /** What synth should say about them (a reservation an account with the default quota cannot make). */
  notes: string[];
}

/** The stage throttling and reserved concurrency the stack gives the audit API of `config`. */
export function auditApiLimits(config: SvcConfig): AuditApiLimits {
  const audit = config.auditEvents;
  const { throttle, reservedConcurrency } = audit.aws;
  const perMinute = audit.rateLimit.maxPerMinute;
  const rateLimit = throttle.requestsPerSecond || Math.min(perMinute, ACCOUNT_RATE_QUOTA);
  const burstLimit = throttle.burst || Math.min(2 * perMinute, ACCOUNT_BURST_QUOTA);
  const executions =
    reservedConcurrency.executions || Math.max(MIN_DERIVED_CONCURRENCY, Math.ceil(rateLimit * REQUEST_SECONDS_BUDGET));
  const notes: string[] = [];
  if (reservedConcurrency.enable && executions > DEFAULT_ACCOUNT_RESERVABLE)
    notes.push(
      `Svc.auditEvents.aws.reservedConcurrency: ${executions} executions is more than an account with the default concurrency quota (1,000) can reserve (${DEFAULT_ACCOUNT_RESERVABLE}: Lambda keeps 100 unreserved); the deploy fails unless the quota was raised`,
    );
  return {
    throttle: throttle.enable ? { rateLimit, burstLimit } : undefined,
    reservedConcurrency: reservedConcurrency.enable ? executions : undefined,
    notes,
  };
}

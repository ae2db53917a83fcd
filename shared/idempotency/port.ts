/**
 * Port of the audit API's idempotency store: one record per `eventId`, so a client that retries
 * after a lost 202 does not queue its event twice. The flow follows the persistence layer of
 * Powertools for AWS Lambda's idempotency utility (claim in progress → complete | release):
 *
 *   claim(id)        a conditional create; a completed record inside the window means "duplicate",
 *                    a claim held by a concurrent request means "in progress"
 *   complete(id)     once the event is durably queued: the record is kept for the window
 *   release(id)      queueing failed (503): the claim is dropped, so the retry gets through
 *
 * Two adapters: `local.ts` (a log file under the queue directory, for `svc local`) and
 * `dynamodb.ts` (a table with a conditional put and TTL, for Lambda). One contract test runs
 * against both (test/shared/idempotency/contract.ts).
 */

export type Claim =
  | { status: 'claimed' }
  /** The event was queued before, at `receivedAt` (ISO time), within the window. */
  | { status: 'duplicate'; receivedAt: string }
  /** A concurrent request holds the claim and has not finished. */
  | { status: 'in-progress' };

export interface IdempotencyStore {
  claim(key: string, nowMs: number): Promise<Claim>;
  complete(key: string, receivedAt: string, nowMs: number): Promise<void>;
  release(key: string): Promise<void>;
}

/** Attribute names of the DynamoDB adapter's table; the CDK stack uses the same ones (functions/contract.ts). */
export const IDEMPOTENCY_TABLE_KEYS = { partitionKey: 'id', ttlAttribute: 'expiration' } as const;

/** A claim older than this is considered abandoned (its holder crashed) and may be taken over. */
export const CLAIM_TIMEOUT_MS = 30_000;

/** Throws unless `windowSeconds` is a usable window (a positive safe integer). */
export function assertValidWindow(windowSeconds: number): void {
  if (!Number.isSafeInteger(windowSeconds) || windowSeconds < 1)
    throw new RangeError(`the idempotency window must be a positive number of seconds, got ${String(windowSeconds)}`);
}

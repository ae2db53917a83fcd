/**
 * The SQS adapter of the EventQueue port. Events are packed several to a message (codec.ts), the
 * messages sent with SendMessageBatch, and a packed body too large for SQS goes to the claim-check
 * store while the queue carries its reference. Delivery is at least once: a retried entry may
 * have reached the queue before (consumers are idempotent by event id).
 *
 * Limits (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html):
 * a message is at most 1 MiB counting its body AND its attributes (name, type and value); a batch
 * holds at most 10 entries, and the sum of its messages is at most 1 MiB too. The request's own JSON
 * framing is not counted, so the only headroom a body needs is for its attributes.
 */
import { isClockSkewRefusal } from '../aws/clock-skew.js';
import { AwsServiceError } from '../aws/json-client.js';
import type { SqsApi, SqsMessageAttribute } from '../aws/sqs.js';
import type { ClaimCheckRef, ClaimCheckStore } from './claim-check.js';
import { encodeClaimCheck, type PackedBody, packEventBodies } from './codec.js';
import type { QueuedEvent } from './events.js';
import { type EventQueue, eventOf, QueueUnavailableError, type SendableEvent, SQS_MAX_MESSAGE_BYTES } from './port.js';

export { SQS_MAX_MESSAGE_BYTES };

import type { Log } from '../logging/log.js';

export const SQS_MAX_BATCH_BYTES = 1_048_576;
export const SQS_MAX_BATCH_ENTRIES = 10;

export interface SqsEventQueueOptions {
  /** SendMessageBatch (shared/aws/sqs.ts LeanSqsClient; it should make one attempt per call: this adapter retries per entry). */
  client: SqsApi;
  queueUrl: string;
  /** Where bodies larger than a message go; null: such events are refused. */
  claimCheck: ClaimCheckStore | null;
  /** Largest message, body plus attributes (default 1 MiB, SQS's limit; lower it if the queue's MaximumMessageSize is lower). */
  maxMessageBytes?: number;
  /** Attempts per message, the first included (default 5). */
  maxAttempts?: number;
  /** First retry delay; it doubles per attempt, with jitter, up to maxDelayMs (default 100 ms). */
  baseDelayMs?: number;
  /** Longest retry delay (default 5 s). */
  maxDelayMs?: number;
  /** SendMessageBatch requests in flight at once (default 4). */
  concurrency?: number;
  log?: Log;
  /**
   * Level of the line logged for each retry round (default warn). The edge's forwarder says debug:
   * its consumer group reports an outage once, not every retry (local/ DestinationUnavailableError).
   */
  retryLogLevel?: 'warn' | 'debug';
}

/** What the adapter did, for metrics and tests. */
export interface SqsQueueCounters {
  /** SendMessageBatch requests made, retries included. */
  requests: number;
  /** Messages SQS accepted. */
  messages: number;
  /** Events in the messages SQS accepted. */
  events: number;
  /** Messages sent again after a retryable failure. */
  retries: number;
  /** Bodies put in the claim-check store. */
  claimChecks: number;
  /** Events `send` gave up on (it rejected). */
  unsentEvents: number;
}

/** Some events of a `send` are not on the queue; the caller answers 503 or keeps them to send again. */
export class SqsSendError extends QueueUnavailableError {
  override readonly name = 'SqsSendError';
  constructor(
    readonly unsentEvents: number,
    readonly totalEvents: number,
    reasons: readonly string[],
  ) {
    super(`${unsentEvents} of ${totalEvents} events were not sent to SQS: ${reasons.join('; ')}`);
  }
}

/**
 * Events of one `sendEach` that are not on the queue, with why; `retryable`: a later attempt may
 * succeed (SQS or S3 unreachable, throttling, a 5xx), as opposed to a refusal that will repeat.
 */
export interface UnsentEvents {
  ids: string[];
  reason: string;
  retryable: boolean;
}

/** One message to send. */
interface Entry {
  id: string;
  body: string;
  attributes: Record<string, SqsMessageAttribute>;
  /** Body plus attributes, as SQS counts them. */
  bytes: number;
  /** The ids of its events. */
  eventIds: string[];
  /** Set when the body is a claim check. */
  ref?: ClaimCheckRef;
}

interface Failure {
  entry: Entry;
  reason: string;
  retryable: boolean;
}

/** Error names and codes that mean "later": throttling, and transient service or network trouble. */
const RETRYABLE_NAMES = new Set([
  'ThrottlingException',
  'RequestThrottled',
  'KMSThrottlingException',
  'KmsThrottled',
  'KMS.ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'ServiceUnavailable',
  'InternalError',
  'InternalFailure',
  'RequestTimeout',
  'TimeoutError',
  'ECONNRESET',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
]);

/**
 * Is a thrown error worth retrying? An SQS error (AwsServiceError) says so itself (throttling, a
 * transient 5xx, a timeout or a connection error: json-client.ts); for others (the S3 SDK client of
 * the claim-check store, a plain network error) throttling and transient names and codes, HTTP 429
 * or 5xx, the SDK's server fault, or a refusal for the signing time that the SDK's own clock-skew
 * correction did not cure (the events wait rather than count as refused).
 */
export function isRetryableError(err: unknown): boolean {
  if (err instanceof AwsServiceError) return err.retryable;
  if (!(err instanceof Error)) return false;
  if (isClockSkewRefusal(err.name, err.message)) return true;
  if (RETRYABLE_NAMES.has(err.name) || ('code' in err && typeof err.code === 'string' && RETRYABLE_NAMES.has(err.code)))
    return true;
  const status = sdkHttpStatus(err);
  if (status !== undefined && (status === 429 || status >= 500)) return true;
  return ('$fault' in err && err.$fault === 'server') || ('$retryable' in err && err.$retryable !== undefined);
}

/** The HTTP status of an AWS SDK error (the S3 client's). */
function sdkHttpStatus(err: Error): number | undefined {
  if (!('$metadata' in err) || typeof err.$metadata !== 'object' || err.$metadata === null) return undefined;
  return 'httpStatusCode' in err.$metadata && typeof err.$metadata.httpStatusCode === 'number'
    ? err.$metadata.httpStatusCode
    : undefined;
}

function errorText(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}

function attributeBytes(attributes: Record<string, SqsMessageAttribute>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType) + Buffer.byteLength(value.StringValue);
  }
  return bytes;
}

function attributesFor(events: readonly SendableEvent[], count: number): Record<string, SqsMessageAttribute> {
  const kinds = [...new Set(events.map((e) => eventOf(e).kind))].sort().join(',');
  return {
    kind: { DataType: 'String', StringValue: kinds },
    events: { DataType: 'Number', StringValue: String(count) },
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `work` over `items`, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export class SqsEventQueue implements EventQueue {
  private readonly client: SqsApi;
  private readonly queueUrl: string;
  private readonly claimCheck: ClaimCheckStore | null;
  private readonly maxMessageBytes: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly concurrency: number;
  private readonly log: Log | undefined;
  private readonly retryLogLevel: 'warn' | 'debug';
  private readonly count: SqsQueueCounters = {
    requests: 0,
    messages: 0,
    events: 0,
    retries: 0,
    claimChecks: 0,
    unsentEvents: 0,
  };

  constructor(options: SqsEventQueueOptions) {
    this.client = options.client;
    this.queueUrl = options.queueUrl;
    this.claimCheck = options.claimCheck;
    this.maxMessageBytes = options.maxMessageBytes ?? SQS_MAX_MESSAGE_BYTES;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.baseDelayMs = options.baseDelayMs ?? 100;
    this.maxDelayMs = options.maxDelayMs ?? 5000;
    this.concurrency = options.concurrency ?? 4;
    this.log = options.log;
    this.retryLogLevel = options.retryLogLevel ?? 'warn';
    // 1024 is the smallest MaximumMessageSize a queue can have.
    if (
      !Number.isInteger(this.maxMessageBytes) ||
      this.maxMessageBytes < 1024 ||
      this.maxMessageBytes > SQS_MAX_MESSAGE_BYTES
    ) {
      throw new RangeError(
        `maxMessageBytes must be an integer from 1024 to ${SQS_MAX_MESSAGE_BYTES}, not ${this.maxMessageBytes}`,
      );
    }
    if (!Number.isInteger(this.maxAttempts) || this.maxAttempts < 1)
      throw new RangeError(`maxAttempts must be a positive integer, not ${this.maxAttempts}`);
  }

  /** A snapshot of the counters. */
  get counters(): SqsQueueCounters {
    return { ...this.count };
  }

  /**
   * Sends all of `events` or rejects (SqsSendError, or an Error naming what could not be stored):
   * the EventQueue port, for a source that answers its client. Bodies too large for a message are
   * claim-checked before anything is sent, so such a failure sends nothing.
   */
  async send(events: readonly SendableEvent[]): Promise<void> {
    if (events.length === 0) return;
    const { packed, bodyBudget } = this.pack(events);
    const oversize = packed.filter((p) => p.bytes > bodyBudget);
    if (oversize.length > 0 && !this.claimCheck) throw new Error(this.oversizeReason(oversize, bodyBudget));
    const prepared = await this.prepare(packed, bodyBudget);
    const refused = prepared.failures[0];
    if (refused) {
      await this.forget(prepared.entries.flatMap((e) => (e.ref ? [e.ref] : [])));
      throw new Error(refused.reason, { cause: refused.cause });
    }
    const failures = await this.deliver(prepared.entries);
    if (failures.length === 0) return;

    const unsent = failures.reduce((n, f) => n + f.entry.eventIds.length, 0);
    this.count.unsentEvents += unsent;
    const reasons = [...new Set(failures.map((f) => f.reason))].slice(0, 5);
    this.log?.error(
      { queueUrl: this.queueUrl, unsentEvents: unsent, totalEvents: events.length, reasons },
      'events could not be sent to SQS',
    );
    await this.forget(failures.flatMap((f) => (f.entry.ref ? [f.entry.ref] : [])));
    throw new SqsSendError(unsent, events.length, reasons);
  }

  /**
   * Sends what it can of `events` and says which were not sent, and why: for a caller that settles
   * its own messages event by event (the edge's forwarder, forwarder.ts). Never rejects for an
   * event's sake; logs nothing but its retries (the caller reports).
   */
  async sendEach(events: readonly QueuedEvent[]): Promise<UnsentEvents[]> {
    if (events.length === 0) return [];
    const { packed, bodyBudget } = this.pack(events);
    const oversize = this.claimCheck ? [] : packed.filter((p) => p.bytes > bodyBudget);
    const unsent: UnsentEvents[] =
      oversize.length > 0
        ? [
            {
              ids: oversize.flatMap((p) => p.events.map((e) => e.id)),
              reason: this.oversizeReason(oversize, bodyBudget),
              retryable: false,
            },
          ]
        : [];
    const prepared = await this.prepare(
      packed.filter((p) => !oversize.includes(p)),
      bodyBudget,
    );
    for (const f of prepared.failures)
      unsent.push({ ids: f.eventIds, reason: f.reason, retryable: isRetryableError(f.cause) });
    const failures = await this.deliver(prepared.entries);
    for (const f of failures) unsent.push({ ids: f.entry.eventIds, reason: f.reason, retryable: f.retryable });
    this.count.unsentEvents += unsent.reduce((n, u) => n + u.ids.length, 0);
    await this.forget(failures.flatMap((f) => (f.entry.ref ? [f.entry.ref] : [])));
    return unsent;
  }

  /** The events packed into bodies, and the most a body may have (the message limit less the attributes). */
  private pack(events: readonly SendableEvent[]): { packed: PackedBody[]; bodyBudget: number } {
    // The attributes of any message are at most those of all the events together.
    const bodyBudget = this.maxMessageBytes - attributeBytes(attributesFor(events, events.length));
    return { packed: packEventBodies(events, bodyBudget), bodyBudget };
  }

  private oversizeReason(oversize: readonly PackedBody[], bodyBudget: number): string {
    const ids = oversize.flatMap((p) => p.events.map((e) => e.id)).slice(0, 5);
    return `${oversize.length} event(s) do not fit in an SQS message (largest ${Math.max(...oversize.map((p) => p.bytes))} bytes, at most ${bodyBudget}) and no claim-check store is configured: ${ids.join(', ')}`;
  }

  /** Makes the entries; bodies too large are claim-checked first. A body that could not be stored is a failure, the others entries. */
  private async prepare(
    packed: readonly PackedBody[],
    bodyBudget: number,
  ): Promise<{ entries: Entry[]; failures: { eventIds: string[]; reason: string; cause: unknown }[] }> {
    const settled = await Promise.allSettled(
      packed.map(async (p, index): Promise<Entry> => {
        const attributes = attributesFor(p.events, p.events.length);
        let body = p.body;
        let ref: ClaimCheckRef | undefined;
        if (p.bytes > bodyBudget && this.claimCheck) {
          ref = await this.claimCheck.put(p.body);
          this.count.claimChecks += 1;
          body = encodeClaimCheck(ref, p.events.length);
        }
        const bytes = Buffer.byteLength(body) + attributeBytes(attributes);
        return {
          id: `m${index}`,
          body,
          attributes,
          bytes,
          eventIds: p.events.map((e) => e.id),
          ...(ref ? { ref } : {}),
        };
      }),
    );
    const entries: Entry[] = [];
    const failures: { eventIds: string[]; reason: string; cause: unknown }[] = [];
    settled.forEach((s, index) => {
      if (s.status === 'fulfilled') entries.push(s.value);
      else
        failures.push({
          eventIds: packed[index]?.events.map((e) => e.id) ?? [],
          reason: `a body too large for SQS could not be stored in the claim-check store: ${errorText(s.reason)}`,
          cause: s.reason,
        });
    });
    return { entries, failures };
  }

  /** Sends the entries with retries; resolves to those that could not be sent. */
  private async deliver(entries: readonly Entry[]): Promise<Failure[]> {
    const failed: Failure[] = [];
    let pending = entries;
    for (let attempt = 1; ; attempt++) {
      const retry: Failure[] = [];
      await eachLimited(this.batches(pending), this.concurrency, async (batch) => {
        const outcome = await this.sendBatch(batch);
        retry.push(...outcome.retry);
        failed.push(...outcome.failed);
      });
      if (retry.length === 0) return failed;
      if (attempt >= this.maxAttempts) {
        return [
          ...failed,
          ...retry.map((f) => ({
            entry: f.entry,
            reason: `${f.reason} (still failing after ${attempt} attempts)`,
            retryable: true,
          })),
        ];
      }
      const delayMs = this.backoff(attempt);
      this.log?.[this.retryLogLevel](
        {
          queueUrl: this.queueUrl,
          attempt,
          messages: retry.length,
          delayMs,
          reasons: [...new Set(retry.map((f) => f.reason))].slice(0, 3),
        },
        'SQS did not take some messages; retrying',
      );
      await sleep(delayMs);
      this.count.retries += retry.length;
      // Entry order is kept, so a retry packs the same messages into as few requests as before.
      const again = new Set(retry.map((f) => f.entry));
      pending = entries.filter((e) => again.has(e));
    }
  }

  /** Exponential backoff with "equal jitter": half the step fixed, half random. */
  private backoff(attempt: number): number {
    const step = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
    return Math.round(step / 2 + Math.random() * (step / 2));
  }

  /** Groups entries in order into requests of at most 10 entries and 1 MiB in sum. */
  private batches(entries: readonly Entry[]): Entry[][] {
    const out: Entry[][] = [];
    let batch: Entry[] = [];
    let bytes = 0;
    for (const entry of entries) {
      if (batch.length === SQS_MAX_BATCH_ENTRIES || (batch.length > 0 && bytes + entry.bytes > SQS_MAX_BATCH_BYTES)) {
        out.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(entry);
      bytes += entry.bytes;
    }
    if (batch.length > 0) out.push(batch);
    return out;
  }

  /** One SendMessageBatch: which entries to retry, which failed for good. */
  private async sendBatch(batch: readonly Entry[]): Promise<{ retry: Failure[]; failed: Failure[] }> {
    this.count.requests += 1;
    let output;
    try {
      output = await this.client.sendMessageBatch({
        QueueUrl: this.queueUrl,
        Entries: batch.map((e) => ({ Id: e.id, MessageBody: e.body, MessageAttributes: e.attributes })),
      });
    } catch (err) {
      const reason = errorText(err);
      const retryable = isRetryableError(err);
      const failures = batch.map((entry) => ({ entry, reason, retryable }));
      return retryable ? { retry: failures, failed: [] } : { retry: [], failed: failures };
    }
    const open = new Map(batch.map((e) => [e.id, e]));
    for (const ok of output.Successful) {
      const entry = open.get(ok.Id);
      if (!entry) continue;
      open.delete(entry.id);
      this.count.messages += 1;
      this.count.events += entry.eventIds.length;
    }
    const retry: Failure[] = [];
    const failed: Failure[] = [];
    for (const f of output.Failed) {
      const entry = open.get(f.Id);
      if (!entry) continue;
      open.delete(entry.id);
      const reason = `${f.Code}: ${f.Message ?? 'no message'}`;
      // A sender fault (an invalid body, a message too large) fails the same way every time.
      const retryable = !f.SenderFault || RETRYABLE_NAMES.has(f.Code);
      (retryable ? retry : failed).push({ entry, reason, retryable });
    }
    // An entry the response does not mention at all: send it again rather than lose it.
    for (const entry of open.values())
      retry.push({ entry, reason: 'not in the SendMessageBatch response', retryable: true });
    return { retry, failed };
  }

  /** Removes stored bodies whose messages were not sent (best effort: a lifecycle rule expires the rest). */
  private async forget(refs: readonly ClaimCheckRef[]): Promise<void> {
    const store = this.claimCheck;
    if (!store || refs.length === 0) return;
    await Promise.all(
      refs.map(async (ref) => {
        try {
          await store.delete?.(ref);
        } catch (err) {
          this.log?.warn({ err, bucket: ref.bucket, key: ref.key }, 'an unused claim check could not be deleted');
        }
      }),
    );
  }
}

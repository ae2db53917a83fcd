/**
 * Claim checks: a message body too large for the queue is stored here and the queue carries only
 * its reference (the claim-check pattern; SQS's Extended Client Library does the same with S3).
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-s3-messages.html
 *
 * Stored bodies are not deleted by the consumers: a message may be delivered more than once, and a
 * redelivery must still find its body. Expire them with a bucket lifecycle rule on the prefix that
 * outlives the queue's retention period (plus its dead-letter queue's).
 */
import { randomUUID } from 'node:crypto';
import type { S3Client } from '@aws-sdk/client-s3';

/**
 * The S3 commands, imported on first use: a static import of the SDK (left to the Lambda runtime)
 * is hoisted to the top of the bundle and loads the S3 client at every cold start, also in a writer
 * that never meets a claim check.
 */
const s3Commands = () => import('@aws-sdk/client-s3');

/** Where a stored body is. */
export interface ClaimCheckRef {
  bucket: string;
  key: string;
}

/** Stores large message bodies; the ClaimCheckStore port. */
export interface ClaimCheckStore {
  /** Stores `body`; resolves to where it is. */
  put(body: string): Promise<ClaimCheckRef>;
  /** The stored body (rejects if it is gone). */
  get(ref: ClaimCheckRef): Promise<string>;
  /** Removes a stored body (e.g. one whose message could not be sent). */
  delete?(ref: ClaimCheckRef): Promise<void>;
}

export interface S3ClaimCheckStoreOptions {
  client: S3Client;
  bucket: string;
  /** Key prefix, e.g. `claim-checks/` (include the trailing slash). */
  prefix?: string;
  /** Clock for the date part of keys (tests). */
  now?: () => Date;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Claim checks in S3, under keys `<prefix><yyyy>/<mm>/<dd>/<uuid>.json` (UTC date of storing). */
export class S3ClaimCheckStore implements ClaimCheckStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly prefix: string;
  private readonly now: () => Date;

  constructor(options: S3ClaimCheckStoreOptions) {
    this.client = options.client;
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    this.now = options.now ?? (() => new Date());
  }

  /** The key a body stored now gets. */
  private newKey(): string {
    const d = this.now();
    return `${this.prefix}${d.getUTCFullYear()}/${pad(d.getUTCMonth() + 1)}/${pad(d.getUTCDate())}/${randomUUID()}.json`;
  }

  async put(body: string): Promise<ClaimCheckRef> {
    const ref = { bucket: this.bucket, key: this.newKey() };
    const { PutObjectCommand } = await s3Commands();
    await this.client.send(
      new PutObjectCommand({
        Bucket: ref.bucket,
        Key: ref.key,
        Body: body,
        ContentType: 'application/json; charset=utf-8',
      }),
    );
    return ref;
  }

  async get(ref: ClaimCheckRef): Promise<string> {
    const { GetObjectCommand } = await s3Commands();
    const out = await this.client.send(new GetObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
    if (!out.Body) throw new Error(`claim check s3://${ref.bucket}/${ref.key} has no body`);
    return out.Body.transformToString('utf-8');
  }

  async delete(ref: ClaimCheckRef): Promise<void> {
    const { DeleteObjectCommand } = await s3Commands();
    await this.client.send(new DeleteObjectCommand({ Bucket: ref.bucket, Key: ref.key }));
  }
}

/**
 * A ClaimCheckStore built on first use by `create` (which may import its client then): a writer
 * Lambda loads the S3 client only when a message is a claim check, not at cold start. A failed
 * `create` is retried at the next use.
 */
export class LazyClaimCheckStore implements ClaimCheckStore {
  private store: Promise<ClaimCheckStore> | undefined;
  constructor(private readonly create: () => Promise<ClaimCheckStore>) {}

  private resolve(): Promise<ClaimCheckStore> {
    if (this.store === undefined) {
      this.store = this.create();
      this.store.catch(() => (this.store = undefined));
    }
    return this.store;
  }

  async put(body: string): Promise<ClaimCheckRef> {
    return (await this.resolve()).put(body);
  }

  async get(ref: ClaimCheckRef): Promise<string> {
    return (await this.resolve()).get(ref);
  }

  async delete(ref: ClaimCheckRef): Promise<void> {
    await (await this.resolve()).delete?.(ref);
  }
}

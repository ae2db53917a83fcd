/**
 * Storage: the one S3 bucket of a Svc deployment. It holds the parquet files the writers export and
 * the claim checks of the event queue (messages too large for SQS are stored here and the queue
 * carries a reference). Its server access logs go to a second bucket.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, type IBucket, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct, type IConstruct } from 'constructs';
import { CLAIM_CHECK_PREFIX } from '../../functions/contract.js';
import { acknowledgeNag, acknowledgeWildcardResource } from './acknowledge.js';

/**
 * Claim checks must outlive every message that can point at them. A message lives at most 4 days in
 * the event queue and, counted from its first enqueue, 14 days in the dead-letter queue; a dead
 * letter redriven to the event queue is sent anew and gets up to 4 more days. 21 days covers that
 * (S3 expires objects at the first midnight UTC after the given number of days).
 */
export const CLAIM_CHECK_EXPIRY = Duration.days(21);

/** How long the bucket's server access logs are kept. */
export const ACCESS_LOG_EXPIRY = Duration.days(90);
/** Key prefix of the bucket's server access logs in the log bucket. */
export const ACCESS_LOG_PREFIX = 'storage-bucket/';

/**
 * Acknowledges the one wildcard of a claim-check grant to `principal` (a role or user): object keys
 * under the claim-check prefix, which are the events' ids, unknown until they are sent.
 */
export function acknowledgeClaimCheckWildcard(principal: IConstruct, bucket: IBucket): void {
  acknowledgeWildcardResource(
    principal,
    bucket.arnForObjects(`${CLAIM_CHECK_PREFIX}*`),
    'Claim checks are objects under the claim-check prefix named by event ids, unknown until sent: the grant is scoped to that prefix of the stack bucket',
  );
}

export class Storage extends Construct {
  readonly bucket: Bucket;
  /** Receives the server access logs of `bucket`. */
  readonly accessLogsBucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.accessLogsBucket = new Bucket(this, 'AccessLogs', {
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      enforceSSL: true,
      versioned: false,
      // Kept with the bucket it logs: they answer who read or wrote its data.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [{ id: 'ExpireAccessLogs', expiration: ACCESS_LOG_EXPIRY }],
    });
    acknowledgeNag(
      this.accessLogsBucket,
      'S1',
      "This bucket receives the storage bucket's server access logs; logging its own access would need yet another bucket",
    );
    this.bucket = new Bucket(this, 'Bucket', {
      serverAccessLogsBucket: this.accessLogsBucket,
      serverAccessLogsPrefix: ACCESS_LOG_PREFIX,
      encryption: BucketEncryption.S3_MANAGED,
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: false,
      // Exported data must survive a stack deletion; delete the bucket by hand if it is not wanted.
      removalPolicy: RemovalPolicy.RETAIN,
      lifecycleRules: [
        { id: 'ExpireClaimChecks', prefix: CLAIM_CHECK_PREFIX, expiration: CLAIM_CHECK_EXPIRY },
        { id: 'AbortIncompleteUploads', abortIncompleteMultipartUploadAfter: Duration.days(7) },
      ],
    });
  }
}

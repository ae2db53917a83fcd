/**
 * Storage: the one S3 bucket of a Svc deployment. It holds the parquet files the writers export and
 * the claim checks of the event queue (messages too large for SQS are stored here and the queue
 * carries a reference).
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { CLAIM_CHECK_PREFIX } from '../../functions/contract.js';

/**
 * Claim checks must outlive every message that can point at them. A message lives at most 4 days in
 * the event queue and, counted from its first enqueue, 14 days in the dead-letter queue; a dead
 * letter redriven to the event queue is sent anew and gets up to 4 more days. 21 days covers that
 * (S3 expires objects at the first midnight UTC after the given number of days).
 */
export const CLAIM_CHECK_EXPIRY = Duration.days(21);

export class Storage extends Construct {
  readonly bucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
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

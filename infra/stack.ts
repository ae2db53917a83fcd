/** SvcStack: storage, the event pipeline and the ingest API of one Svc deployment. */
import { Stack, type StackProps } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { EventPipeline, WRITER_ENTRY } from './constructs/event-pipeline.js';
import { IngestApi } from './constructs/ingest-api.js';
import { Storage } from './constructs/storage.js';
import type { CloudDestination } from './destinations.js';

export interface SvcStackProps extends StackProps {
  /** The Svc config file, already validated; bundled into every function. */
  configFile: string;
  /** The destinations that get a queue (each audit event goes to all of them). */
  destinations: readonly CloudDestination[];
  /** Receives of an event before it moves to the dead-letter queue. */
  maxReceiveCount: number;
  /** The bucket of `auditEvents.destination.parquet.s3` (when parquet is deployed). */
  parquetBucket?: string | undefined;
  /** Secrets Manager secret (name or ARN) holding the audit API token, if any. */
  auditApiTokenSecret?: string | undefined;
  /** `auditEvents.idempotency.enable`: the audit API gets its idempotency table. */
  idempotency: boolean;
}

export class SvcStack extends Stack {
  readonly storage: Storage;
  readonly pipeline: EventPipeline;
  readonly ingestApi: IngestApi;

  constructor(scope: Construct, id: string, props: SvcStackProps) {
    super(scope, id, props);
    this.storage = new Storage(this, 'Storage');
    this.pipeline = new EventPipeline(this, 'EventPipeline', {
      bucket: this.storage.bucket,
      configFile: props.configFile,
      maxReceiveCount: props.maxReceiveCount,
    });
    for (const { name, ...batching } of props.destinations) {
      this.pipeline.addDestination(name, batching);
      const writer = this.pipeline.addWriter(name, WRITER_ENTRY);
      // The parquet writer puts its files into the bucket the config names.
      if (name === 'parquet' && props.parquetBucket) Bucket.fromBucketName(this, 'ParquetBucket', props.parquetBucket).grantPut(writer);
    }
    this.ingestApi = new IngestApi(this, 'IngestApi', {
      queues: this.pipeline.queues(),
      bucket: this.storage.bucket,
      configFile: props.configFile,
      auditApiTokenSecret: props.auditApiTokenSecret,
      idempotency: props.idempotency,
    });
  }
}

/**
 * SvcStack: storage, the event pipeline and the ingest API of one Svc deployment. Everything in it
 * serves the audit API, so with `auditEvents.enable: false` (`auditApi: false`) it holds nothing:
 * no Svc resources (deployed over an earlier stack it removes them, but the bucket is retained).
 */
import { Stack, type StackProps } from 'aws-cdk-lib';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { EventPipeline, WRITER_ENTRIES } from './constructs/event-pipeline.js';
import { IngestApi } from './constructs/ingest-api.js';
import { grantSecretReads, type SecretGrant } from './constructs/secrets.js';
import { Storage } from './constructs/storage.js';
import type { CloudDestination } from './destinations.js';
import type { SecretRefAt } from '../shared/config/secret-refs.js';

export interface SvcStackProps extends StackProps {
  /** The Svc config file, already validated; bundled into every function. */
  configFile: string;
  /** The destinations that get a queue (each audit event goes to all of them). */
  destinations: readonly CloudDestination[];
  /** Receives of an event before it moves to the dead-letter queue. */
  maxReceiveCount: number;
  /** The bucket of `auditEvents.destination.parquet.s3` (when parquet is deployed). */
  parquetBucket?: string | undefined;
  /** The config's secret references (`${aws-secret:…}`, `${aws-ssm:…}`): each is granted read-only to the functions that fetch it. */
  secretReferences?: readonly SecretRefAt[];
  /** Customer managed KMS keys of referenced secrets (context `secretsKmsKeyArns`). */
  secretsKmsKeyArns?: readonly string[];
  /** `auditEvents.idempotency.enable`: the audit API gets its idempotency table. */
  idempotency: boolean;
  /** `auditEvents.enable`: false deploys no audit API, and so nothing (there must be no destinations). */
  auditApi: boolean;
}

export class SvcStack extends Stack {
  /** Undefined when the audit API is off: then the stack is empty. */
  readonly storage: Storage | undefined;
  readonly pipeline: EventPipeline | undefined;
  readonly ingestApi: IngestApi | undefined;
  /** The read access each function got to referenced secrets. */
  readonly secretGrants: SecretGrant[];

  constructor(scope: Construct, id: string, props: SvcStackProps) {
    super(scope, id, props);
    if (!props.auditApi) {
      // The queues are fed only by the audit API (planDestinations plans none without it); a
      // destination here would be a writer on a queue nobody sends to, so refuse it loudly.
      if (props.destinations.length > 0) throw new Error(`SvcStack: auditApi is false but destinations are given (${props.destinations.map((d) => d.name).join(', ')})`);
      this.storage = undefined;
      this.pipeline = undefined;
      this.ingestApi = undefined;
      this.secretGrants = [];
      return;
    }
    this.storage = new Storage(this, 'Storage');
    this.pipeline = new EventPipeline(this, 'EventPipeline', {
      bucket: this.storage.bucket,
      configFile: props.configFile,
      maxReceiveCount: props.maxReceiveCount,
    });
    for (const { name, concurrency, ...batching } of props.destinations) {
      this.pipeline.addDestination(name, batching);
      // auditEvents.queue.rateLimit: the event source runs at most `concurrency` writers, and the
      // reserved concurrency both guarantees them and keeps any other invoker from adding more.
      const writer = this.pipeline.addWriter(name, WRITER_ENTRIES[name], concurrency === undefined ? {} : { maxConcurrency: concurrency, reservedConcurrentExecutions: concurrency });
      // The parquet writer puts its files into the bucket the config names.
      if (name === 'parquet' && props.parquetBucket) Bucket.fromBucketName(this, 'ParquetBucket', props.parquetBucket).grantPut(writer);
    }
    this.ingestApi = new IngestApi(this, 'IngestApi', {
      queues: this.pipeline.queues(),
      bucket: this.storage.bucket,
      configFile: props.configFile,
      idempotency: props.idempotency,
    });
    this.secretGrants = grantSecretReads(this, {
      references: props.secretReferences ?? [],
      readers: { audit: this.ingestApi.handler, ...Object.fromEntries(this.pipeline.destinations.map((d) => [d.destination, d.writer])) },
      kmsKeyArns: props.secretsKmsKeyArns,
    });
  }
}

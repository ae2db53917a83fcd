/**
 * SvcStack: storage, the event pipeline (a queue and writer per cloud destination), the ingest API,
 * the edge agent's identity, and the alarms of one Svc deployment. With `auditEvents.enable: false`
 * (`auditApi: false`) there is no audit API, but the writers of the platform data the edge forwards
 * are still deployed; with neither the stack holds nothing (deployed over an earlier stack it removes
 * its resources, but the bucket is retained).
 */
import { type Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import { SecurityGroup, Subnet, Vpc } from 'aws-cdk-lib/aws-ec2';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { FORWARDABLE_DESTINATIONS, type ForwardableDestination } from '../shared/config/placement.js';
import type { SecretRefAt } from '../shared/config/secret-refs.js';
import type { AuditApiLimits } from './api-limits.js';
import { acknowledgeWildcardResource } from './constructs/acknowledge.js';
import { Alarms } from './constructs/alarms.js';
import { EdgeAccess } from './constructs/edge-access.js';
import { EventPipeline, WRITER_ENTRIES, type WriterProps } from './constructs/event-pipeline.js';
import { IngestApi } from './constructs/ingest-api.js';
import { grantSecretReads, type SecretGrant } from './constructs/secrets.js';
import { Storage } from './constructs/storage.js';
import type { CloudDestination } from './destinations.js';
import type { WriterVpc } from './settings.js';

export interface SvcStackProps extends StackProps {
  /** Path of the resolved config document (shared/config/resolved.ts) made from the validated config; bundled into every function. */
  configDocument: string;
  /** The destinations that get a queue and a writer (planDestinations). */
  destinations: readonly CloudDestination[];
  /** Receives of an event before it moves to the dead-letter queue. */
  maxReceiveCount: number;
  /** `auditEvents.destination.parquet.s3` (when parquet is deployed): where its files go. */
  parquetBucket?: { bucket: string; prefix: string } | undefined;
  /** The config's secret references (`${aws-secret:…}`, `${aws-ssm:…}`): each is granted read-only to the functions that fetch it. */
  secretReferences?: readonly SecretRefAt[];
  /** Customer managed KMS keys of referenced secrets (context `secretsKmsKeyArns`). */
  secretsKmsKeyArns?: readonly string[];
  /** `auditEvents.idempotency.enable`: the audit API gets its idempotency table. */
  idempotency: boolean;
  /** `auditEvents.enable`: false deploys no audit API (no destination may then take audit events). */
  auditApi: boolean;
  /** `auditEvents.apiToken` is set (the function then refuses requests without it). */
  auditTokenRequired?: boolean;
  /** The audit API's stage throttling and reserved concurrency (auditApiLimits); none: neither is set. */
  auditApiLimits?: Pick<AuditApiLimits, 'throttle' | 'reservedConcurrency'>;
  /** Places the tsdb writer in this VPC (a private tsdb). */
  writerVpc?: WriterVpc | undefined;
  alarms?: { topicArn?: string | undefined; oldestMessageAge?: Duration; api5xxPercent?: number };
}

export class SvcStack extends Stack {
  /** Undefined when nothing is deployed: then the stack is empty. */
  readonly storage: Storage | undefined;
  readonly pipeline: EventPipeline | undefined;
  /** Undefined when the audit API is off. */
  readonly ingestApi: IngestApi | undefined;
  /** The read access each function got to referenced secrets. */
  readonly secretGrants: SecretGrant[];
  /** Undefined when no destination takes platform data (nothing for the edge to forward). */
  readonly edgeAccess: EdgeAccess | undefined;
  readonly alarms: Alarms | undefined;

  constructor(scope: Construct, id: string, props: SvcStackProps) {
    super(scope, id, props);
    const auditTaking = props.destinations.filter((d) => d.audit).map((d) => d.name);
    if (!props.auditApi && auditTaking.length > 0) {
      // Nothing would send audit events to these queues; planDestinations plans none without the API.
      throw new Error(`SvcStack: auditApi is false but destinations take audit events (${auditTaking.join(', ')})`);
    }
    if (!props.auditApi && props.destinations.length === 0) {
      this.storage = undefined;
      this.pipeline = undefined;
      this.ingestApi = undefined;
      this.secretGrants = [];
      this.edgeAccess = undefined;
      this.alarms = undefined;
      return;
    }
    this.storage = new Storage(this, 'Storage');
    this.pipeline = new EventPipeline(this, 'EventPipeline', {
      bucket: this.storage.bucket,
      configDocument: props.configDocument,
      maxReceiveCount: props.maxReceiveCount,
    });
    const auditQueues: Record<string, IQueue> = {};
    const platformQueues: Partial<Record<ForwardableDestination, IQueue>> = {};
    for (const { name, concurrency, audit, platform, ...batching } of props.destinations) {
      const destination = this.pipeline.addDestination(name, batching);
      // auditEvents.queue.rateLimit: the event source runs at most `concurrency` writers, and the
      // reserved concurrency both guarantees them and keeps any other invoker from adding more.
      const writerProps: WriterProps =
        concurrency === undefined ? {} : { maxConcurrency: concurrency, reservedConcurrentExecutions: concurrency };
      // The tsdb writer is the one that may have to reach a private tsdb (docs/deployment.md#vpc-placement).
      if (name === 'tsdb' && props.writerVpc) Object.assign(writerProps, this.vpcPlacement(props.writerVpc));
      const writer = this.pipeline.addWriter(name, WRITER_ENTRIES[name], writerProps);
      // The parquet writer puts its files into the bucket the config names, under its prefix.
      if (name === 'parquet' && props.parquetBucket) {
        const { bucket, prefix } = props.parquetBucket;
        const files = Bucket.fromBucketName(this, 'ParquetBucket', bucket).arnForObjects(`${prefix}*`);
        Grant.addToPrincipal({ grantee: writer, actions: ['s3:PutObject'], resourceArns: [files] });
        acknowledgeWildcardResource(
          writer.executionRole,
          files,
          'The parquet files are objects under Svc.auditEvents.destination.parquet.s3.prefix, named by their events: the grant is scoped to that prefix of the configured bucket',
        );
      }
      if (audit) auditQueues[name] = destination.queue;
      if (platform && isForwardable(name)) platformQueues[name] = destination.queue;
    }
    this.ingestApi = props.auditApi
      ? new IngestApi(this, 'IngestApi', {
          queues: auditQueues,
          bucket: this.storage.bucket,
          configDocument: props.configDocument,
          idempotency: props.idempotency,
          tokenRequired: props.auditTokenRequired ?? false,
          throttle: props.auditApiLimits?.throttle,
          reservedConcurrency: props.auditApiLimits?.reservedConcurrency,
        })
      : undefined;
    this.edgeAccess =
      Object.keys(platformQueues).length > 0
        ? new EdgeAccess(this, 'EdgeAccess', { queues: platformQueues, bucket: this.storage.bucket })
        : undefined;
    this.secretGrants = grantSecretReads(this, {
      references: props.secretReferences ?? [],
      readers: {
        ...(this.ingestApi ? { audit: this.ingestApi.handler } : {}),
        ...Object.fromEntries(this.pipeline.destinations.map((d) => [d.destination, d.writer])),
      },
      kmsKeyArns: props.secretsKmsKeyArns,
    });
    this.alarms = new Alarms(this, 'Alarms', {
      destinations: this.pipeline.destinations,
      api: this.ingestApi?.api,
      auditFunction: this.ingestApi?.handler,
      ...props.alarms,
    });
  }

  /**
   * An existing VPC, imported by id without a lookup (synth stays offline). The subnets are given
   * explicitly, so the VPC's zones are never consulted; the region's list (a deploy-time token)
   * stands in for them.
   */
  private vpcPlacement(settings: WriterVpc): Pick<WriterProps, 'vpc' | 'vpcSubnets' | 'securityGroups'> {
    const vpc = Vpc.fromVpcAttributes(this, 'WriterVpc', { vpcId: settings.vpcId, availabilityZones: Fn.getAzs() });
    return {
      vpc,
      vpcSubnets: { subnets: settings.subnetIds.map((id) => Subnet.fromSubnetId(this, `WriterSubnet-${id}`, id)) },
      // Not mutable: the stack adds no rules to the operator's groups (their egress must reach the tsdb and S3).
      securityGroups: settings.securityGroupIds.map((id) =>
        SecurityGroup.fromSecurityGroupId(this, `WriterSecurityGroup-${id}`, id, { mutable: false }),
      ),
    };
  }
}

function isForwardable(name: string): name is ForwardableDestination {
  return (FORWARDABLE_DESTINATIONS as readonly string[]).includes(name);
}

/**
 * The event pipeline: one SQS queue per destination (tsdb, parquet, monsaas) between the sources (the
 * audit API sends every audit event to the queues of the destinations that take audit events; the
 * edge agent forwards platform data to the others') and that destination's writer function, each
 * with a dead-letter queue for messages the writer keeps failing on. A destination that is down
 * delays only its own queue.
 */
import { CfnOutput, Duration } from 'aws-cdk-lib';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CLAIM_CHECK_PREFIX, ENTRIES, LAMBDA_ENV, SQS_MAX_MESSAGE_BYTES } from '../../functions/contract.js';
import { acknowledgeClaimCheckWildcard } from './storage.js';
import { SvcFunction, type SvcFunctionProps } from './svc-function.js';

export const DEFAULT_MAX_RECEIVE_COUNT = 5;
export const DEFAULT_WRITER_TIMEOUT = Duration.seconds(60);
export const DEFAULT_BATCH_SIZE = 100;
export const DEFAULT_BATCHING_WINDOW = Duration.seconds(5);
/** The writer Lambda entry of each cloud destination: one entry (and bundle) per destination; SVC_DESTINATION checks the wiring. */
export const WRITER_ENTRIES = ENTRIES.writers;

/** Limits of an SQS event source with a batching window. */
export const MAX_BATCH_SIZE = 10_000;
export const MAX_BATCHING_WINDOW = Duration.seconds(300);
/** The largest batch an SQS event source takes without a batching window. */
export const MAX_UNWINDOWED_BATCH_SIZE = 10;

export interface EventPipelineProps {
  /** Holds the claim checks; writers get read access to them. */
  bucket: IBucket;
  /** Path of the resolved config document (shared/config/resolved.ts), bundled into every writer. */
  configDocument: string;
  /** Receives of a message before it moves to the dead-letter queue. Default 5. */
  maxReceiveCount?: number;
  /** Longest timeout a writer may have; the queues' visibility timeout derives from it. Default 60 s. */
  writerTimeout?: Duration;
}

/** How a destination's writer is fed: messages per invocation and the longest wait for a fuller batch. */
export interface DestinationOptions {
  /** 1 to 10,000; default 100. */
  batchSize?: number;
  /** Whole seconds, up to 300 s; default 5 s. 0 (no waiting) allows batches of at most 10. */
  maxBatchingWindow?: Duration;
}

/** The queue and dead-letter queue of one destination. */
export class DestinationQueue extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly batchSize: number;
  readonly maxBatchingWindow: Duration;
  /** Receives of a message before it moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  writer: SvcFunction | undefined;

  constructor(
    scope: Construct,
    readonly destination: string,
    props: DestinationOptions & { maxReceiveCount: number; writerTimeout: Duration },
  ) {
    super(scope, pascal(destination));
    this.batchSize = props.batchSize ?? DEFAULT_BATCH_SIZE;
    this.maxBatchingWindow = props.maxBatchingWindow ?? DEFAULT_BATCHING_WINDOW;
    this.maxReceiveCount = props.maxReceiveCount;
    const window = this.maxBatchingWindow.toSeconds();
    if (!Number.isInteger(this.batchSize) || this.batchSize < 1 || this.batchSize > MAX_BATCH_SIZE) {
      throw new RangeError(
        `destination ${destination}: batchSize must be an integer from 1 to ${MAX_BATCH_SIZE} (got ${this.batchSize})`,
      );
    }
    if (!Number.isInteger(window) || window < 0 || window > MAX_BATCHING_WINDOW.toSeconds()) {
      throw new RangeError(
        `destination ${destination}: maxBatchingWindow must be whole seconds up to ${MAX_BATCHING_WINDOW.toHumanString()} (got ${this.maxBatchingWindow.toHumanString()})`,
      );
    }
    if (window === 0 && this.batchSize > MAX_UNWINDOWED_BATCH_SIZE) {
      throw new RangeError(
        `destination ${destination}: a batchSize above ${MAX_UNWINDOWED_BATCH_SIZE} needs a maxBatchingWindow of at least 1 s (got ${this.batchSize} without one)`,
      );
    }

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
      // The maximum. A standard queue's message keeps its first enqueue time when it moves here, so
      // this must exceed the queue's retention or dead letters would expire on arrival.
      // https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-dead-letter-queues.html
      retentionPeriod: Duration.days(14),
    });
    this.queue = new Queue(this, 'Queue', {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // SQS's largest message (1 MiB), the size the sending adapter packs to; larger events go
      // through a claim check in the bucket.
      maxMessageSizeBytes: SQS_MAX_MESSAGE_BYTES,
      retentionPeriod: Duration.days(4),
      // AWS recommends at least six times the function timeout for a Lambda event source, so a batch
      // is not received again while a throttled or retried invocation still holds it; the batching
      // window is added because the poller already holds messages while it fills a batch.
      // https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-configure.html
      visibilityTimeout: Duration.seconds(6 * props.writerTimeout.toSeconds() + window),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: props.maxReceiveCount },
    });

    // For senders outside the stack (the edge agent) and for watching dead letters.
    new CfnOutput(this, 'QueueUrl', {
      description: `URL of the ${destination} event queue`,
      value: this.queue.queueUrl,
    });
    new CfnOutput(this, 'DeadLetterQueueUrl', {
      description: `URL of the ${destination} dead-letter queue`,
      value: this.deadLetterQueue.queueUrl,
    });
  }
}

/** Props of a writer: everything of an SvcFunction but the config file, which the pipeline gives. */
export type WriterProps = Omit<SvcFunctionProps, 'entry' | 'configDocument'> & {
  /** Concurrent invocations the event source starts, 2 to 1000; default: as many as Lambda scales to. */
  maxConcurrency?: number;
};

export class EventPipeline extends Construct {
  private readonly props: EventPipelineProps;
  private readonly byName = new Map<string, DestinationQueue>();
  readonly writerTimeout: Duration;

  constructor(scope: Construct, id: string, props: EventPipelineProps) {
    super(scope, id);
    this.props = props;
    this.writerTimeout = props.writerTimeout ?? DEFAULT_WRITER_TIMEOUT;
  }

  /** The destinations in the order they were added. */
  get destinations(): DestinationQueue[] {
    return [...this.byName.values()];
  }

  /** Adds the queue (and dead-letter queue) of a destination. */
  addDestination(name: string, options: DestinationOptions = {}): DestinationQueue {
    if (this.byName.has(name)) throw new Error(`destination ${name} was added twice`);
    const destination = new DestinationQueue(this, name, {
      ...options,
      maxReceiveCount: this.props.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT,
      writerTimeout: this.writerTimeout,
    });
    this.byName.set(name, destination);
    return destination;
  }

  /** The queue of each destination, by destination name. */
  queues(): Record<string, Queue> {
    return Object.fromEntries(this.destinations.map((d) => [d.destination, d.queue]));
  }

  /**
   * Adds the writer function of a destination, fed by its queue in batches; it reports failed items
   * (ReportBatchItemFailures) so only those are received again. `entry` is relative to the
   * repository root; the function learns its destination from SVC_DESTINATION.
   */
  addWriter(destination: string, entry: string, props: WriterProps = {}): SvcFunction {
    const target = this.byName.get(destination);
    if (!target)
      throw new Error(
        `writer for ${destination}: no such destination (added: ${[...this.byName.keys()].join(', ') || 'none'})`,
      );
    if (target.writer) throw new Error(`destination ${destination} has a writer already`);
    const timeout = props.timeout ?? this.writerTimeout;
    if (timeout.toSeconds() > this.writerTimeout.toSeconds()) {
      throw new Error(
        `writer for ${destination}: timeout ${timeout.toHumanString()} exceeds the pipeline's writerTimeout ${this.writerTimeout.toHumanString()}, from which the visibility timeout is set`,
      );
    }
    const { maxConcurrency, ...functionProps } = props;
    if (maxConcurrency !== undefined) {
      if (!Number.isInteger(maxConcurrency) || maxConcurrency < 2 || maxConcurrency > 1000) {
        throw new RangeError(
          `writer for ${destination}: maxConcurrency must be an integer from 2 to 1000 (got ${maxConcurrency})`,
        );
      }
      // Fewer reserved than the event source may start would throttle its invocations, and the
      // throttled batches go back to the queue and count towards maxReceiveCount.
      const reserved = functionProps.reservedConcurrentExecutions;
      if (reserved !== undefined && reserved < maxConcurrency) {
        throw new RangeError(
          `writer for ${destination}: reservedConcurrentExecutions ${reserved} is below maxConcurrency ${maxConcurrency}`,
        );
      }
    }
    const writer = new SvcFunction(target, 'Writer', {
      ...functionProps,
      entry,
      configDocument: this.props.configDocument,
      timeout,
      environment: {
        [LAMBDA_ENV.destination]: destination,
        [LAMBDA_ENV.claimCheckBucket]: this.props.bucket.bucketName,
        ...functionProps.environment,
      },
    });
    writer.addEventSource(
      new SqsEventSource(target.queue, {
        batchSize: target.batchSize,
        maxBatchingWindow: target.maxBatchingWindow,
        reportBatchItemFailures: true,
        ...(maxConcurrency === undefined ? {} : { maxConcurrency }),
      }),
    );
    // Read the claim checks, nothing else of the bucket (they are expired by a lifecycle rule, never deleted by readers).
    Grant.addToPrincipal({
      grantee: writer,
      actions: ['s3:GetObject'],
      resourceArns: [this.props.bucket.arnForObjects(`${CLAIM_CHECK_PREFIX}*`)],
    });
    acknowledgeClaimCheckWildcard(writer.executionRole, this.props.bucket);
    target.writer = writer;
    return writer;
  }
}

/** `tsdb` → `Tsdb`: construct ids (and so logical ids) of a destination. */
function pascal(name: string): string {
  return name.replace(/(^|[^A-Za-z0-9]+)([A-Za-z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase());
}

/**
 * fauxqs is the local stand-in for SQS and S3 in tests: an in-memory emulator of their HTTP APIs
 * (npm `fauxqs`), started IN-PROCESS on a free port (no Docker, no child process). It enforces
 * SQS's message and batch size limits and entry-id rules, and answers with the real wire formats,
 * so the AWS SDK clients and Svc's lean SQS client (shared/aws/sqs.ts) talk to it unchanged.
 *
 * Known gaps versus AWS: no fault injection (no throttling, no 5xx), no auth (any credentials are
 * accepted); it listens on all interfaces (0.0.0.0), not only loopback, and it rejects message
 * bodies with characters outside the Basic Multilingual Plane (e.g. emoji), which SQS accepts.
 */
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { type FauxqsServer, startFauxqs as startEmulator } from 'fauxqs';
import { LeanSqsClient } from '../../shared/aws/sqs.js';
import { LOOPBACK } from './ports.js';

export interface FauxqsHandle {
  /** `http://127.0.0.1:<port>` */
  endpoint: string;
  port: number;
  server: FauxqsServer;
  /** The AWS SDK's client, for what plays the far side (creating queues, receiving like Lambda's event source). */
  sqs: SQSClient;
  /** Svc's own SQS client (the one the audit Lambda and the forwarder send with), one attempt per call. */
  sqsApi: LeanSqsClient;
  s3: S3Client;
  /** Creates a queue (attributes as in CreateQueue, e.g. MaximumMessageSize); resolves to its URL. */
  createQueue(name: string, attributes?: Record<string, string>): Promise<string>;
  createBucket(name: string): Promise<void>;
  /** Closes the clients and the server (idempotent). */
  stop(): Promise<void>;
}

/** Svc's own SQS client for a local endpoint (fauxqs, or a port where nothing listens): one attempt per call, any credentials. */
export function localSqsClient(endpoint: string): LeanSqsClient {
  return new LeanSqsClient({
    region: 'us-east-1',
    credentials: () => Promise.resolve({ accessKeyId: 'local', secretAccessKey: 'local' }),
    endpoint,
    maxAttempts: 1,
  });
}

/**
 * Starts fauxqs with SQS and S3 clients for it, on a port the OS picks, or on `port` (an outage
 * test restarts it where its clients expect it: a new, empty emulator, whose queues and buckets
 * must be created again).
 */
export async function startFauxqs(options: { port?: number } = {}): Promise<FauxqsHandle> {
  const server = await startEmulator({ port: options.port ?? 0, logger: false });
  const endpoint = `http://${LOOPBACK}:${server.port}`;
  const common = {
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // A local emulator either answers or is broken: no SDK retries, so failures show up at once
    // (and the adapter's own retries are the only ones under test).
    maxAttempts: 1,
  };
  const sqs = new SQSClient(common);
  const sqsApi = localSqsClient(endpoint);
  const s3 = new S3Client({ ...common, forcePathStyle: true });

  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    port: server.port,
    server,
    sqs,
    sqsApi,
    s3,
    async createQueue(name, attributes) {
      const out = await sqs.send(
        new CreateQueueCommand({ QueueName: name, ...(attributes ? { Attributes: attributes } : {}) }),
      );
      if (!out.QueueUrl) throw new Error(`fauxqs returned no URL for queue ${name}`);
      return out.QueueUrl;
    },
    async createBucket(name) {
      await s3.send(new CreateBucketCommand({ Bucket: name }));
    },
    stop() {
      stopped ??= (async () => {
        sqs.destroy();
        sqsApi.destroy();
        s3.destroy();
        await server.stop();
      })();
      return stopped;
    },
  };
}

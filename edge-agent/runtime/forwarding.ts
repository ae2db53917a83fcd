/**
 * The edge's way to the cloud (`Svc.cloud`, docs/deployment.md "The edge agent joining a cloud
 * deployment"): for each platform destination `platformPlacement` puts in the cloud, a Forwarder
 * (shared/queue/forwarder.ts) that sends its events to the destination's SQS queue, with claim checks
 * in `Svc.cloud.claimCheck.bucket`. One SQS client (the lean one, shared/aws/sqs.ts, as in the audit
 * Lambda) and one S3 client (the AWS SDK's) for all of them.
 *
 * Clients: `region`; `endpoint` when set (an emulator or a VPC endpoint; S3 then path-style, which
 * emulators need), else the queue URL's origin for SQS; credentials from the profile
 * `Svc.cloud.profile` when set, else the SDK's default chain (cloud-identity.ts). The SQS client
 * makes one attempt per request: SqsEventQueue retries itself, per entry, and counts it; S3 keeps
 * the SDK's retries (a claim-check put has no retry of its own). Timeouts bound a request to a host
 * that does not answer, so an outage is noticed, not waited on. Both go through the process's proxy
 * (shared/runtime/proxy.ts: the lean client's agents take it; the S3 client's are given it), and both
 * correct a skewed clock (the SDK its own way, the lean client with shared/aws/clock-skew.ts, whose
 * one WARN per correction goes to the service log from here).
 */
import { S3Client } from '@aws-sdk/client-s3';
import { awsClock } from '../../shared/aws/clock-skew.js';
import { LeanSqsClient, type SqsApi } from '../../shared/aws/sqs.js';
import { platformPlacement } from '../../shared/config/placement.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import type { Log } from '../../shared/logging/log.js';
import { S3ClaimCheckStore } from '../../shared/queue/claim-check.js';
import type { QueuedEvent } from '../../shared/queue/events.js';
import { Forwarder } from '../../shared/queue/forwarder.js';
import { SqsEventQueue } from '../../shared/queue/sqs.js';
import { sdkProxyAgents } from '../../shared/runtime/proxy.js';
import { cloudIdentity } from './cloud-identity.js';

/** Longest wait for a connection, and for an answer, of one request to SQS or S3. */
const CONNECT_TIMEOUT_MS = 5_000;
const REQUEST_TIMEOUT_MS = 30_000;

export interface CloudClients {
  sqs: SqsApi;
  s3: S3Client;
}

/** The SQS and S3 clients of `Svc.cloud`. */
export function cloudClients(cloud: SvcConfig['cloud']): CloudClients {
  const identity = cloudIdentity(cloud);
  const endpoint = cloud.endpoint ? { endpoint: cloud.endpoint } : {};
  return {
    sqs: new LeanSqsClient({
      ...identity,
      ...endpoint,
      maxAttempts: 1,
      connectTimeoutMs: CONNECT_TIMEOUT_MS,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
    }),
    s3: new S3Client({
      ...identity,
      ...endpoint,
      requestHandler: {
        connectionTimeout: CONNECT_TIMEOUT_MS,
        requestTimeout: REQUEST_TIMEOUT_MS,
        ...sdkProxyAgents(),
      },
      ...(cloud.endpoint ? { forcePathStyle: true } : {}),
    }),
  };
}

/**
 * The forwarders of `svc edge`, by destination name: one for every platform destination placed in
 * the cloud. `takes` says which events a destination takes (its Destination's own rule).
 */
export function forwarders(
  config: SvcConfig,
  log: Log,
  takes: ReadonlyMap<string, (event: QueuedEvent) => boolean>,
  clients: () => CloudClients,
): Map<string, Forwarder> {
  const out = new Map<string, Forwarder>();
  const cloud = platformPlacement(config).filter((p) => p.place === 'cloud');
  if (cloud.length === 0) return out;
  awsClock.reportTo(log);
  const { sqs, s3 } = clients();
  const { bucket, prefix } = config.cloud.claimCheck;
  const claimCheck = bucket === '' ? null : new S3ClaimCheckStore({ client: s3, bucket, prefix });
  for (const { name, queueUrl } of cloud) {
    const taken = takes.get(name);
    if (!taken || !queueUrl) continue;
    const queue = new SqsEventQueue({ client: sqs, queueUrl, claimCheck, log, retryLogLevel: 'debug' });
    out.set(name, new Forwarder({ name, queue, takes: taken, log }));
    log.info(
      { destination: name, queueUrl, claimCheckBucket: bucket || null },
      `${name}: forwarded to the cloud (SQS ${queueUrl}${bucket ? `, claim checks in s3://${bucket}/${prefix}` : ', no claim-check bucket: an event over 1 MiB goes to the dead-letter folder'}); not written by this edge agent`,
    );
  }
  return out;
}

/**
 * Lambda entry of a writer: triggered by its destination's SQS queue (partial batch responses on),
 * it runs the same writer handler as local mode. Which destination it serves comes from
 * SVC_DESTINATION; the stack creates one function per destination. The destination takes every kind
 * the config routes to it (cloudWriterDestination); its queue carries nothing else, so an event of
 * another kind is an error (batch item failure, then the dead-letter queue), never acknowledged unwritten.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { S3ClaimCheckStore } from '../../shared/queue/claim-check.js';
import { PointClock } from '../../shared/destinations/tsdb/line-protocol.js';
import { CLAIM_CHECK_PREFIX, LAMBDA_ENV, requiredEnv } from '../lambda-env.js';
import { lambdaRuntime } from '../lambda-runtime.js';
import { cloudWriterDestination } from '../../shared/destinations/registry.js';
import { CLOUD_DESTINATIONS } from '../contract.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';

const name = requiredEnv(LAMBDA_ENV.destination);
// The secrets this destination's writer is granted (the tsdb credentials, the monitoring SaaS keys).
const { config, logger, errors } = await lambdaRuntime(name);
if (!(CLOUD_DESTINATIONS as readonly string[]).includes(name)) throw new Error(`${LAMBDA_ENV.destination}=${name}: writer functions serve ${CLOUD_DESTINATIONS.join(', ')}`);
const destination = cloudWriterDestination({ config, logger, errors, clock: new PointClock() }, name);
if (!destination) throw new Error(`destination ${name} takes nothing in the bundled config (Svc.auditEvents.destination, and for tsdb Svc.tsdbConfig with the platform kinds routed to it)`);

export const handler = makeWriterHandler({
  destination,
  onlyTakenKinds: true,
  claimCheck: new S3ClaimCheckStore({ client: new S3Client({}), bucket: requiredEnv(LAMBDA_ENV.claimCheckBucket), prefix: CLAIM_CHECK_PREFIX }),
  log: logger,
});

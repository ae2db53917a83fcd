/**
 * Lambda entry of a writer: triggered by its destination's SQS queue (partial batch responses on),
 * it runs the same writer handler as local mode. Which destination it serves comes from
 * SVC_DESTINATION; the stack creates one function per destination.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { S3ClaimCheckStore } from '../../shared/queue/claim-check.js';
import { PointClock } from '../../shared/destinations/tsdb/line-protocol.js';
import { CLAIM_CHECK_PREFIX, LAMBDA_ENV, requiredEnv } from '../lambda-env.js';
import { lambdaRuntime } from '../lambda-runtime.js';
import { auditDestinations } from '../../shared/destinations/registry.js';
import { CLOUD_DESTINATIONS } from '../contract.js';
import { makeWriterHandler } from '../../shared/destinations/handler.js';

const { config, logger, errors } = await lambdaRuntime();
const name = requiredEnv(LAMBDA_ENV.destination);
if (!(CLOUD_DESTINATIONS as readonly string[]).includes(name)) throw new Error(`${LAMBDA_ENV.destination}=${name}: writer functions serve ${CLOUD_DESTINATIONS.join(', ')}`);
const configured = auditDestinations({ config, logger, errors, clock: new PointClock() }).find((d) => d.destination.name === name);
if (!configured) throw new Error(`destination ${name} is not enabled in the bundled config (Svc.auditEvents.destination)`);

export const handler = makeWriterHandler({
  destination: configured.destination,
  claimCheck: new S3ClaimCheckStore({ client: new S3Client({}), bucket: requiredEnv(LAMBDA_ENV.claimCheckBucket), prefix: CLAIM_CHECK_PREFIX }),
  log: logger,
});

/**
 * Lambda entry of a writer: triggered by its destination's SQS queue (partial batch responses on),
 * it runs the same writer handler as local mode. Which destination it serves comes from
 * SVC_DESTINATION; the stack creates one function per destination.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { loadConfigFile } from '../../shared/config/load.js';
import { secretValues } from '../../shared/config/secrets.js';
import { ErrorTracker } from '../../shared/errors/tracker.js';
import { createLogger } from '../../shared/logging/logger.js';
import { S3ClaimCheckStore } from '../../shared/queue/claim-check.js';
import { PointClock } from '../../shared/tsdb/line-protocol.js';
import { TsdbWriter } from '../../shared/tsdb/writer.js';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV, requiredEnv } from '../lambda-env.js';
import { auditDestinations, CLOUD_DESTINATIONS } from './destinations.js';
import { makeWriterHandler } from './handler.js';

const { config } = loadConfigFile(process.env[LAMBDA_ENV.config] ?? BUNDLED_CONFIG_FILE, 'SVC_CONFIG');
const { logger } = await createLogger({ level: config.logLevel, pretty: false, secrets: secretValues(config) });
const errors = new ErrorTracker({ enabled: config.errorTracking.enable, log: logger });
const name = requiredEnv(LAMBDA_ENV.destination);
if (!(CLOUD_DESTINATIONS as readonly string[]).includes(name)) throw new Error(`${LAMBDA_ENV.destination}=${name}: writer functions serve ${CLOUD_DESTINATIONS.join(', ')}`);
const s3 = new S3Client({});
const configured = auditDestinations(config, logger, {
  s3Client: () => s3,
  clock: new PointClock(),
  errors,
  tsdb: () => new TsdbWriter({ config: config.tsdbConfig, log: logger, onError: (type, module, err) => errors.track(type, err, { module }) }),
}).find((d) => d.destination.name === name);
if (!configured) throw new Error(`destination ${name} is not enabled in the bundled config (Svc.auditEvents.destination)`);

export const handler = makeWriterHandler({
  destination: configured.destination,
  claimCheck: new S3ClaimCheckStore({ client: s3, bucket: requiredEnv(LAMBDA_ENV.claimCheckBucket), prefix: 'claim-checks/' }),
  log: logger,
});

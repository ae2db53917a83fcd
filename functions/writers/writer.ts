/**
 * What every writer Lambda entry shares (tsdb.ts, parquet.ts, monsaas.ts): triggered by its
 * destination's SQS queue (partial batch responses on), it runs the same writer handler as local
 * mode over the destination its builder makes from the bundled config. Each entry passes its own
 * builder, so its bundle holds only that destination's code. The destination takes every kind the
 * config routes to it; its queue carries nothing else, so an event of another kind is an error (batch
 * item failure, then the dead-letter queue), never acknowledged unwritten.
 *
 * Every writer reads claim checks (a packed message over the SQS limit is in S3); the S3 client is
 * imported and built at the first claim check (LazyClaimCheckStore), not at cold start.
 */
import type { DestinationContext } from '../../shared/destinations/build.js';
import { makeWriterHandler, type WriterHandler } from '../../shared/destinations/handler.js';
import type { BaseDestination } from '../../shared/destinations/port.js';
import { PointClock } from '../../shared/queue/point-clock.js';
import type { CloudDestinationName } from '../contract.js';
import { LAMBDA_ENV, requiredEnv } from '../lambda-env.js';
import { lambdaRuntime, lazyClaimChecks } from '../lambda-runtime.js';

/** What each destination's entry says about itself: its name and its builder. */
export interface WriterEntry {
  name: CloudDestinationName;
  build: (ctx: DestinationContext) => BaseDestination | null;
  /** What the config must route to the destination, for the message when it routes nothing. */
  needs: string;
}

/** The writer's handler, built once per container (at the entry's module scope). */
export async function writerHandler({ name, build, needs }: WriterEntry): Promise<WriterHandler> {
  // The stack sets SVC_DESTINATION to the destination whose entry it bundled; another value is a wiring error.
  const configured = requiredEnv(LAMBDA_ENV.destination);
  // The secrets this destination's writer is granted (the tsdb credentials, the monitoring SaaS keys).
  const { config, logger, errors } = await lambdaRuntime(name);
  if (configured !== name)
    throw new Error(
      `${LAMBDA_ENV.destination}=${configured}, but this is the ${name} writer's bundle (functions/contract.ts ENTRIES.writers maps each destination to its entry)`,
    );
  const destination = build({ config, logger, errors, clock: new PointClock() });
  if (!destination) throw new Error(`destination ${name} takes nothing in the bundled config (${needs})`);
  return makeWriterHandler({
    destination,
    onlyTakenKinds: true,
    claimCheck: lazyClaimChecks(requiredEnv(LAMBDA_ENV.claimCheckBucket)),
    log: logger,
  });
}

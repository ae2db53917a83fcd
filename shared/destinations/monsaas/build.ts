/**
 * The monsaas destination of the platform kinds `platformOutputs` routes to the monitoring SaaS
 * (§0.6, §8): one builder for local mode, the edge agent and the monsaas writer Lambda. With
 * scrambling on and no `scrambleSecret`, the random key is made here, once per process (§8.4, with
 * its WARN).
 */
import { type PlatformOutputs, platformOutputs } from '../../config/outputs.js';
import type { ConfiguredDestination, DestinationContext } from '../build.js';
import { MonSaasWriter } from './client.js';
import { MonSaasDestination } from './destination.js';
import { monSaasAttributeOptions, monSaasMetricOptions, resolveScrambleKey } from './mappers.js';

/** One queue message per delivery, no waiting (build.ts EDGE_EVENTS_PER_MESSAGE says why). */
export const MONSAAS_BATCH = { batchSize: 1, batchWindowMs: 0 } as const;

/** The destination, batched for a queue, or null when no platform kind goes to monsaas. */
export function monSaasDestination(ctx: DestinationContext, outputs: PlatformOutputs): ConfiguredDestination | null {
  const destination = buildMonSaas(ctx, outputs);
  return destination === null ? null : { destination, ...MONSAAS_BATCH };
}

/** The monsaas writer Lambda's destination: the same as local mode's, taking the platform kinds routed to monsaas; null when none is. */
export function monSaasWriterDestination(ctx: DestinationContext): MonSaasDestination | null {
  return buildMonSaas(ctx, platformOutputs(ctx.config));
}

function buildMonSaas(
  { config, logger: log, errors }: DestinationContext,
  outputs: PlatformOutputs,
): MonSaasDestination | null {
  if (!(outputs.userEvents.monsaas || outputs.logEvents.monsaas || outputs.health.monsaas || outputs.sessions.monsaas))
    return null;
  const writer = new MonSaasWriter({
    settings: config.monsaas,
    credentials: config.thirdPartyToolsCredentials.monsaas,
    log,
    errors,
  });
  const userSend = config.userEvents.sendToMonSaas;
  const metricAccounts = config.monsaas.metric.destinationAccount;
  return new MonSaasDestination({
    writer,
    userEvents: outputs.userEvents.monsaas
      ? {
          accounts: userSend.destinationAccount,
          options: {
            ...monSaasAttributeOptions(config, config.userEvents.tags),
            scrambleKey: userSend.scramble ? resolveScrambleKey(userSend.scrambleSecret, log) : null,
          },
        }
      : null,
    logEvents: outputs.logEvents.monsaas
      ? {
          accounts: config.logEvents.sendToMonSaas.destinationAccount,
          options: {
            ...monSaasAttributeOptions(config, config.logEvents.tags),
            sources: config.logEvents.sendToMonSaas.source,
          },
        }
      : null,
    health: outputs.health.monsaas
      ? {
          accounts: metricAccounts,
          options: { ...monSaasMetricOptions(config, 'health'), flags: config.monsaas.metric.dynamic },
        }
      : null,
    sessions: outputs.sessions.monsaas
      ? { accounts: metricAccounts, options: monSaasMetricOptions(config, 'sessions') }
      : null,
    log,
  });
}

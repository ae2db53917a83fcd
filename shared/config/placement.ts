/**
 * Where each destination runs: on the edge agent (next to the platform) or in the cloud deployment
 * (a writer Lambda behind an SQS queue). One rule, used by the edge agent at start, by
 * `svc validate-config` and by the CDK app at synth:
 *
 * - A destination that needs the premises runs on the edge only: MQTT (an on-premises broker), the
 *   table-file and JSON writers and parquet without S3 (a local directory).
 * - tsdb, monsaas and parquet on S3 can run in the cloud. In `svc edge` with `Svc.cloud.enable`, the
 *   platform destinations whose queue `Svc.cloud.queues` names run in the cloud: the edge forwards
 *   their events to that queue. Every other destination runs on the edge, as without `Svc.cloud`.
 * - `svc local` runs every destination itself.
 */

import type { RuleFinding } from './errors.js';
import { quote } from './errors.js';
import { platformOutputs } from './outputs.js';
import type { SvcConfig } from './schema.js';

export type Place = 'edge' | 'cloud';

/** The platform destinations whose events the edge can forward: the keys of `Svc.cloud.queues`. */
export const FORWARDABLE_DESTINATIONS = ['tsdb', 'monsaas'] as const;
export type ForwardableDestination = (typeof FORWARDABLE_DESTINATIONS)[number];

/** The destinations of platform data (user and log events, polled samples, the edge's points). */
export type PlatformDestinationName = 'tsdb' | 'mqtt' | 'monsaas';

/** The platform destinations some kind of platform data goes to (§0.6), in the order tsdb, mqtt, monsaas. */
export function platformDestinationNames(config: SvcConfig): PlatformDestinationName[] {
  const o = platformOutputs(config);
  const kinds = [o.userEvents, o.logEvents, o.health, o.sessions];
  const names: PlatformDestinationName[] = [];
  if (o.points || kinds.some((k) => k.tsdb)) names.push('tsdb');
  if (kinds.some((k) => k.mqtt)) names.push('mqtt');
  if (kinds.some((k) => k.monsaas)) names.push('monsaas');
  return names;
}

/**
 * Why destination `name` cannot run in the cloud, or null when it can. `name` is a platform
 * destination or an audit destination type (tsdb, parquet, tablefile, json).
 */
export function cloudObstacle(config: SvcConfig, name: string): string | null {
  switch (name) {
    case 'mqtt':
      return 'it publishes to an on-premises MQTT broker (Svc.mqttConfig)';
    case 'tablefile':
    case 'json':
      return 'it writes files to a local directory';
    case 'parquet':
      return config.auditEvents.destination.parquet.s3.enable
        ? null
        : 'it writes files to a local directory (Svc.auditEvents.destination.parquet.s3.enable is false)';
    case 'tsdb':
      return isLoopback(config.tsdbConfig.host)
        ? `Svc.tsdbConfig.host is ${quote(config.tsdbConfig.host)}, which a Lambda function cannot reach (a loopback address)`
        : null;
    default:
      return null;
  }
}

/** Where one platform destination runs in `svc edge`, and the queue it is forwarded to. */
export interface DestinationPlace {
  name: PlatformDestinationName;
  place: Place;
  /** The SQS queue URL, for place `cloud`. */
  queueUrl?: string;
}

/** The one rule, for `svc edge`: each platform destination in use, and where it runs. */
export function platformPlacement(config: SvcConfig): DestinationPlace[] {
  return platformDestinationNames(config).map((name): DestinationPlace => {
    const url = config.cloud.enable && isForwardable(name) ? config.cloud.queues[name] : '';
    return url === '' ? { name, place: 'edge' } : { name, place: 'cloud', queueUrl: url };
  });
}

function isForwardable(name: string): name is ForwardableDestination {
  return (FORWARDABLE_DESTINATIONS as readonly string[]).includes(name);
}

/**
 * The placement problems of a config, for `svc validate-config` and the start of `svc edge`: a
 * forwarding switched on without a queue, and a queue named for a destination that gets nothing.
 */
export function placementFindings(config: SvcConfig): RuleFinding[] {
  if (!config.cloud.enable) return [];
  const out: RuleFinding[] = [];
  const named = FORWARDABLE_DESTINATIONS.filter((name) => config.cloud.queues[name] !== '');
  if (named.length === 0) {
    out.push({
      severity: 'error',
      path: ['cloud', 'queues'],
      message: `names no queue: set the queue URL of at least one cloud destination (${FORWARDABLE_DESTINATIONS.join(', ')}), as the stack output EdgeConfig prints them, or turn Svc.cloud.enable off`,
    });
  }
  const inUse = new Set<string>(platformDestinationNames(config));
  for (const name of named) {
    if (!inUse.has(name)) {
      out.push({
        severity: 'warning',
        path: ['cloud', 'queues', name],
        message: `is set, but no platform data goes to ${name} with this config (is Svc.${name === 'tsdb' ? 'tsdbConfig' : 'monsaas'}.enable on, with a feature sending to it?): nothing is forwarded to this queue`,
      });
    }
  }
  return out;
}

/**
 * Synth-time notes: every destination the config enables (audit destinations and platform
 * destinations) that cannot run in the cloud, and why; the stack deploys no writer for it.
 */
export function edgeOnlyDestinations(
  config: SvcConfig,
  auditTypes: readonly string[],
): { name: string; reason: string }[] {
  const names = [...new Set([...auditTypes, ...platformDestinationNames(config)])];
  return names.flatMap((name) => {
    const reason = cloudObstacle(config, name);
    return reason === null ? [] : [{ name, reason }];
  });
}

/** localhost, 127.0.0.0/8, ::1 (and their bracketed forms). */
function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/**
 * THE config schema: the single source of the config's TypeScript types, defaults, validation and
 * `docs/configuration.md`. Keys follow ../shared/spec/configuration-reference.md, the audit API keys of
 * ARCHITECTURE.md and the keys platform-formats.md adds. Where the reference shows a dash the
 * default here is ours; docs/configuration.md lists every one.
 *
 * The root is assembled here from the sections in `sections/`, one file per section or per small
 * group of related ones, each built from `builders.ts` alone. To add a section:
 * 1. write it in `sections/<name>.ts` (or in the file of its group) as `export const <key> = …`,
 *    importing only `../builders.js` and, where it reuses one, a sibling section's builder;
 * 2. list `<key>` below where it belongs: this order is the key order of docs/configuration.md and
 *    config/full.yaml, so a new key goes where a reader looks for it and the others keep their place;
 * 3. run `npm run docs:config` and commit the two regenerated files (a test fails while they are stale).
 */
import { type Static, Type } from '@sinclair/typebox';
import { Section } from './builders.js';
import { alerts } from './sections/alerts.js';
import { auditEvents } from './sections/audit-events.js';
import { cloud } from './sections/cloud.js';
import { crashFile, errorTracking, fileLogging, logDirectory, logLevel } from './sections/diagnostics.js';
import { configVisualisation, containerHealthCheck, metricsEndpoint } from './sections/endpoints.js';
import { localQueue } from './sections/local-queue.js';
import { logEvents } from './sections/log-events.js';
import { monsaas, thirdPartyToolsCredentials } from './sections/monsaas.js';
import { mqttConfig } from './sections/mqtt.js';
import { appNames, cert, serversToMonitor, userSessions } from './sections/platform.js';
import { platformEvents } from './sections/platform-events.js';
import { proxy } from './sections/proxy.js';
import { anonTelemetry, anonTelemetrySettings, heartbeat, systemInfo, uptimeMonitor } from './sections/self-report.js';
import { store } from './sections/store.js';
import { tsdbConfig } from './sections/tsdb.js';
import { userEvents } from './sections/user-events.js';

export { AUDIT_DESTINATION_TYPES, type AuditDestinationType } from './sections/audit-events.js';

/** Everything under the root key `Svc`. */
export const SvcConfigSchema = Section('Svc configuration', {
  logLevel,
  fileLogging,
  logDirectory,
  anonTelemetry,
  anonTelemetrySettings,
  crashFile,
  auditEvents,
  localQueue,
  store,
  alerts,
  cloud,
  proxy,
  configVisualisation,
  systemInfo,
  heartbeat,
  containerHealthCheck,
  uptimeMonitor,
  thirdPartyToolsCredentials,
  platformEvents,
  userEvents,
  logEvents,
  cert,
  mqttConfig,
  monsaas,
  metricsEndpoint,
  tsdbConfig,
  errorTracking,
  appNames,
  userSessions,
  serversToMonitor,
});

export const ConfigFileSchema = Type.Object({ Svc: SvcConfigSchema }, { additionalProperties: false });

/** The loaded, validated config: every key present, defaults applied. */
export type SvcConfig = Static<typeof SvcConfigSchema>;

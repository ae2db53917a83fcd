/**
 * What the service tells about itself and its host: host information (`systemInfo`), anonymous
 * telemetry (`anonTelemetry`, a key of the root itself, and where it goes: `anonTelemetrySettings`), heartbeats and uptime messages.
 */
import {
  Bool,
  Feature,
  Flag,
  HTTP_URL,
  LogLevel,
  NameValues,
  Required,
  Schedule,
  Section,
  Str,
  StringList,
} from '../builders.js';

export const systemInfo = Flag(
  true,
  'Gather detailed host information by running OS commands; false where command execution is restricted',
);
export const anonTelemetry = Bool(
  false,
  'Share anonymous data about the service with its project; requires systemInfo.enable',
);

/**
 * Where the telemetry of `anonTelemetry` goes (Svc choice: the spec leaves the destination to Svc).
 * No default: the project runs no collector, so a user who turns telemetry on names the one it goes
 * to, and a switch that is on always sends somewhere real.
 */
export const anonTelemetrySettings = Section(
  'Where anonymous telemetry goes (used only when anonTelemetry is true; docs/self-report.md lists what is sent)',
  {
    url: Str(
      '',
      'URL the telemetry is POSTed to (JSON), at start and every 12 hours; required when anonTelemetry is true',
      HTTP_URL,
    ),
  },
);

export const heartbeat = Feature("'Alive' calls to a URL", false, 'Send heartbeats', {
  remoteURL: Required('URL called at each heartbeat (GET)', HTTP_URL),
  frequency: Schedule('every 1 hour', 'How often (text schedule)'),
});

export const uptimeMonitor = Feature('Uptime and memory messages', true, 'Log uptime and memory use', {
  frequency: Schedule('every 15 minutes', 'How often (text schedule)'),
  logLevel: LogLevel('verbose', 'Level of the messages'),
  storeInTsdb: Section('Memory use in the tsdb', {
    svcMemoryUsage: Bool(false, "Store the service's own memory use in the tsdb"),
    instanceTag: Str('svc', 'Tag distinguishing several instances', { minLength: 1 }),
  }),
  storeMonSaas: Feature('Uptime data to the monitoring SaaS', false, 'Send uptime data to the monitoring SaaS', {
    destinationAccount: StringList('Account names', ['ops']),
    metric: Section('Metrics', {
      dynamic: Section('Metric groups', {
        svcMemoryUsage: Flag(true, 'Send memory metrics'),
        svcUptime: Flag(true, 'Send the uptime metric'),
      }),
    }),
    attribute: Section('Attributes', {
      static: NameValues('Attributes added to all uptime metrics'),
      dynamic: Section('Computed attributes', { svcVersion: Flag(true, 'Tag metrics with the service version') }),
    }),
  }),
});

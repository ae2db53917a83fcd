/**
 * The platform part of docs/data-model.md, rendered from the tables the mappers use: the tsdb
 * measurements (tsdb/datamodel.ts), the MQTT health topics (mqtt/mappers.ts) and the monitoring-SaaS
 * metrics (monsaas/mappers.ts). shared/audit/datamodel-docs.ts puts it after the audit section.
 *
 * The measurement tables have one layout, so a program can read them (a dashboard check does): see
 * `LAYOUT` below, which is printed on the page too.
 */

import { groupDigits } from '../util/numbers.js';
import {
  BYTES_PER_MB,
  HEALTH_LIST_ATTRIBUTES,
  HEALTH_METRIC_GROUPS,
  MAX_LIST_ATTRIBUTE_CHARS,
  PROXY_SESSIONS_METRIC,
} from './monsaas/mappers.js';
import { HEALTH_MQTT_VALUES } from './mqtt/mappers.js';
import { type FieldType, type MeasurementModel, PLATFORM_MEASUREMENTS } from './tsdb/datamodel.js';

/** The words of SHOW FIELD KEYS (InfluxQL), so a reader compares them with the database as they are. */
const TYPE_WORD: Record<FieldType, string> = { int: 'integer', float: 'float', string: 'string', bool: 'boolean' };

const cell = (text: string): string => text.replace(/\|/g, '\\|');
const code = (name: string): string => `\`${name}\``;

const LAYOUT = [
  'Layout (the same for every measurement, for people and programs):',
  '',
  '- One level-3 heading per measurement layout, naming the measurement in backticks:',
  '  `` ### `server_info` ``; several names separated by `, ` when they share one layout',
  '  (`` ### `user_events_queue`, `log_events_queue` ``). A configurable name is given by its default.',
  '- Then a paragraph: the spec section, the config key naming the measurement when it is',
  '  configurable, and when a point is written.',
  '- Then one table with the columns `Kind | Name | Type | Value`: `Kind` is `tag` or `field`; `Name`',
  '  is the exact tag or field key in backticks, or `(configured)` without backticks for tags whose',
  '  names the config chooses; `Type` is `string` for tags and for fields the type as',
  '  `SHOW FIELD KEYS` reports it: `integer` (line protocol `1i`), `float` (always written without',
  '  `i`, also when whole: `total=7`), `string` or `boolean`. Tags come first, in line order.',
];

function measurementSection(m: MeasurementModel): string[] {
  const heading = `### ${m.names.map(code).join(', ')}`;
  const named =
    m.nameKeys === undefined
      ? ''
      : ` Name: ${m.nameKeys.map(code).join(' / ')} (default ${m.names.map(code).join(' / ')}).`;
  const rows = [
    ...Object.entries<string>(m.tags).map(([name, doc]) => `| tag | ${code(name)} | string | ${cell(doc)} |`),
    ...(m.configuredTags === undefined ? [] : [`| tag | (configured) | string | ${cell(m.configuredTags)} |`]),
    ...Object.entries(m.fields).map(([name, f]) => `| field | ${code(name)} | ${TYPE_WORD[f.type]} | ${cell(f.doc)} |`),
  ];
  return [
    heading,
    '',
    `platform-formats.md §${m.section}.${named} Written: ${m.written}.`,
    '',
    '| Kind | Name | Type | Value |',
    '|---|---|---|---|',
    ...rows,
    '',
  ];
}

function mqttSection(): string[] {
  return [
    '## MQTT: health and sessions',
    '',
    'platform-formats.md §7.1, §7.2. QoS 0, not retained, UTF-8 text. `<host>` is the server tag `host`',
    '(no port); in `<host>` and the virtual proxy, `+` and `#` become `_`. `<baseTopic>` is',
    '`mqttConfig.baseTopic` as configured (default `svc/`). Modules for error tracking:',
    '`HEALTH_METRICS_MQTT`, `PROXY_SESSIONS_MQTT`.',
    '',
    '| Topic | Payload |',
    '|---|---|',
    ...HEALTH_MQTT_VALUES.map((v) => `| \`<baseTopic><host>${v.suffix}\` | ${cell(v.doc)} |`),
    '| `<baseTopic><host>/usersession<virtualProxy>` | the sessions after user exclusion as a JSON array with 2-space indent (`/` gives `…/usersession/`, `/hdr` gives `…/usersession/hdr`) |',
    '',
    'One message per value and poll; numbers as JavaScript prints them (`4213.6`, `7`). A publish that',
    'fails makes the queue deliver the sample again, and only the topics not yet published are',
    'published then.',
    '',
  ];
}

function monSaasSection(): string[] {
  return [
    '## Monitoring SaaS: health and session metrics',
    '',
    'platform-formats.md §8.1, §8.2. One POST per poll to `monsaas.metric.url` for each account of',
    '`monsaas.metric.destinationAccount`: `[{common: {timestamp, "interval.ms", attributes}, metrics: [{name,',
    'type: "gauge", value}]}]`. `timestamp` is when the response arrived (ms); `interval.ms` is',
    '`serversToMonitor.pollingInterval` (health) or `userSessions.pollingInterval` (sessions). Modules for',
    'error tracking: `HEALTH_METRICS_MONSAAS`, `PROXY_SESSIONS_MONSAAS`.',
    '',
    '| Flag `monsaas.metric.dynamic.…` | Gauges | Value |',
    '|---|---|---|',
    ...HEALTH_METRIC_GROUPS.map(
      (g) => `| \`${g.flag}\` | ${g.metrics.map(([name]) => code(name)).join(', ')} | ${cell(g.doc)} |`,
    ),
    `| \`proxy.sessions\` | ${code(PROXY_SESSIONS_METRIC)} | sessions after user exclusion, per server and virtual proxy |`,
    '',
    '| Flag `monsaas.metric.dynamic.…` | String attribute | Value |',
    '|---|---|---|',
    ...HEALTH_LIST_ATTRIBUTES.map((a) => `| \`${a.flag}\` | ${code(a.attribute)} | app names joined by \`,\` |`),
    '',
    'Attributes, in this order, a later one never replacing an earlier one of the same name: the server',
    'tags (health) or the session tags (sessions: server tags, `user_session_virtual_proxy`,',
    '`user_session_host`), each left out when empty (an empty `server_description`); the app-list',
    'attributes above; `monsaas.metric.attribute.static[]`; `svcVersion` when',
    '`monsaas.metric.attribute.dynamic.svcVersion.enable`.',
    '',
    `- Memory is sent in bytes: MB × ${groupDigits(BYTES_PER_MB)}.`,
    '- An app-list attribute holds the app names when app names are extracted (names, then session-app',
    '  ids, each sorted), else the app ids. It is cut after the last whole name that fits in',
    `  ${groupDigits(MAX_LIST_ATTRIBUTE_CHARS)} characters, so no name is cut in half (a single longer name is cut).`,
    '- The app lists are attributes of the health metrics: with no metric group of the first table',
    '  switched on, no health metrics are sent, whatever the app-list flags say.',
    '- A POST that fails for an account makes the queue deliver the sample again; it is then sent only to',
    '  the accounts that did not take it.',
    '',
  ];
}

/** The platform sections of docs/data-model.md. */
export function renderPlatformDataModelDocs(): string[] {
  return [
    '## Platform measurements (tsdb)',
    '',
    'What the edge agent writes to the tsdb (platform-formats.md §6), generated from',
    '`shared/destinations/tsdb/datamodel.ts`, the tables the mappers build their points from. The same',
    'line protocol is written to tsdb versions 1, 2 and 3.',
    '',
    ...LAYOUT,
    '',
    'Rules:',
    '',
    '- Empty tag values are omitted; every point has at least one tag. Fields listed "when …" are written',
    '  only then; the other fields are always written, strings also when empty (`""`).',
    '- No name is both a tag and a field of a measurement: a field named like a built-in tag carries',
    '  `_field` (as listed), and a field named like a configured tag of its point is written with `_field`',
    '  appended. For user and log events, a configured tag or category named like a built-in tag or field',
    '  is refused at start.',
    "- Point times are nanoseconds: the event's millisecond × 1,000,000 + the process-wide point counter",
    '  (platform-formats.md §0.3). All points of one health or session poll share the millisecond the',
    '  response arrived and take consecutive counter values, in the order of the headings below',
    '  (`server_info` … `saturated`; `user_session_summary`, then one `user_session_details` per',
    '  session), so a poll delivered again overwrites its own points.',
    '- The app lists of `apps` (`tsdbConfig.includeFields.*`) are written as `""` when the list is empty,',
    '  and left out when their flag is off; the `*_names` fields need app names extracted as well.',
    '- Modules for error tracking (`TSDB_V<n>_WRITE`): `HEALTH_METRICS` (§6.1), `PROXY_SESSIONS` (§6.2),',
    '  `USER_EVENTS` (§6.3), `LOG_EVENTS` (§6.4), `EVENT_COUNTS` (§6.5, §6.6), `QUEUE_METRICS` (§6.8).',
    '',
    ...PLATFORM_MEASUREMENTS.flatMap(measurementSection),
    ...mqttSection(),
    ...monSaasSection(),
  ];
}

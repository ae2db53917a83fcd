/**
 * Startup rules for the names the platform's UDP events and polled data carry (platform-formats.md
 * §6.0 last row, §8.3 last line): configured tag (server tags included), category and attribute
 * names. Each refused name is reported with its key path; features that are off are not checked.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, formatIssue } from '../../../shared/config/errors.js';
import { parseConfigText } from '../../../shared/config/load.js';
import { checkRules, NOT_BUILT, notBuiltFindings } from '../../../shared/config/rules.js';
import { ConfigFileSchema } from '../../../shared/config/schema.js';
import { type SchemaNode, schemaAt } from '../../../shared/config/walk.js';
import { PLATFORM_MEASUREMENTS } from '../../../shared/destinations/tsdb/datamodel.js';
import { SERVER_TAG_MEASUREMENTS } from '../../../shared/platform/tags.js';
import { SVC_BIN } from '../../support/svc-process.js';

/** The formatted issues of a config below `Svc:` (none when it loads). */
function issues(...lines: string[]): string[] {
  try {
    parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'svc.yaml', {});
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues.map(formatIssue).map((l) => l.replace(/^svc\.yaml:\d+:\d+ /, ''));
    throw err;
  }
}

const MONSAAS = [
  'monsaas:',
  '  enable: true',
  '  metric:',
  '    url: https://metrics.example.com/metric/v1',
  '  event:',
  '    url: https://events.example.com/',
  'thirdPartyToolsCredentials:',
  '  monsaas:',
  '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
];
const userEvents = (tags: string, ...rest: string[]) => [
  'userEvents:',
  '  enable: true',
  `  tags: ${tags}`,
  ...rest.map((l) => `  ${l}`),
];
const logEvents = (...rest: string[]) => [
  'logEvents:',
  '  source:',
  '    engine:',
  '      enable: true',
  ...rest.map((l) => `  ${l}`),
];
const TO_TSDB = ['sendToTsdb:', '  enable: true'];
const TO_MONSAAS = ['sendToMonSaas:', '  enable: true', '  destinationAccount: [ops]'];
const categorise = (rule: string, ruleDefault = '[]') => [
  'categorise:',
  '  enable: true',
  `  rules: [{logLevel: [warn], action: categorise, category: ${rule}, filter: [{type: so, value: x}]}]`,
  '  ruleDefault:',
  '    enable: true',
  `    category: ${ruleDefault}`,
];

describe('user event tag names (§6.0, §8.3)', () => {
  it('refuses a built-in tag or field name of user_events when user events go to the tsdb', () => {
    expect(issues(...userEvents('[{name: env, value: a}, {name: host, value: b}]', ...TO_TSDB))).toEqual([
      'Svc.userEvents.tags[1].name: "host" is a built-in tag or field of the tsdb measurement user_events (platform-formats.md §6.3); choose another name',
    ]);
    expect(issues(...userEvents('[{name: userFull_field, value: a}]', ...TO_TSDB))).toEqual([
      expect.stringMatching(
        /^Svc\.userEvents\.tags\[0\]\.name: "userFull_field" is a built-in tag or field of the tsdb measurement user_events/,
      ),
    ]);
    expect(issues(...userEvents('[{name: uaOsVersion, value: a}]', ...TO_TSDB))).toEqual([
      expect.stringMatching(/^Svc\.userEvents\.tags\[0\]\.name: "uaOsVersion"/),
    ]);
  });

  it('refuses a built-in monsaas attribute name when user events go to monsaas', () => {
    expect(issues(...MONSAAS, ...userEvents('[{name: qs_userId, value: a}]', ...TO_MONSAAS))).toEqual([
      'Svc.userEvents.tags[0].name: "qs_userId" is a built-in attribute of the monitoring-SaaS event (platform-formats.md §8.3); choose another name',
    ]);
    expect(issues(...MONSAAS, ...userEvents('[{name: svcVersion, value: a}]', ...TO_MONSAAS))).toEqual([
      expect.stringMatching(/^Svc\.userEvents\.tags\[0\]\.name: "svcVersion" is a built-in attribute/),
    ]);
  });

  it('refuses a tag listed twice', () => {
    expect(issues(...userEvents('[{name: env, value: a}, {name: env, value: b}]'))).toEqual([
      'Svc.userEvents.tags[1].name: tag "env" is listed more than once',
    ]);
  });

  it('refuses names that are not tag names (schema) and "time"', () => {
    expect(issues(...userEvents('[{name: 1env, value: a}]'))).toEqual([
      expect.stringMatching(/^Svc\.userEvents\.tags\[0\]\.name: /),
    ]);
    expect(issues(...userEvents('[{name: time, value: a}]'))).toEqual([
      expect.stringMatching(/^Svc\.userEvents\.tags\[0\]\.name: /),
    ]);
  });

  it('does not check what is off', () => {
    // Only the tsdb or monsaas that the events go to reserve their names.
    expect(issues(...userEvents('[{name: host, value: a}, {name: qs_userId, value: b}]'))).toEqual([]);
    expect(
      issues(
        'userEvents:',
        '  enable: false',
        '  tags: [{name: env, value: a}, {name: env, value: b}]',
        '  sendToTsdb:',
        '    enable: true',
      ),
    ).toEqual([]);
  });
});

describe('log event tag and category names (§6.0, §2.5, §8.3)', () => {
  it('refuses a built-in tag or field name of log_event for logEvents.tags', () => {
    expect(
      issues(...logEvents('tags: [{name: subsystem, value: a}, {name: raw_event, value: b}]', ...TO_TSDB)),
    ).toEqual([
      'Svc.logEvents.tags[0].name: "subsystem" is a built-in tag or field of the tsdb measurement log_event (platform-formats.md §6.4); choose another name',
      'Svc.logEvents.tags[1].name: "raw_event" is a built-in tag or field of the tsdb measurement log_event (platform-formats.md §6.4); choose another name',
    ]);
    expect(issues(...logEvents('tags: [{name: session_id_field, value: a}]', ...TO_TSDB))).toEqual([
      expect.stringMatching(/^Svc\.logEvents\.tags\[0\]\.name: "session_id_field"/),
    ]);
  });

  it('refuses a built-in monsaas attribute name for logEvents.tags when log events go to monsaas', () => {
    expect(issues(...MONSAAS, ...logEvents('tags: [{name: qs_log_level, value: a}]', ...TO_MONSAAS))).toEqual([
      'Svc.logEvents.tags[0].name: "qs_log_level" is a built-in attribute of the monitoring-SaaS event (platform-formats.md §8.3); choose another name',
    ]);
  });

  it('refuses category names of rules that are not tag names, "time", or built-in', () => {
    expect(issues(...logEvents(...categorise('[{name: 9lives, value: a}]')))).toEqual([
      'Svc.logEvents.categorise.rules[0].category[0].name: "9lives" is not a valid tag name: use letters, digits and _, starting with a letter',
    ]);
    expect(issues(...logEvents(...categorise('[{name: qs-cat, value: a}]')))).toEqual([
      expect.stringMatching(
        /^Svc\.logEvents\.categorise\.rules\[0\]\.category\[0\]\.name: "qs-cat" is not a valid tag name/,
      ),
    ]);
    expect(issues(...logEvents(...categorise('[{name: time, value: a}]')))).toEqual([
      'Svc.logEvents.categorise.rules[0].category[0].name: "time" cannot be a tag name (it is the time column of the tsdb); choose another name',
    ]);
    expect(
      issues(...logEvents(...TO_TSDB, ...categorise('[{name: ok, value: a}, {name: user_id, value: b}]'))),
    ).toEqual([
      'Svc.logEvents.categorise.rules[0].category[1].name: "user_id" is a built-in tag or field of the tsdb measurement log_event (platform-formats.md §6.4); choose another name',
    ]);
    expect(issues(...MONSAAS, ...logEvents(...TO_MONSAAS, ...categorise('[{name: qs_message, value: a}]')))).toEqual([
      expect.stringMatching(
        /^Svc\.logEvents\.categorise\.rules\[0\]\.category\[0\]\.name: "qs_message" is a built-in attribute of the monitoring-SaaS event/,
      ),
    ]);
  });

  it('refuses default-rule category names the same way', () => {
    expect(issues(...logEvents(...TO_TSDB, ...categorise('[]', '[{name: level, value: a}]')))).toEqual([
      'Svc.logEvents.categorise.ruleDefault.category[0].name: "level" is a built-in tag or field of the tsdb measurement log_event (platform-formats.md §6.4); choose another name',
    ]);
    expect(issues(...logEvents(...categorise('[]', '[{name: "a b", value: a}]')))).toEqual([
      expect.stringMatching(
        /^Svc\.logEvents\.categorise\.ruleDefault\.category\[0\]\.name: "a b" is not a valid tag name/,
      ),
    ]);
  });

  it('refuses a category named like a configured log tag', () => {
    expect(issues(...logEvents('tags: [{name: team, value: a}]', ...categorise('[{name: team, value: b}]')))).toEqual([
      'Svc.logEvents.categorise.rules[0].category[0].name: category "team" has the name of a tag in Svc.logEvents.tags; choose another name',
    ]);
  });

  it('accepts repeated category names (the first value becomes the tag, §2.5)', () => {
    expect(
      issues(
        ...logEvents(
          ...TO_TSDB,
          ...categorise(
            '[{name: qs_log_category, value: a}, {name: qs_log_category, value: b}]',
            '[{name: qs_log_category, value: c}]',
          ),
        ),
      ),
    ).toEqual([]);
  });

  it('does not check what is off', () => {
    // No source enabled: the listener does not run.
    expect(issues('logEvents:', '  tags: [{name: host, value: a}]', '  sendToTsdb:', '    enable: true')).toEqual([]);
    // Categorisation off, default rule off.
    expect(
      issues(
        ...logEvents(
          ...TO_TSDB,
          'categorise:',
          '  enable: false',
          '  rules: [{logLevel: [warn], action: categorise, category: [{name: host, value: a}], filter: [{type: so, value: x}]}]',
        ),
      ),
    ).toEqual([]);
    expect(
      issues(
        ...logEvents(
          ...TO_TSDB,
          'categorise:',
          '  enable: true',
          '  ruleDefault:',
          '    enable: false',
          '    category: [{name: host, value: a}]',
        ),
      ),
    ).toEqual([]);
  });
});

describe('monsaas static event attributes (§8.3)', () => {
  it('refuses a built-in attribute name of the events sent', () => {
    const withStatic = (name: string) => [
      'monsaas:',
      '  enable: true',
      '  metric:',
      '    url: https://metrics.example.com/metric/v1',
      '  event:',
      '    url: https://events.example.com/',
      '    attribute:',
      `      static: [{name: team, value: a}, {name: ${name}, value: b}]`,
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
    ];
    expect(issues(...withStatic('timestamp'), ...userEvents('[]', ...TO_MONSAAS))).toEqual([
      'Svc.monsaas.event.attribute.static[1].name: "timestamp" is a built-in attribute of the monitoring-SaaS events (platform-formats.md §8.3); choose another name',
    ]);
    expect(issues(...withStatic('qs_event_action'), ...userEvents('[]', ...TO_MONSAAS))).toEqual([
      expect.stringMatching(/^Svc\.monsaas\.event\.attribute\.static\[1\]\.name: "qs_event_action"/),
    ]);
    expect(issues(...withStatic('qs_task_name'), ...logEvents(...TO_MONSAAS))).toEqual([
      expect.stringMatching(/^Svc\.monsaas\.event\.attribute\.static\[1\]\.name: "qs_task_name"/),
    ]);
    // A log-event attribute name is free while only user events are sent, and none is checked without events.
    expect(issues(...withStatic('qs_task_name'), ...userEvents('[]', ...TO_MONSAAS))).toEqual([]);
    expect(issues(...withStatic('eventType'))).toEqual([]);
  });
});

describe('server tags as labels of the metrics endpoint (§9)', () => {
  const servers = (definition: string) => [
    'metricsEndpoint: {enable: true}',
    'serversToMonitor:',
    `  serverTagsDefinition: ${definition}`,
    '  servers: []',
  ];

  it("refuses a tag named like one of the endpoint's own labels, or reserved by Prometheus", () => {
    expect(issues(...servers('[site, host, engine_version, user_session_host]'))).toEqual([
      'Svc.serversToMonitor.serverTagsDefinition[1]: "host" is a built-in label of the metrics endpoint (platform-formats.md §9); choose another name',
      'Svc.serversToMonitor.serverTagsDefinition[2]: "engine_version" is a built-in label of the metrics endpoint (platform-formats.md §9); choose another name',
      'Svc.serversToMonitor.serverTagsDefinition[3]: "user_session_host" is a built-in label of the metrics endpoint (platform-formats.md §9); choose another name',
    ]);
    expect(issues(...servers('[__name]'))).toEqual([
      'Svc.serversToMonitor.serverTagsDefinition[0]: "__name" cannot be a label of the metrics endpoint: use letters, digits and _, not starting with __',
    ]);
    expect(issues(...servers('[site, site]'))).toEqual([
      'Svc.serversToMonitor.serverTagsDefinition[1]: tag "site" is listed more than once',
    ]);
  });

  it('refuses what is not a label name (schema), and checks nothing while the endpoint is off', () => {
    expect(issues(...servers('[bad-name]'))).toEqual([
      expect.stringMatching(/^Svc\.serversToMonitor\.serverTagsDefinition\[0\]: /),
    ]);
    expect(issues('serversToMonitor:', '  serverTagsDefinition: [host, __x]', '  servers: []')).toEqual([]);
  });
});

describe('server tags against the built-in tags and fields of their measurements (§6.0, §6.1, §6.2)', () => {
  interface Server {
    name: string;
    tags: Record<string, string>;
  }
  /** Servers with the given tags (the definition: their names), the tsdb on or off, sessions polled or not. */
  const serversWith = (list: Server[], { tsdb = true, sessions = false } = {}) => [
    `tsdbConfig: {enable: ${tsdb}}`,
    `userSessions: {enableSessionExtract: ${sessions}}`,
    'serversToMonitor:',
    `  serverTagsDefinition: [${Object.keys(list[0]?.tags ?? {}).join(', ')}]`,
    '  servers:',
    ...list.flatMap(({ name, tags }, i) => [
      `    - host: node${i + 1}.example.com:4747`,
      `      serverName: ${name}`,
      `      serverTags: {${Object.entries(tags)
        .map(([tag, value]) => `${tag}: ${value}`)
        .join(', ')}}`,
      `      userSessions: {enable: true, host: node${i + 1}.example.com:4243, virtualProxies: [{virtualProxy: /}]}`,
    ]),
  ];
  const HEALTH = 'server_info, mem, apps, cpu, session, users, cache, saturated';

  it('refuses a server tag named like a field of a health measurement, naming the tag, the server and the field', () => {
    expect(issues(...serversWith([{ name: 'central', tags: { site: 'lab', version: 'x' } }]))).toEqual([
      'Svc.serversToMonitor.servers[0].serverTags.version: server tag "version" of server "central" clashes with the built-in field version of the tsdb measurement server_info (platform-formats.md §6.1); choose another name',
    ]);
    // Every server that has it, each at its own key; a field of two measurements names both.
    expect(
      issues(
        ...serversWith([
          { name: 'central', tags: { total: 'a' } },
          { name: 'rim', tags: { total: 'b' } },
        ]),
      ),
    ).toEqual([
      'Svc.serversToMonitor.servers[0].serverTags.total: server tag "total" of server "central" clashes with the built-in field total of the tsdb measurements cpu, session, users (platform-formats.md §6.1); choose another name',
      'Svc.serversToMonitor.servers[1].serverTags.total: server tag "total" of server "rim" clashes with the built-in field total of the tsdb measurements cpu, session, users (platform-formats.md §6.1); choose another name',
    ]);
  });

  it('refuses a server tag named like a built-in tag even while the tsdb is off: it would replace that tag in every output', () => {
    const expected = [
      `Svc.serversToMonitor.servers[0].serverTags.server_name: server tag "server_name" of server "central" clashes with the built-in tag server_name of the tsdb measurements ${HEALTH} (platform-formats.md §6.1); choose another name`,
    ];
    expect(issues(...serversWith([{ name: 'central', tags: { server_name: 'x' } }]))).toEqual(expected);
    expect(issues(...serversWith([{ name: 'central', tags: { server_name: 'x' } }], { tsdb: false }))).toEqual(
      expected,
    );
  });

  it("checks the session measurements' names only for a server whose sessions are polled", () => {
    const tags = { user_session_host: 'x', session_id: 'y' };
    expect(issues(...serversWith([{ name: 'central', tags }], { sessions: true }))).toEqual([
      'Svc.serversToMonitor.servers[0].serverTags.user_session_host: server tag "user_session_host" of server "central" clashes with the built-in tag user_session_host of the tsdb measurements user_session_summary, user_session_details (platform-formats.md §6.2); choose another name',
      'Svc.serversToMonitor.servers[0].serverTags.session_id: server tag "session_id" of server "central" clashes with the built-in field session_id of the tsdb measurement user_session_details (platform-formats.md §6.2); choose another name',
    ]);
    expect(issues(...serversWith([{ name: 'central', tags }], { sessions: false }))).toEqual([]);
    // A tag of both kinds of measurement names them all.
    expect(issues(...serversWith([{ name: 'central', tags: { host: 'x' } }], { sessions: true }))).toEqual([
      `Svc.serversToMonitor.servers[0].serverTags.host: server tag "host" of server "central" clashes with the built-in tag host of the tsdb measurements ${HEALTH}, user_session_summary, user_session_details (platform-formats.md §6.1, §6.2); choose another name`,
    ]);
  });

  it('refuses "time" while the tsdb is written, and checks no field while it is off', () => {
    expect(issues(...serversWith([{ name: 'central', tags: { time: 'x' } }]))).toEqual([
      'Svc.serversToMonitor.servers[0].serverTags.time: server tag "time" of server "central" is named like the time column of the tsdb; choose another name',
    ]);
    expect(
      issues(...serversWith([{ name: 'central', tags: { time: 'x', version: 'y', total: 'z' } }], { tsdb: false })),
    ).toEqual([]);
  });

  it('accepts the default tags and any name no measurement of the server uses', () => {
    expect(issues(...serversWith([{ name: 'central', tags: { site: 'lab', role: 'central', env: 'prod' } }]))).toEqual(
      [],
    );
    expect(issues()).toEqual([]);
  });

  it('knows every measurement that carries the server tags (from the data model)', () => {
    const carrying = PLATFORM_MEASUREMENTS.filter((model) => model.configuredTags?.includes('serverTags') ?? false);
    const { health, sessions } = SERVER_TAG_MEASUREMENTS;
    expect([...health, ...sessions].map((model) => model.names[0])).toEqual(carrying.map((model) => model.names[0]));
  });

  it('is a config error at start and in `svc validate-config`', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-server-tags-'));
    const file = join(dir, 'svc.yaml');
    writeFileSync(
      file,
      ['Svc:', ...serversWith([{ name: 'central', tags: { version: 'x' } }]).map((l) => `  ${l}`), ''].join('\n'),
    );
    const message =
      'Svc.serversToMonitor.servers[0].serverTags.version: server tag "version" of server "central" clashes with the built-in field version of the tsdb measurement server_info';
    for (const args of [['validate-config'], ['edge']]) {
      const run = spawnSync(SVC_BIN, [...args, '--config', file], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, SVC_CONFIG: '' },
        timeout: 20_000,
      });
      expect(run.status, args.join(' ')).toBe(1);
      expect(run.stderr, args.join(' ')).toContain(message);
    }
  });
});

describe('error tracking switches (§10.9)', () => {
  const warnings = (...lines: string[]) =>
    parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'svc.yaml', {}).warnings;

  it('warns when error points would go to a tsdb that is off (§0.6)', () => {
    expect(warnings('errorTracking: {enable: true, tsdb: {enable: true}}')).toEqual([
      'Svc.errorTracking.tsdb.enable: is true but Svc.tsdbConfig.enable is false, so nothing is sent',
    ]);
    expect(
      warnings(
        'errorTracking: {enable: true, logSummary: {enable: true}, tsdb: {enable: true}}',
        'tsdbConfig: {enable: true}',
      ),
    ).toEqual([]);
  });
});

describe('self-report settings (§10.4–§10.6)', () => {
  const warnings = (...lines: string[]) =>
    parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'svc.yaml', {}).warnings;

  it('refuses telemetry without host information, naming both keys, and telemetry without a URL', () => {
    const url = 'anonTelemetrySettings: {url: "https://collector.example.com/t"}';
    expect(issues('anonTelemetry: true', 'systemInfo: {enable: false}', url)).toEqual([
      'Svc.anonTelemetry: telemetry needs host information: Svc.anonTelemetry is true while Svc.systemInfo.enable is false; turn telemetry off or systemInfo on',
    ]);
    // No default URL: the project runs no collector, so telemetry that is on names where it goes.
    expect(issues('anonTelemetry: true')).toEqual([
      'Svc.anonTelemetrySettings.url: must be set: Svc.anonTelemetry is true',
    ]);
    expect(issues('anonTelemetry: true', url)).toEqual([]);
    // Off by default, and its URL is then not needed.
    expect(parseConfigText('Svc: {}\n', 'svc.yaml', {}).config.anonTelemetry).toBe(false);
    expect(issues('anonTelemetrySettings: {url: ""}')).toEqual([]);
  });

  it('needs monsaas.enable and its metric URL when uptime metrics go to the monitoring SaaS (their URL and headers live there)', () => {
    const uptime = [
      'uptimeMonitor:',
      '  storeMonSaas: {enable: true, destinationAccount: [ops]}',
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - {accountName: ops, insertApiKey: key-1, accountId: "111"}',
    ];
    expect(issues(...uptime)).toEqual([
      'Svc.uptimeMonitor.storeMonSaas.enable: is true but Svc.monsaas.enable is false: the uptime metrics go to Svc.monsaas.metric.url, which is used only while Svc.monsaas.enable is true (that switch alone sends nothing else)',
    ]);
    expect(issues(...uptime, 'monsaas: {enable: true}')).toEqual([
      expect.stringMatching(/^Svc\.monsaas\.metric\.url: /),
    ]);
    expect(
      issues(...uptime, 'monsaas: {enable: true, metric: {url: "https://metrics.example.com/metric/v1"}}'),
    ).toEqual([]);
  });

  it('warns when memory points would go to a tsdb that is off (§0.6)', () => {
    expect(warnings('uptimeMonitor: {storeInTsdb: {svcMemoryUsage: true}}')).toEqual([
      'Svc.uptimeMonitor.storeInTsdb.svcMemoryUsage: is true but Svc.tsdbConfig.enable is false, so nothing is sent',
    ]);
    expect(warnings('uptimeMonitor: {storeInTsdb: {svcMemoryUsage: true}}', 'tsdbConfig: {enable: true}')).toEqual([]);
  });

  it('refuses a frequency that is not a text schedule, naming the key and the position', () => {
    expect(
      issues('heartbeat: {enable: true, remoteURL: "https://alive.example.com/", frequency: "every 5 minuts"}'),
    ).toEqual([
      expect.stringMatching(/^Svc\.heartbeat\.frequency: cannot be parsed as a text schedule from position 8/),
    ]);
    expect(issues('uptimeMonitor: {frequency: "whenever"}')).toEqual([
      expect.stringMatching(/^Svc\.uptimeMonitor\.frequency: cannot be parsed as a text schedule from position 0/),
    ]);
  });
});

describe('checkRules directly', () => {
  it('reports a tag name the schema would have refused, with its path', () => {
    const { config } = parseConfigText('Svc:\n  userEvents:\n    enable: true\n', 'svc.yaml', {});
    config.userEvents.tags.push({ name: 'time', value: 'x' }, { name: 'bad name', value: 'y' });
    expect(checkRules(config)).toEqual([
      {
        severity: 'error',
        path: ['userEvents', 'tags', 0, 'name'],
        message: '"time" cannot be a tag name (it is the time column of the tsdb); choose another name',
      },
      {
        severity: 'error',
        path: ['userEvents', 'tags', 1, 'name'],
        message: '"bad name" is not a valid tag name: use letters, digits and _, starting with a letter',
      },
    ]);
  });
});

describe('app names for the engine-performance filter (§2.4)', () => {
  const warnings = (...lines: string[]) =>
    parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'svc.yaml', {}).warnings;
  const perf =
    'logEvents: {source: {apiPerf: {enable: true}}, enginePerformanceMonitor: {enable: true, appNameLookup: {enable: true}}}';

  it('warns when the lookup is on but app names are not extracted', () => {
    expect(warnings(perf)).toEqual([
      'Svc.logEvents.enginePerformanceMonitor.appNameLookup.enable: is true but Svc.appNames.enableAppNameExtract is false, so no app name is ever found (app_name stays empty and app-name rules of the filter never match)',
    ]);
    expect(warnings(perf, 'appNames: {enableAppNameExtract: true, hostIP: 10.0.0.5}')).toEqual([]);
    expect(
      warnings(
        'logEvents: {source: {apiPerf: {enable: false}, engine: {enable: true}}, enginePerformanceMonitor: {enable: true, appNameLookup: {enable: true}}}',
      ),
    ).toEqual([]);
  });
});

describe('switches of features that are not built yet', () => {
  const notBuilt = (...lines: string[]) =>
    parseConfigText(['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'), 'svc.yaml', {}).notBuilt;

  it('warns about no default: every feature on by default (systemInfo, uptimeMonitor) is built', () => {
    expect(notBuilt()).toEqual([]);
  });

  it('names every key that turns one on: flags, metric groups, server lists and certificate files', () => {
    const found = notBuilt(
      'systemInfo: {enable: false}',
      'uptimeMonitor: {enable: false}',
      'anonTelemetry: false',
      'heartbeat: {enable: true, remoteURL: "https://alive.example.com/"}',
      'metricsEndpoint: {enable: true}',
      'containerHealthCheck: {enable: true}',
      'configVisualisation: {enable: true}',
      'errorTracking: {enable: true, logSummary: {enable: true}, tsdb: {enable: true}}',
      'appNames: {enableAppNameExtract: true, hostIP: platform.example.com}',
      'userSessions: {enableSessionExtract: true}',
      'serversToMonitor: {servers: [{host: "n1:4747", serverName: n1}]}',
      'monsaas: {enable: true, metric: {url: "https://m.example.com/", dynamic: {engine: {cpu: {enable: true}}, cache: {cache: {enable: true}}}}}',
      'tsdbConfig: {enable: true, includeFields: {loadedDocs: true}}',
      'cert: {clientCert: /etc/svc/client.pem}',
      'logEvents: {source: {engine: {enable: true}}, enginePerformanceMonitor: {enable: true, appNameLookup: {enable: true}}}',
      'cloud: {enable: true, region: eu-west-1, queues: {tsdb: "https://sqs.eu-west-1.amazonaws.com/123456789012/svc-tsdb"}}',
    );
    // Every feature the schema has is built: no switch is warned about.
    expect(found).toEqual([]);
    // The pollers, their certificate, the app names they give and the outputs of polled data are
    // built: no warning for their switches.
    expect(
      found.filter((line) =>
        /^Svc\.(serversToMonitor|userSessions|appNames|cert|logEvents|monsaas|tsdbConfig)\./.test(line),
      ),
    ).toEqual([]);
    // The heartbeat, uptime monitor, system info and telemetry are built: no warning for them.
    expect(
      notBuilt(
        'anonTelemetry: true',
        'anonTelemetrySettings: {url: "https://collector.example.com/t"}',
        'heartbeat: {enable: true, remoteURL: "https://alive.example.com/"}',
      ),
    ).toEqual([]);
  });

  it('says nothing about a switch inside a section that is off (its settings are not used)', () => {
    expect(
      notBuilt(
        'systemInfo: {enable: false}',
        'uptimeMonitor: {enable: false}',
        'errorTracking: {enable: false, logSummary: {enable: true}}',
        'monsaas: {enable: false, metric: {dynamic: {engine: {cpu: {enable: true}}}}}',
      ),
    ).toEqual([]);
  });

  it('names only keys that exist in the schema', () => {
    const root = ConfigFileSchema as SchemaNode;
    for (const { key, switches = key } of NOT_BUILT) {
      expect(schemaAt(root, ['Svc', ...key]), key.join('.')).toBeDefined();
      expect(schemaAt(root, ['Svc', ...switches]), switches.join('.')).toBeDefined();
    }
  });

  it('is computed from the loaded config by notBuiltFindings, for each switch of an entry that is on', () => {
    // NOT_BUILT is empty today; the mechanism is checked with an entry of its own.
    const entries = [
      {
        key: ['containerHealthCheck'],
        switches: ['containerHealthCheck', 'enable'],
        feature: 'the container health endpoint',
      },
      { key: ['serversToMonitor'], switches: ['serversToMonitor', 'servers'], feature: 'the health poller' },
      { key: ['systemInfo'], switches: ['systemInfo', 'enable'], feature: 'host information' },
    ];
    const { config } = parseConfigText(
      'Svc:\n  containerHealthCheck:\n    enable: true\n  serversToMonitor:\n    servers: [{host: "n1:4747", serverName: n1}]\n',
      'svc.yaml',
      {},
    );
    expect(notBuiltFindings(config, entries)).toEqual([
      {
        severity: 'warning',
        path: ['containerHealthCheck', 'enable'],
        message: 'is true, but the container health endpoint is not built yet: this setting has no effect',
      },
      {
        severity: 'warning',
        path: ['serversToMonitor', 'servers'],
        message: 'lists 1 item, but the health poller is not built yet: this setting has no effect',
      },
      {
        severity: 'warning',
        path: ['systemInfo', 'enable'],
        message: 'is true (the default), but host information is not built yet: this setting has no effect',
      },
    ]);
    expect(notBuiltFindings(config)).toEqual([]);
  });
});

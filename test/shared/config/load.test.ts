import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closest } from '../../../shared/config/closest.js';
import {
  ConfigError,
  type ConfigIssue,
  formatIssue,
  formatIssues,
  MAX_MESSAGE_CHARS,
  MAX_PATH_CHARS,
  MAX_PRINTED_ISSUES,
} from '../../../shared/config/errors.js';
import { chooseConfigFile, loadConfigFile, parseConfigText } from '../../../shared/config/load.js';
import { MAX_CONFIG_BYTES } from '../../../shared/config/read.js';

/** The issues a config text produces (none when valid). */
function issuesOf(text: string, env: NodeJS.ProcessEnv = {}): ConfigIssue[] {
  try {
    parseConfigText(text, 'svc.yaml', env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
}
const lines = (text: string, env: NodeJS.ProcessEnv = {}) => issuesOf(text, env).map(formatIssue);
const yaml = (...rows: string[]) => `${rows.join('\n')}\n`;

describe('minimal files', () => {
  it('accepts Svc: {} and fills every default', () => {
    const { config, warnings } = parseConfigText('Svc: {}\n', 'svc.yaml', {});
    expect(warnings).toEqual([]);
    expect(config.logLevel).toBe('info');
    expect(config.anonTelemetry).toBe(false);
    expect(config.crashFile).toEqual({
      enable: true,
      crashFileDirectory: './crash_dumps',
      crashFileCreateJson: true,
      crashFileCreateText: true,
    });
    expect(config.auditEvents.enable).toBe(false);
    expect(config.auditEvents.port).toBe(8181);
    expect(config.auditEvents.rateLimit).toEqual({ enable: true, maxPerMinute: 300 });
    expect(config.auditEvents.destination.json.objectdata.exportDirectory).toBe('audit-events/json');
    expect(config.userEvents.udpServerConfig.portUserActivityEvents).toBe(9997);
    expect(config.logEvents.udpServerConfig.portLogEvents).toBe(9996);
    expect(config.userEvents.udpServerConfig.receiveBufferBytes).toBe(4_194_304);
    expect(config.tsdbConfig.maxBatchSize).toBe(1000);
    expect(config.uptimeMonitor).toMatchObject({ enable: true, frequency: 'every 15 minutes', logLevel: 'verbose' });
    // Nothing that binds a port or calls out is on unless the file asks.
    for (const off of [
      config.configVisualisation,
      config.containerHealthCheck,
      config.metricsEndpoint,
      config.heartbeat,
      config.userEvents,
      config.mqttConfig,
      config.monsaas,
      config.tsdbConfig,
    ]) {
      expect(off.enable).toBe(false);
    }
    expect(config.appNames.enableAppNameExtract).toBe(false);
    expect(config.userSessions.enableSessionExtract).toBe(false);
  });

  it('accepts Svc: {logLevel: info}, an empty Svc key, and .yml files', () => {
    expect(parseConfigText('Svc: {logLevel: info}\n', 'svc.yaml', {}).config.logLevel).toBe('info');
    expect(parseConfigText('Svc:\n', 'svc.yaml', {}).config.logLevel).toBe('info');
    const dir = mkdtempSync(join(tmpdir(), 'svc-config-'));
    writeFileSync(join(dir, 'a.yml'), 'Svc:\n  logLevel: debug\n');
    expect(loadConfigFile(join(dir, 'a.yml')).config.logLevel).toBe('debug');
  });

  it('refuses a file without the root key Svc', () => {
    expect(lines('svc:\n  logLevel: info\n')).toEqual([
      expect.stringMatching(/^svc\.yaml:1:1 the file must hold a mapping with the root key "Svc"/),
    ]);
  });
});

describe('errors are reported all at once with file:line:column and the key path', () => {
  it('reports an unknown key, a wrong type and a bad enum value together, and nothing else', () => {
    const text = yaml(
      'Svc:', //                           1
      '  logLevel: loud', //               2  bad enum
      '  tsdbConfig:', //                  3
      '    enable: true', //               4
      '    port: eighty', //               5  wrong type
      '    hots: db.example.com', //       6  unknown key (typo)
    );
    expect(lines(text)).toEqual([
      'svc.yaml:2:13 Svc.logLevel: must be one of silly, debug, verbose, info, warn, error (got "loud")',
      'svc.yaml:5:11 Svc.tsdbConfig.port: must be an integer between 1 and 65535 (got "eighty")',
      'svc.yaml:6:5 Svc.tsdbConfig.hots: unknown key; did you mean "host"?',
    ]);
  });

  it('matches the reference example for an out-of-range port', () => {
    const text = yaml('Svc:', '  tsdbConfig:', '    enable: true', '    port: 70000');
    expect(lines(text)).toEqual([
      'svc.yaml:4:11 Svc.tsdbConfig.port: must be an integer between 1 and 65535 (got 70000)',
    ]);
  });

  it('reports YAML syntax errors with their position', () => {
    const found = issuesOf('Svc:\n  logLevel: info\n   bad: [1, 2\n');
    expect(found.length).toBeGreaterThan(0);
    expect(found[0]).toMatchObject({ file: 'svc.yaml', line: expect.any(Number) as number });
    expect(found[0]?.message).toMatch(/^YAML syntax error/);
    expect(formatIssue(found[0] as ConfigIssue)).toBe(
      'svc.yaml:2:13 YAML syntax error: Nested mappings are not allowed in compact mappings',
    );
  });

  it('reports a duplicated key at its second place, with its path', () => {
    expect(lines('Svc:\n  logLevel: info\n  logLevel: debug\n')).toEqual([
      'svc.yaml:3:3 Svc.logLevel: the same key is set twice in this mapping; keys must be unique',
    ]);
  });

  it('reports a duplicated key together with every other problem of the file', () => {
    const text = yaml(
      'Svc:',
      '  logLevel: info',
      '  logLevel: debug', //            3  set twice
      '  fileLogging: maybe', //         4  wrong type
      '  metricsEndpoint:',
      '    enable: true',
      '    port: abc', //                 7  wrong type
      '    prot: 3', //                   8  unknown key in a section in use
    );
    expect(lines(text)).toEqual([
      'svc.yaml:3:3 Svc.logLevel: the same key is set twice in this mapping; keys must be unique',
      'svc.yaml:4:16 Svc.fileLogging: must be true or false (got "maybe")',
      'svc.yaml:7:11 Svc.metricsEndpoint.port: must be an integer between 1 and 65535 (got "abc")',
      'svc.yaml:8:5 Svc.metricsEndpoint.prot: unknown key; did you mean "port"?',
    ]);
  });

  it('warns about an unknown key in a section that is off, with its place, the closest known key and why nothing there counts', () => {
    const text = yaml('Svc:', '  metricsEndpoint:', '    enabel: true', '    port: abc');
    const { config, warnings } = parseConfigText(text, 'svc.yaml', {});
    // The section stays off and its values unchecked (file convention 4); the typo is said.
    expect(config.metricsEndpoint.enable).toBe(false);
    expect(warnings).toEqual([
      'svc.yaml:3:5 Svc.metricsEndpoint.enabel: unknown key; did you mean "enable"? (Svc.metricsEndpoint is off: nothing in it is checked or used)',
    ]);
    // An unknown key with nothing close names the keys of its mapping; a version's settings not in use count as off.
    const v1 = yaml(
      'Svc:',
      '  tsdbConfig:',
      '    enable: true',
      '    version: 2',
      '    v2Config: { org: o, token: t }',
      '    v1Config:',
      '      zzz: 1',
    );
    expect(parseConfigText(v1, 'svc.yaml', {}).warnings).toEqual([
      'svc.yaml:7:7 Svc.tsdbConfig.v1Config.zzz: unknown key (known keys here: auth, dbName, retentionPolicy) (Svc.tsdbConfig.v1Config is off: nothing in it is checked or used)',
    ]);
  });

  it('suggests the known key for likely typos, including case', () => {
    expect(lines('Svc:\n  loglevel: info\n')).toEqual([
      'svc.yaml:2:3 Svc.loglevel: unknown key; did you mean "logLevel"?',
    ]);
    expect(closest('crashFileDirctory', ['crashFileDirectory', 'enable'])).toBe('crashFileDirectory');
    expect(closest('zzz', ['crashFileDirectory', 'enable'])).toBeUndefined();
    expect(lines('Svc:\n  nonsenseSection: 1\n')[0]).toMatch(/unknown key \(known keys here: logLevel, fileLogging/);
  });

  it('points into lists with their index', () => {
    const text = yaml(
      'Svc:',
      '  userEvents:',
      '    enable: true',
      '    tags:',
      '      - name: env',
      '        value: prod',
      '      - name: 1bad',
      '        value: x',
    );
    expect(lines(text)).toEqual([
      'svc.yaml:7:15 Svc.userEvents.tags[1].name: must be a name of letters, digits and _ that starts with a letter and is not "time" (got "1bad")',
    ]);
  });
});

describe('tag lists hold {name, value} items', () => {
  it('rejects the tagName/tagValue shape with a clear message for each key', () => {
    const text = yaml(
      'Svc:',
      '  logEvents:',
      '    source:',
      '      engine:',
      '        enable: true',
      '    tags:',
      '      - tagName: env',
      '        tagValue: prod',
    );
    const found = lines(text);
    expect(found).toContain('svc.yaml:7:9 Svc.logEvents.tags[0].tagName: unknown key (known keys here: name, value)');
    expect(found).toContain('svc.yaml:8:9 Svc.logEvents.tags[0].tagValue: unknown key (known keys here: name, value)');
    expect(found).toContain('svc.yaml:7:9 Svc.logEvents.tags[0].name: is required');
  });

  it('refuses "time" as a tag name', () => {
    const text = yaml(
      'Svc:',
      '  platformEvents:',
      '    eventCount:',
      '      enable: true',
      '      tsdb:',
      '        tags: [{name: time, value: x}]',
    );
    expect(lines(text)[0]).toMatch(
      /Svc\.platformEvents\.eventCount\.tsdb\.tags\[0\]\.name: must be a name .* not "time"/,
    );
  });
});

describe('settings of a disabled feature are not validated', () => {
  const heartbeat = (enable: boolean) =>
    yaml(
      'Svc:',
      '  heartbeat:',
      `    enable: ${String(enable)}`,
      '    remoteURL: <REMOTE_URL>',
      '    frequency: whenever',
      '    placeholder: keep me',
    );

  it('lets placeholders stay while the feature is off, and uses defaults', () => {
    const { config } = parseConfigText(heartbeat(false), 'svc.yaml', {});
    expect(config.heartbeat).toEqual({ enable: false, remoteURL: '', frequency: 'every 1 hour' });
  });

  it('validates the same section once it is on', () => {
    expect(lines(heartbeat(true))).toEqual([
      'svc.yaml:4:16 Svc.heartbeat.remoteURL: must be an absolute http:// or https:// URL (got "<REMOTE_URL>")',
      'svc.yaml:5:16 Svc.heartbeat.frequency: cannot be parsed as a text schedule from position 0 ("whenever")',
      'svc.yaml:6:5 Svc.heartbeat.placeholder: unknown key (known keys here: enable, remoteURL, frequency)',
    ]);
  });

  it('still validates the switch itself', () => {
    expect(lines(yaml('Svc:', '  heartbeat:', '    enable: yes please'))).toEqual([
      'svc.yaml:3:13 Svc.heartbeat.enable: must be true or false (got "yes please")',
    ]);
  });

  it('requires settings without a usable default only when the feature is on, naming the switch', () => {
    expect(lines(yaml('Svc:', '  heartbeat:', '    enable: true'))).toEqual([
      'svc.yaml:2:3 Svc.heartbeat.remoteURL: must be set because Svc.heartbeat.enable is true',
    ]);
  });

  it('treats the log-event section as in use when any source is on', () => {
    const text = (on: boolean) =>
      yaml(
        'Svc:',
        '  logEvents:',
        '    source:',
        '      proxy:',
        `        enable: ${String(on)}`,
        '    udpServerConfig:',
        '      portLogEvents: <PORT>',
      );
    expect(issuesOf(text(false))).toEqual([]);
    expect(lines(text(true))).toEqual([
      'svc.yaml:7:22 Svc.logEvents.udpServerConfig.portLogEvents: must be an integer between 1 and 65535 (got "<PORT>")',
    ]);
  });

  it('validates per-server user sessions only when enabled for that server', () => {
    const text = (on: boolean) =>
      yaml(
        'Svc:',
        '  serversToMonitor:',
        '    servers:',
        '      - host: node1.example.com:4747',
        '        serverName: node1',
        '        userSessions:',
        `          enable: ${String(on)}`,
        '          virtualProxies: <VPS>',
      );
    expect(issuesOf(text(false))).toEqual([]);
    expect(lines(text(true))).toEqual([
      'svc.yaml:6:9 Svc.serversToMonitor.servers[0].userSessions.host: must be set because Svc.serversToMonitor.servers[0].userSessions.enable is true',
      'svc.yaml:8:27 Svc.serversToMonitor.servers[0].userSessions.virtualProxies: must be a list (got "<VPS>")',
    ]);
  });
});

describe('tsdb version and its sub-section', () => {
  const tsdb = (...rows: string[]) => yaml('Svc:', '  tsdbConfig:', '    enable: true', ...rows);

  it('accepts only versions 1, 2 and 3', () => {
    expect(lines(tsdb('    version: 4'))).toEqual([
      'svc.yaml:4:14 Svc.tsdbConfig.version: must be one of 1, 2, 3 (got 4)',
    ]);
  });

  it("validates only the chosen version's sub-section", () => {
    const text = tsdb(
      '    version: 2',
      '    v1Config: <not used>',
      '    v3Config: {token: 5}',
      '    v2Config:',
      '      org: acme',
      '      token: t0k3n',
    );
    const { config } = parseConfigText(text, 'svc.yaml', {});
    expect(config.tsdbConfig.v2Config).toMatchObject({
      org: 'acme',
      token: 't0k3n',
      bucket: 'svc',
      retentionDuration: '10d',
    });
  });

  it('requires the chosen sub-section to be complete', () => {
    expect(lines(tsdb('    version: 2'))).toEqual([
      'svc.yaml:2:3 Svc.tsdbConfig.v2Config.org: must be set because Svc.tsdbConfig.version is 2',
      'svc.yaml:2:3 Svc.tsdbConfig.v2Config.token: must be set because Svc.tsdbConfig.version is 2',
    ]);
    expect(
      lines(tsdb('    version: 1', '    v1Config:', '      auth:', '        enable: true', '        username: writer')),
    ).toEqual([
      'svc.yaml:6:7 Svc.tsdbConfig.v1Config.auth.password: must be set because Svc.tsdbConfig.v1Config.auth.enable is true',
    ]);
    expect(lines(tsdb('    version: 3', '    v3Config:', '      retentionDuration: 10 days'))).toEqual([
      'svc.yaml:6:26 Svc.tsdbConfig.v3Config.retentionDuration: must be a duration of whole hours, days or weeks such as 10d (got "10 days")',
    ]);
  });
});

describe('secrets from the environment', () => {
  const text = yaml(
    'Svc:',
    '  auditEvents:',
    '    enable: true',
    '    apiToken: ${env:SVC_TEST_TOKEN}',
    '    port: ${env:SVC_TEST_PORT}',
  );

  it('replaces ${env:NAME} by the variable, converting numbers where the key wants one', () => {
    const { config } = parseConfigText(text, 'svc.yaml', { SVC_TEST_TOKEN: 's3cr3t-value', SVC_TEST_PORT: '9191' });
    expect(config.auditEvents.apiToken).toBe('s3cr3t-value');
    expect(config.auditEvents.port).toBe(9191);
  });

  it('reports a missing variable at its place', () => {
    expect(lines(text, { SVC_TEST_PORT: '9191' })).toEqual([
      'svc.yaml:4:15 Svc.auditEvents.apiToken: environment variable SVC_TEST_TOKEN is not set (referenced as ${env:SVC_TEST_TOKEN})',
    ]);
  });

  it('validates the value the variable supplies', () => {
    expect(lines(text, { SVC_TEST_TOKEN: 'x', SVC_TEST_PORT: 'http' })).toEqual([
      'svc.yaml:5:11 Svc.auditEvents.port: must be an integer between 1 and 65535 (got "http")',
    ]);
  });
});

describe('cross-field rules', () => {
  it('refuses telemetry without systemInfo, naming both keys', () => {
    const url = ['  anonTelemetrySettings:', '    url: https://collector.example.com/t'];
    const found = lines(yaml('Svc:', '  anonTelemetry: true', '  systemInfo:', '    enable: false', ...url));
    expect(found).toEqual([
      expect.stringMatching(
        /^svc\.yaml:2:18 Svc\.anonTelemetry: .*Svc\.anonTelemetry is true while Svc\.systemInfo\.enable is false/,
      ),
    ]);
    expect(issuesOf(yaml('Svc:', '  anonTelemetry: true', ...url))).toEqual([]);
  });

  it('requires every serverTagsDefinition name on every server, and no others', () => {
    const text = yaml(
      'Svc:',
      '  serversToMonitor:',
      '    serverTagsDefinition: [site, role]',
      '    servers:',
      '      - host: n1.example.com:4747',
      '        serverName: n1',
      '        serverTags: {site: lab, role: engine}',
      '      - host: n2.example.com:4747',
      '        serverName: n2',
      '        serverTags:',
      '          site: lab',
      '          rack: r1',
    );
    expect(lines(text)).toEqual([
      'svc.yaml:11:11 Svc.serversToMonitor.servers[1].serverTags: misses the tag "role" named in serverTagsDefinition',
      'svc.yaml:12:17 Svc.serversToMonitor.servers[1].serverTags.rack: tag "rack" not named in serverTagsDefinition',
    ]);
  });

  it('checks audit destination types', () => {
    const dest = (type: string, tsdb = false) =>
      yaml(
        'Svc:',
        '  auditEvents:',
        '    enable: true',
        '    destination:',
        '      enable: true',
        `      type: ${type}`,
        ...(tsdb ? ['  tsdbConfig:', '    enable: true'] : []),
      );
    expect(issuesOf(dest('parquet, json, tablefile'))).toEqual([]);
    expect(lines(dest('parquet, csv'))).toEqual([
      'svc.yaml:6:13 Svc.auditEvents.destination.type: must be a comma-delimited list of tsdb, parquet, tablefile, json (got "parquet, csv")',
    ]);
    expect(lines(dest('json,json'))).toEqual([
      'svc.yaml:6:13 Svc.auditEvents.destination.type: lists "json" more than once',
    ]);
    expect(lines(dest('tsdb'))).toEqual([
      'svc.yaml:6:13 Svc.auditEvents.destination.type: includes tsdb but Svc.tsdbConfig.enable is false',
    ]);
    expect(issuesOf(dest('tsdb', true))).toEqual([]);
  });

  it('refuses an audit static tag named like a built-in column', () => {
    const text = yaml(
      'Svc:',
      '  auditEvents:',
      '    enable: true',
      '    destination:',
      '      enable: true',
      '      parquet:',
      '        staticTags: [{name: event_type, value: x}]',
    );
    expect(lines(text)).toEqual([
      expect.stringMatching(
        /^svc\.yaml:7:29 Svc\.auditEvents\.destination\.parquet\.staticTags\[0\]\.name: "event_type" is a built-in column/,
      ),
    ]);
  });

  it('parses schedules with @breejs/later and names the failing position', () => {
    expect(lines(yaml('Svc:', '  uptimeMonitor:', '    frequency: every 15 minuts'))).toEqual([
      'svc.yaml:3:16 Svc.uptimeMonitor.frequency: cannot be parsed as a text schedule from position 9 ("minuts")',
    ]);
    expect(issuesOf(yaml('Svc:', '  uptimeMonitor:', '    frequency: every 30 seconds'))).toEqual([]);
  });

  it('refuses two enabled listeners on one port', () => {
    const text = yaml(
      'Svc:',
      '  auditEvents:',
      '    enable: true',
      '    port: 3100',
      '  configVisualisation:',
      '    enable: true',
    );
    expect(lines(text)).toEqual([
      'svc.yaml:5:3 Svc.configVisualisation.port: TCP port 3100 is already used by Svc.auditEvents.port',
    ]);
  });

  it('requires credentials for named monitoring-SaaS accounts', () => {
    const text = yaml(
      'Svc:',
      '  monsaas:',
      '    enable: true',
      '    metric:',
      '      url: https://metrics.example.com/v1',
      '      destinationAccount: [ops]',
    );
    expect(lines(text)).toEqual([
      'svc.yaml:6:28 Svc.monsaas.metric.destinationAccount[0]: account "ops" has no credentials in Svc.thirdPartyToolsCredentials.monsaas',
    ]);
  });

  it('warns (does not refuse) when a feature flag has its destination master switch off', () => {
    const { warnings } = parseConfigText(
      yaml('Svc:', '  userEvents:', '    enable: true', '    sendToTsdb:', '      enable: true'),
      'svc.yaml',
      {},
    );
    expect(warnings).toEqual([
      'Svc.userEvents.sendToTsdb.enable: is true but Svc.tsdbConfig.enable is false, so nothing is sent',
    ]);
  });
});

describe('choosing and reading the file', () => {
  it('takes --config, else SVC_CONFIG, else ./config/svc.yaml', () => {
    expect(chooseConfigFile('a.yaml', { SVC_CONFIG: 'b.yaml' })).toEqual({ file: 'a.yaml', source: 'option' });
    expect(chooseConfigFile(undefined, { SVC_CONFIG: 'b.yaml' })).toEqual({ file: 'b.yaml', source: 'SVC_CONFIG' });
    expect(chooseConfigFile(undefined, {})).toEqual({ file: './config/svc.yaml', source: 'default' });
  });

  it('refuses other extensions and missing files clearly', () => {
    expect(() => loadConfigFile('config.json')).toThrow(/must end in \.yaml or \.yml \(got "\.json"\)/);
    expect(() => loadConfigFile(join(tmpdir(), 'does-not-exist.yaml'))).toThrow(
      /cannot read the config file: no such file/,
    );
  });
});

describe('large files: every check is linear and the report is bounded', () => {
  /** A generated file just under MAX_CONFIG_BYTES: `count` unknown keys in Svc. */
  const unknownKeys = (count: number) =>
    `Svc:\n${Array.from({ length: count }, (_, i) => `  unknownKey${String(i).padStart(6, '0')}: ${i}\n`).join('')}`;

  it('reports every one of 40,000 unknown keys, and prints the first 50 and how many more', () => {
    const text = unknownKeys(40_000);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_CONFIG_BYTES);
    let error: unknown;
    try {
      parseConfigText(text, 'big.yaml', {});
    } catch (err) {
      error = err;
    }
    if (!(error instanceof ConfigError)) throw new Error('expected a ConfigError');
    expect(error.issues).toHaveLength(40_000);
    expect(formatIssue(error.issues[39_999] as ConfigIssue)).toMatch(
      /^big\.yaml:40001:3 Svc\.unknownKey039999: unknown key \(known keys here: logLevel,/,
    );
    const printed = formatIssues(error.issues);
    expect(printed).toHaveLength(MAX_PRINTED_ISSUES + 1);
    expect(printed[MAX_PRINTED_ISSUES]).toBe('… and 39,950 more problems (fix these and check again)');
    expect(error.message.split('\n')).toHaveLength(MAX_PRINTED_ISSUES + 2);
    expect(error.message.length).toBeLessThan(MAX_PRINTED_ISSUES * 600);
  });

  it('checks 10,000 servers with user sessions switched off (one lookup per key, not one per disabled section)', () => {
    const servers = Array.from(
      { length: 10_000 },
      (_, i) => `      - {host: "n${i}:4747", serverName: n${i}, userSessions: {enable: false, host: <unused>}}`,
    );
    const { config } = parseConfigText(yaml('Svc:', '  serversToMonitor:', '    servers:', ...servers), 'svc.yaml', {});
    expect(config.serversToMonitor.servers).toHaveLength(10_000);
    expect(config.serversToMonitor.servers[9_999]?.userSessions).toEqual({
      enable: false,
      host: '',
      virtualProxies: [],
    });
  });

  it('finds a repeated audit writer and missing server tags among tens of thousands of names', () => {
    const many = Array.from({ length: 30_000 }, () => 'json').join(',');
    const dest = lines(
      yaml(
        'Svc:',
        '  auditEvents:',
        '    enable: true',
        '    destination:',
        '      enable: true',
        `      type: ${many}`,
      ),
    );
    expect(dest).toEqual(['svc.yaml:6:13 Svc.auditEvents.destination.type: lists "json" more than once']);
    const tagNames = Array.from({ length: 20_000 }, (_, i) => `t${i}`);
    const tags = lines(
      yaml(
        'Svc:',
        '  serversToMonitor:',
        `    serverTagsDefinition: [${tagNames.join(', ')}]`,
        '    servers:',
        '      - {host: "n1:4747", serverName: n1}',
      ),
    );
    expect(tags).toEqual([
      'svc.yaml:5:9 Svc.serversToMonitor.servers[0].serverTags: misses the tags "t0", "t1", "t2", "t3", "t4" and 19995 more named in serverTagsDefinition',
    ]);
  });

  it('rejects a 500,000-character URL ending in a space (the URL pattern backtracks linearly)', () => {
    const url = `https://${'a'.repeat(500_000)} `;
    expect(lines(yaml('Svc:', '  heartbeat:', '    enable: true', `    remoteURL: "${url}"`))).toEqual([
      `svc.yaml:4:16 Svc.heartbeat.remoteURL: must be an absolute http:// or https:// URL (got "https://${'a'.repeat(31)}…")`,
    ]);
  });

  it('quotes at most 40 characters of any value, key or name from the file', () => {
    const long = 'x'.repeat(100_000);
    // YAML itself caps a key at 1024 characters.
    const found = lines(
      yaml(
        'Svc:',
        `  logLevel: ${long}`,
        `  ${long.slice(0, 1000)}: 1`,
        '  userEvents:',
        '    enable: true',
        `    tags: [{name: "${long} y", value: a}]`,
      ),
    );
    expect(found).toEqual([
      `svc.yaml:2:13 Svc.logLevel: must be one of silly, debug, verbose, info, warn, error (got "${'x'.repeat(39)}…")`,
      expect.stringMatching(/^svc\.yaml:3:3 Svc\.x{195}…: unknown key \(known keys here: /),
      `svc.yaml:6:19 Svc.userEvents.tags[0].name: must be a name of letters, digits and _ that starts with a letter and is not "time" (got "${'x'.repeat(39)}…")`,
    ]);
    for (const line of found) expect(line.length).toBeLessThan(MAX_PATH_CHARS + MAX_MESSAGE_CHARS + 40);
  });
});

describe('no message shows the value of a secret', () => {
  const SECRET = 'Zx9-not-for-your-eyes-94970565497315';
  const expectHidden = (found: string[], ...hidden: string[]) => {
    expect(found.length).toBeGreaterThan(0);
    for (const line of found) for (const value of [SECRET, ...hidden]) expect(line).not.toContain(value);
  };

  it("says a secret has the wrong type without quoting it (the tester's apiToken: 94970565497315)", () => {
    const found = lines(yaml('Svc:', '  auditEvents:', '    enable: true', '    apiToken: 94970565497315'));
    expect(found).toEqual([
      'svc.yaml:4:15 Svc.auditEvents.apiToken: must be a string (got a number; the value of a secret is not shown)',
    ]);
  });

  it('says a secret breaks its pattern by its length only', () => {
    const found = lines(
      yaml(
        'Svc:',
        '  userEvents:',
        '    enable: true',
        '    sendToMonSaas:',
        '      enable: true',
        '      scrambleSecret: Zx9-short',
      ),
    );
    expect(found).toEqual([
      'svc.yaml:6:23 Svc.userEvents.sendToMonSaas.scrambleSecret: must be empty or at least 16 characters (got a text of 9 characters; the value of a secret is not shown)',
    ]);
  });

  it('hides secrets inside lists and secret-valued mappings, and secrets from the environment', () => {
    const found = lines(
      yaml(
        'Svc:',
        '  thirdPartyToolsCredentials:',
        `    monsaas: [{accountName: ops, accountId: "1", insertApiKey: [${SECRET}]}]`,
        '  serversToMonitor:',
        '    servers:',
        `      - {host: "n1:4747", serverName: n1, headers: {X-Api-Key: 94970565497315}}`,
        '  userEvents:',
        '    enable: true',
        '    sendToMonSaas:',
        '      enable: true',
        '      scrambleSecret: ${env:SCRAMBLE}',
      ),
      { SCRAMBLE: 'Zx9-from-env' },
    );
    expect(found).toEqual([
      'svc.yaml:3:64 Svc.thirdPartyToolsCredentials.monsaas[0].insertApiKey: must be a non-empty string (got a list)',
      'svc.yaml:6:64 Svc.serversToMonitor.servers[0].headers.X-Api-Key: must be a string (got a number; the value of a secret is not shown)',
      'svc.yaml:11:23 Svc.userEvents.sendToMonSaas.scrambleSecret: must be empty or at least 16 characters (got a text of 12 characters; the value of a secret is not shown)',
    ]);
    expectHidden(found, '94970565497315', 'Zx9-from-env');
  });

  it('does not echo the value of a misspelled secret key ("did you mean")', () => {
    const found = lines(yaml('Svc:', '  auditEvents:', '    enable: true', `    apitoken: ${SECRET}`));
    expect(found).toEqual(['svc.yaml:4:5 Svc.auditEvents.apitoken: unknown key; did you mean "apiToken"?']);
    expectHidden(found);
  });

  it('redacts a secret that a rule would quote as a name (an API key pasted as the account name)', () => {
    const found = lines(
      yaml(
        'Svc:',
        '  thirdPartyToolsCredentials:',
        `    monsaas: [{accountName: ops, accountId: "1", insertApiKey: ${SECRET}}]`,
        '  monsaas:',
        '    enable: true',
        '    metric:',
        '      url: https://metrics.example.com/v1',
        `      destinationAccount: [${SECRET}]`,
      ),
    );
    expect(found).toEqual([
      'svc.yaml:8:28 Svc.monsaas.metric.destinationAccount[0]: account "[REDACTED]" has no credentials in Svc.thirdPartyToolsCredentials.monsaas',
    ]);
  });
});

/**
 * Cross-field rules: what one key alone cannot say. Run after the schema passed, on the config
 * with defaults. Errors stop the start; warnings are logged.
 */
import { BUILT_IN_RULE_NAMES, placeholders, SUMMARY_NAMES } from '../alerts/rules/definitions.js';
import { FIELD_NAMES, fieldSpec } from '../alerts/rules/fields.js';
import { AUDIT_COLUMN_NAMES } from '../audit/datamodel.js';
import { MONSAAS_LOG_EVENT_ATTRIBUTES, MONSAAS_USER_EVENT_ATTRIBUTES } from '../destinations/monsaas/attributes.js';
import { BUILT_IN_POINT_NAMES, LOG_EVENT_MEASUREMENT, USER_EVENTS_MEASUREMENT } from '../destinations/tsdb/names.js';
import { BUILT_IN_LABELS, LABEL_NAME } from '../platform/metrics-endpoint.js';
import { builtInNamesLike, SERVER_TAG_MEASUREMENTS } from '../platform/tags.js';
import { getPath, isRecord } from '../util/records.js';
import { TAG_NAME_PATTERN } from './builders.js';
import { closest } from './closest.js';
import { quote, type RuleFinding } from './errors.js';
import { logListenerEnabled } from './outputs.js';
import { placementFindings } from './placement.js';
import { ConfigFileSchema, type SvcConfig } from './schema.js';
import { type PathSegment, type SchemaNode, schemaAt } from './walk.js';

/** Parses `destination.type`: the distinct writer names in order. */
export function auditDestinationTypes(type: string): string[] {
  return [
    ...new Set(
      type
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== ''),
    ),
  ];
}

/** Names from the file in a message: each quoted (so bounded), at most five, then how many more. */
function names(list: readonly string[]): string {
  const shown = list.slice(0, 5).map(quote).join(', ');
  return list.length > 5 ? `${shown} and ${list.length - 5} more` : shown;
}

export function checkRules(c: SvcConfig): RuleFinding[] {
  const out: RuleFinding[] = [];
  const error = (path: PathSegment[], message: string) => out.push({ severity: 'error', path, message });
  const warn = (path: PathSegment[], message: string) => out.push({ severity: 'warning', path, message });

  if (c.anonTelemetry && !c.systemInfo.enable) {
    error(
      ['anonTelemetry'],
      'telemetry needs host information: Svc.anonTelemetry is true while Svc.systemInfo.enable is false; turn telemetry off or systemInfo on',
    );
  }
  if (c.anonTelemetry && c.anonTelemetrySettings.url === '') {
    error(['anonTelemetrySettings', 'url'], 'must be set: Svc.anonTelemetry is true');
  }

  const defined = c.serversToMonitor.serverTagsDefinition;
  const definedSet = new Set(defined);
  c.serversToMonitor.servers.forEach((server, i) => {
    const given = Object.keys(server.serverTags);
    const missing = defined.filter((name) => !Object.hasOwn(server.serverTags, name));
    const extra = given.filter((name) => !definedSet.has(name));
    if (missing.length > 0)
      error(
        ['serversToMonitor', 'servers', i, 'serverTags'],
        `misses the tag${missing.length > 1 ? 's' : ''} ${names(missing)} named in serverTagsDefinition`,
      );
    if (extra.length > 0)
      error(
        ['serversToMonitor', 'servers', i, 'serverTags', extra[0] ?? ''],
        `tag${extra.length > 1 ? 's' : ''} ${names(extra)} not named in serverTagsDefinition`,
      );
  });

  checkServerTagNames(c, error);
  checkMetricLabels(c, error);
  checkAlerts(c, error, warn);
  out.push(...placementFindings(c));

  const audit = c.auditEvents;
  if (audit.enable && audit.destination.enable) {
    const once = new Set<string>();
    const dupes = new Set<string>();
    for (const t of audit.destination.type.split(',').map((w) => w.trim())) (once.has(t) ? dupes : once).add(t);
    if (dupes.size > 0) error(['auditEvents', 'destination', 'type'], `lists ${names([...dupes])} more than once`);
    if (auditDestinationTypes(audit.destination.type).includes('tsdb') && !c.tsdbConfig.enable) {
      error(['auditEvents', 'destination', 'type'], 'includes tsdb but Svc.tsdbConfig.enable is false');
    }
    // A static tag becomes a tag or column next to the built-in ones: a name cannot be both.
    for (const writer of ['tsdb', 'parquet', 'tablefile'] as const) {
      audit.destination[writer].staticTags.forEach((tag, i) => {
        if (AUDIT_COLUMN_NAMES.has(tag.name))
          error(
            ['auditEvents', 'destination', writer, 'staticTags', i, 'name'],
            `${quote(tag.name)} is a built-in column of audit events (docs/data-model.md); choose another name`,
          );
      });
    }
  }

  // Destination gating (platform-formats.md §0.6): a feature flag without its master switch writes nothing.
  const gated: [boolean, boolean, PathSegment[], string][] = [
    [
      c.userEvents.enable && c.userEvents.sendToTsdb.enable,
      c.tsdbConfig.enable,
      ['userEvents', 'sendToTsdb', 'enable'],
      'Svc.tsdbConfig.enable',
    ],
    [
      c.userEvents.enable && c.userEvents.sendToMQTT.enable,
      c.mqttConfig.enable,
      ['userEvents', 'sendToMQTT', 'enable'],
      'Svc.mqttConfig.enable',
    ],
    [
      c.userEvents.enable && c.userEvents.sendToMonSaas.enable,
      c.monsaas.enable,
      ['userEvents', 'sendToMonSaas', 'enable'],
      'Svc.monsaas.enable',
    ],
    [
      c.logEvents.sendToTsdb.enable,
      c.tsdbConfig.enable,
      ['logEvents', 'sendToTsdb', 'enable'],
      'Svc.tsdbConfig.enable',
    ],
    [
      c.logEvents.sendToMQTT.enable,
      c.mqttConfig.enable,
      ['logEvents', 'sendToMQTT', 'enable'],
      'Svc.mqttConfig.enable',
    ],
    [
      c.logEvents.sendToMonSaas.enable,
      c.monsaas.enable,
      ['logEvents', 'sendToMonSaas', 'enable'],
      'Svc.monsaas.enable',
    ],
    [
      c.errorTracking.enable && c.errorTracking.tsdb.enable,
      c.tsdbConfig.enable,
      ['errorTracking', 'tsdb', 'enable'],
      'Svc.tsdbConfig.enable',
    ],
    [
      c.uptimeMonitor.enable && c.uptimeMonitor.storeInTsdb.svcMemoryUsage,
      c.tsdbConfig.enable,
      ['uptimeMonitor', 'storeInTsdb', 'svcMemoryUsage'],
      'Svc.tsdbConfig.enable',
    ],
  ];
  for (const [feature, master, path, masterName] of gated) {
    if (feature && !master) warn(path, `is true but ${masterName} is false, so nothing is sent`);
  }

  // App names come only from the app-name poller (platform-formats.md §1.4, §2.4).
  const perf = c.logEvents.enginePerformanceMonitor;
  if (
    c.logEvents.source.apiPerf.enable &&
    perf.enable &&
    perf.appNameLookup.enable &&
    !c.appNames.enableAppNameExtract
  ) {
    warn(
      ['logEvents', 'enginePerformanceMonitor', 'appNameLookup', 'enable'],
      'is true but Svc.appNames.enableAppNameExtract is false, so no app name is ever found (app_name stays empty and app-name rules of the filter never match)',
    );
  }

  // Accounts named for the monitoring SaaS must have credentials.
  const accounts = new Set(c.thirdPartyToolsCredentials.monsaas.map((a) => a.accountName));
  const accountLists: [boolean, string[], PathSegment[]][] = [
    [c.monsaas.enable, c.monsaas.metric.destinationAccount, ['monsaas', 'metric', 'destinationAccount']],
    [
      c.userEvents.enable && c.userEvents.sendToMonSaas.enable,
      c.userEvents.sendToMonSaas.destinationAccount,
      ['userEvents', 'sendToMonSaas', 'destinationAccount'],
    ],
    [
      c.logEvents.sendToMonSaas.enable,
      c.logEvents.sendToMonSaas.destinationAccount,
      ['logEvents', 'sendToMonSaas', 'destinationAccount'],
    ],
    [
      c.uptimeMonitor.enable && c.uptimeMonitor.storeMonSaas.enable,
      c.uptimeMonitor.storeMonSaas.destinationAccount,
      ['uptimeMonitor', 'storeMonSaas', 'destinationAccount'],
    ],
  ];
  for (const [on, names, path] of accountLists) {
    if (!on) continue;
    names.forEach((name, i) => {
      if (!accounts.has(name))
        error([...path, i], `account ${quote(name)} has no credentials in Svc.thirdPartyToolsCredentials.monsaas`);
    });
  }
  // Uptime metrics go to monsaas.metric.url with its headers (§8.2), settings the loader keeps only
  // while monsaas.enable is true (file convention 4): Svc choice, the switch is needed for them too.
  if (c.uptimeMonitor.enable && c.uptimeMonitor.storeMonSaas.enable && !c.monsaas.enable) {
    error(
      ['uptimeMonitor', 'storeMonSaas', 'enable'],
      'is true but Svc.monsaas.enable is false: the uptime metrics go to Svc.monsaas.metric.url, which is used only while Svc.monsaas.enable is true (that switch alone sends nothing else)',
    );
  }
  const sendsEvents = (c.userEvents.enable && c.userEvents.sendToMonSaas.enable) || c.logEvents.sendToMonSaas.enable;
  if (c.monsaas.enable && sendsEvents && c.monsaas.event.url === '') {
    error(['monsaas', 'event', 'url'], 'must be set: user or log events are sent to the monitoring SaaS');
  }

  checkPlatformNames(c, error);

  // Two enabled listeners cannot share a port.
  const listeners: [boolean, 'tcp' | 'udp', number, PathSegment[]][] = [
    [audit.enable, 'tcp', audit.port, ['auditEvents', 'port']],
    [c.configVisualisation.enable, 'tcp', c.configVisualisation.port, ['configVisualisation', 'port']],
    [c.containerHealthCheck.enable, 'tcp', c.containerHealthCheck.port, ['containerHealthCheck', 'port']],
    [c.metricsEndpoint.enable, 'tcp', c.metricsEndpoint.port, ['metricsEndpoint', 'port']],
    [
      c.userEvents.enable,
      'udp',
      c.userEvents.udpServerConfig.portUserActivityEvents,
      ['userEvents', 'udpServerConfig', 'portUserActivityEvents'],
    ],
    [
      logListenerEnabled(c),
      'udp',
      c.logEvents.udpServerConfig.portLogEvents,
      ['logEvents', 'udpServerConfig', 'portLogEvents'],
    ],
  ];
  const seen = new Map<string, PathSegment[]>();
  for (const [on, proto, port, path] of listeners) {
    if (!on) continue;
    const key = `${proto}/${port}`;
    const first = seen.get(key);
    if (first) error(path, `${proto.toUpperCase()} port ${port} is already used by Svc.${first.join('.')}`);
    else seen.set(key, path);
  }
  return out;
}

/**
 * §6.0 last row, for server tags: a `serverTags` name must not be a built-in tag of a measurement the
 * server's data goes to (§6.1 always, §6.2 when its sessions are polled), which it would replace in
 * every output (tsdb, MQTT, monsaas); and while the tsdb is written, it must not be a built-in field
 * of one either (a point cannot hold a name as a tag and a field) nor `time`. Each clash is reported
 * at the server's tag, naming the server and what it clashes with.
 */
function checkServerTagNames(c: SvcConfig, error: (path: PathSegment[], message: string) => void): void {
  const { health, sessions } = SERVER_TAG_MEASUREMENTS;
  const toTsdb = c.tsdbConfig.enable;
  c.serversToMonitor.servers.forEach((server, i) => {
    const sessionsPolled =
      c.userSessions.enableSessionExtract &&
      server.userSessions.enable &&
      server.userSessions.virtualProxies.length > 0;
    const measurements = sessionsPolled ? [...health, ...sessions] : health;
    for (const name of Object.keys(server.serverTags)) {
      const path: PathSegment[] = ['serversToMonitor', 'servers', i, 'serverTags', name];
      const tag = `server tag ${quote(name)} of server ${quote(server.serverName)}`;
      if (toTsdb && name === 'time') {
        error(path, `${tag} is named like the time column of the tsdb; choose another name`);
        continue;
      }
      const clashes = builtInNamesLike(name, measurements).filter((found) => found.kind === 'tag' || toTsdb);
      if (clashes.length === 0) continue;
      const what = clashes.map(
        ({ kind, measurements: having, sections }) =>
          `the built-in ${kind} ${name} of the tsdb measurement${having.length > 1 ? 's' : ''} ${having.join(', ')} (platform-formats.md ${sections.map((section) => `§${section}`).join(', ')})`,
      );
      error(path, `${tag} clashes with ${what.join(' and ')}; choose another name`);
    }
  });
}

/**
 * The metrics endpoint (platform-formats.md §9) puts the server tags on every metric as labels,
 * next to its own: a `serverTagsDefinition` name (the schema already holds it to Prometheus's label
 * syntax) must not start with `__` (reserved by Prometheus), must not be one of the endpoint's own
 * labels, and must be listed once.
 */
function checkMetricLabels(c: SvcConfig, error: (path: PathSegment[], message: string) => void): void {
  if (!c.metricsEndpoint.enable) return;
  const seen = new Set<string>();
  c.serversToMonitor.serverTagsDefinition.forEach((name, i) => {
    const path: PathSegment[] = ['serversToMonitor', 'serverTagsDefinition', i];
    if (!LABEL_NAME.test(name) || name.startsWith('__'))
      error(
        path,
        `${quote(name)} cannot be a label of the metrics endpoint: use letters, digits and _, not starting with __`,
      );
    else if (BUILT_IN_LABELS.has(name))
      error(
        path,
        `${quote(name)} is a built-in label of the metrics endpoint (platform-formats.md §9); choose another name`,
      );
    else if (seen.has(name)) error(path, `tag ${quote(name)} is listed more than once`);
    seen.add(name);
  });
}

type Report = (path: PathSegment[], message: string) => void;
type AlertRuleConfig = SvcConfig['alerts']['rules'][number];
type AlertConditionConfig = AlertRuleConfig['expr'];

/**
 * `Svc.alerts` (docs/alerts.md): each rule's conditions against the field catalog
 * (shared/alerts/rules/fields.ts), its summary's placeholders against the labels its alerts will
 * have, names unique and not a built-in rule's; channels complete for their type and named once;
 * routes naming known channels. Alerts keep their state in the embedded store: without it they are
 * off (a warning).
 */
function checkAlerts(c: SvcConfig, error: Report, warn: Report): void {
  const alerts = c.alerts;
  if (!alerts.enable) return;
  if (!c.store.enable)
    warn(
      ['alerts', 'enable'],
      'alerts are off: they keep their state in the embedded store, and Svc.store.enable is false; turn the store on or alerts off',
    );
  // A built-in rule's windows: a rate or an increase over no time is always 0.
  for (const [name, settings] of Object.entries(alerts.builtIn)) {
    if (!settings.enable) continue;
    const windows = [
      ['window', 'window' in settings ? settings.window : null],
      ['baseline', 'baseline' in settings ? settings.baseline : null],
    ] as const;
    for (const [key, window] of windows)
      if (window === '0')
        error(['alerts', 'builtIn', name, key], 'must be longer than 0: the rule reads the values over it');
  }
  const builtIn: ReadonlySet<string> = new Set(BUILT_IN_RULE_NAMES);
  const ruleNames = new Map<string, number>();
  alerts.rules.forEach((rule, i) => {
    const path: PathSegment[] = ['alerts', 'rules', i];
    if (builtIn.has(rule.name))
      error(
        [...path, 'name'],
        `${quote(rule.name)} is a built-in rule's name (Svc.alerts.builtIn); choose another name`,
      );
    const first = ruleNames.get(rule.name);
    if (first !== undefined)
      error([...path, 'name'], `${quote(rule.name)} is already the name of Svc.alerts.rules[${first}]`);
    else ruleNames.set(rule.name, i);
    const labels = checkCondition(rule.expr, [...path, 'expr'], error);
    rule.and.forEach((condition, j) => checkCondition(condition, [...path, 'and', j], error));
    // The alert's labels: the rule's own and its first condition's series' (unknown when the field is).
    if (labels === null) return;
    const known = new Set([...SUMMARY_NAMES, ...Object.keys(rule.labels), ...labels]);
    const unfilled = [...new Set(placeholders(rule.summary))].filter((name) => !known.has(name));
    if (unfilled.length > 0)
      error(
        [...path, 'summary'],
        `${names(unfilled.map((name) => `{{${name}}}`))} will never be filled: the alerts of this rule have the labels ${names([...labels, ...Object.keys(rule.labels)])}, besides ${names(SUMMARY_NAMES)}`,
      );
  });

  const channelNames = new Map<string, number>();
  alerts.channels.forEach((channel, i) => {
    const path: PathSegment[] = ['alerts', 'channels', i];
    const first = channelNames.get(channel.name);
    if (first !== undefined)
      error([...path, 'name'], `${quote(channel.name)} is already the name of Svc.alerts.channels[${first}]`);
    else channelNames.set(channel.name, i);
    switch (channel.type) {
      case 'webhook':
      case 'slack':
      case 'teams':
        if (channel.url === '') error([...path, 'url'], `must be set: the ${channel.type} channel posts to it`);
        break;
      case 'email': {
        const missing: [string[], boolean][] = [
          [['smtp', 'host'], channel.email.smtp.host === ''],
          [['from'], channel.email.from === ''],
          [['to'], channel.email.to.length === 0],
        ];
        for (const [key, empty] of missing)
          if (empty) error([...path, 'email', ...key], 'must be set: the email channel sends through it');
        break;
      }
      case 'mqtt':
        if (!c.mqttConfig.enable)
          error(
            [...path, 'type'],
            'is mqtt but Svc.mqttConfig.enable is false: the channel publishes on the broker of Svc.mqttConfig',
          );
        break;
    }
  });
  alerts.routes.forEach((route, i) =>
    route.channels.forEach((name, j) => {
      if (channelNames.has(name)) return;
      const suggestion = closest(name, [...channelNames.keys()]);
      error(
        ['alerts', 'routes', i, 'channels', j],
        `${quote(name)} is not a channel of Svc.alerts.channels${suggestion ? `; did you mean ${quote(suggestion)}?` : ''}`,
      );
    }),
  );
}

/** One condition against the catalog; answers the labels its series keep, or null when its field is unknown. */
function checkCondition(condition: AlertConditionConfig, path: PathSegment[], error: Report): string[] | null {
  const spec = fieldSpec(condition.field);
  if (spec === undefined) {
    const suggestion = closest(condition.field, FIELD_NAMES);
    error(
      [...path, 'field'],
      `${quote(condition.field)} is not a field of the catalog (docs/alerts.md)${suggestion ? `; did you mean ${quote(suggestion)}?` : ''}`,
    );
    return null;
  }
  const has: ReadonlySet<string> = new Set(spec.labels);
  const labelsAre = `${spec.name} has the labels ${names([...spec.labels])}`;
  for (const label of Object.keys(condition.where))
    if (!has.has(label)) error([...path, 'where', label], `${quote(label)} is not a label of the field: ${labelsAre}`);
  condition.by.forEach((label, i) => {
    if (!has.has(label)) error([...path, 'by', i], `${quote(label)} is not a label of the field: ${labelsAre}`);
  });
  if (condition.baseline.factor > 0 && condition.aggregate !== 'perMinute')
    error(
      [...path, 'baseline', 'factor'],
      `a baseline compares rates: it needs aggregate perMinute (the aggregate is ${condition.aggregate})`,
    );
  if (condition.aggregate !== 'last' && condition.window === '0')
    error([...path, 'window'], `must be longer than 0: ${condition.aggregate} reads the values over it`);
  if (condition.baseline.factor > 0 && condition.baseline.window === '0')
    error([...path, 'baseline', 'window'], 'must be longer than 0: the baseline is the rate over it');
  return condition.by.length > 0 ? condition.by.filter((label) => has.has(label)) : [...spec.labels];
}

const TAG_NAME = new RegExp(TAG_NAME_PATTERN);
const USER_ATTRIBUTES: ReadonlySet<string> = new Set(MONSAAS_USER_EVENT_ATTRIBUTES);
const LOG_ATTRIBUTES: ReadonlySet<string> = new Set(MONSAAS_LOG_EVENT_ATTRIBUTES);

/**
 * Configured names that become tsdb tags or monsaas attributes of the platform's UDP events
 * (platform-formats.md §6.0 last row, §8.3 last line), checked for the features that are on:
 * - `userEvents.tags[]` (when `userEvents.enable`), `logEvents.tags[]` and the category names of
 *   `logEvents.categorise` rules and `ruleDefault` (when the log listener runs and categorisation,
 *   resp. the default rule, is on) match `^[A-Za-z][A-Za-z0-9_]*$` and are not `time`;
 * - when the events go to the tsdb (`sendToTsdb.enable`), none equals a built-in tag or field name of
 *   `user_events` (§6.3) / `log_event` (§6.4);
 * - when they go to monsaas (`sendToMonSaas.enable`), none equals a built-in attribute name of the
 *   event (`eventType`, `timestamp`, `qs_…`, `svcVersion`), and neither does a
 *   `monsaas.event.attribute.static[]` name (when `monsaas.enable`);
 * - (Svc choice) a tag list names each tag once, and no category is named like a `logEvents.tags[]`
 *   tag: a point or event cannot carry a name twice.
 */
function checkPlatformNames(c: SvcConfig, error: (path: PathSegment[], message: string) => void): void {
  const nameRule = (path: PathSegment[], name: string): boolean => {
    if (name === 'time')
      error(path, '"time" cannot be a tag name (it is the time column of the tsdb); choose another name');
    else if (!TAG_NAME.test(name))
      error(path, `${quote(name)} is not a valid tag name: use letters, digits and _, starting with a letter`);
    else return true;
    return false;
  };
  const builtIn = (
    path: PathSegment[],
    name: string,
    measurement: typeof USER_EVENTS_MEASUREMENT | typeof LOG_EVENT_MEASUREMENT,
    toTsdb: boolean,
    attributes: ReadonlySet<string> | null,
  ): void => {
    const section = measurement === USER_EVENTS_MEASUREMENT ? '§6.3' : '§6.4';
    if (toTsdb && BUILT_IN_POINT_NAMES[measurement].has(name)) {
      error(
        path,
        `${quote(name)} is a built-in tag or field of the tsdb measurement ${measurement} (platform-formats.md ${section}); choose another name`,
      );
    } else if (attributes !== null && attributes.has(name)) {
      error(
        path,
        `${quote(name)} is a built-in attribute of the monitoring-SaaS event (platform-formats.md §8.3); choose another name`,
      );
    }
  };
  const tagList = (
    base: PathSegment[],
    tags: readonly { name: string }[],
    measurement: typeof USER_EVENTS_MEASUREMENT | typeof LOG_EVENT_MEASUREMENT,
    toTsdb: boolean,
    attributes: ReadonlySet<string> | null,
  ): void => {
    const seen = new Set<string>();
    tags.forEach((tag, i) => {
      const path = [...base, i, 'name'];
      if (!nameRule(path, tag.name)) return;
      if (seen.has(tag.name)) error(path, `tag ${quote(tag.name)} is listed more than once`);
      seen.add(tag.name);
      builtIn(path, tag.name, measurement, toTsdb, attributes);
    });
  };

  const monsaas = c.monsaas.enable;
  const user = c.userEvents;
  const userToMonSaas = user.enable && user.sendToMonSaas.enable;
  if (user.enable)
    tagList(
      ['userEvents', 'tags'],
      user.tags,
      USER_EVENTS_MEASUREMENT,
      user.sendToTsdb.enable,
      userToMonSaas ? USER_ATTRIBUTES : null,
    );

  const log = c.logEvents;
  const logOn = logListenerEnabled(c);
  const logToMonSaas = logOn && log.sendToMonSaas.enable;
  if (logOn) {
    const logAttributes = logToMonSaas ? LOG_ATTRIBUTES : null;
    tagList(['logEvents', 'tags'], log.tags, LOG_EVENT_MEASUREMENT, log.sendToTsdb.enable, logAttributes);
    const tagNames = new Set(log.tags.map((t) => t.name));
    const category = (path: PathSegment[], name: string): void => {
      if (!nameRule(path, name)) return;
      if (tagNames.has(name))
        error(path, `category ${quote(name)} has the name of a tag in Svc.logEvents.tags; choose another name`);
      else builtIn(path, name, LOG_EVENT_MEASUREMENT, log.sendToTsdb.enable, logAttributes);
    };
    const categorise = log.categorise;
    if (categorise.enable) {
      categorise.rules.forEach((rule, r) =>
        rule.category.forEach((cat, k) =>
          category(['logEvents', 'categorise', 'rules', r, 'category', k, 'name'], cat.name),
        ),
      );
      if (categorise.ruleDefault.enable)
        categorise.ruleDefault.category.forEach((cat, k) =>
          category(['logEvents', 'categorise', 'ruleDefault', 'category', k, 'name'], cat.name),
        );
    }
  }

  if (monsaas && (userToMonSaas || logToMonSaas)) {
    const attributes = new Set([...(userToMonSaas ? USER_ATTRIBUTES : []), ...(logToMonSaas ? LOG_ATTRIBUTES : [])]);
    c.monsaas.event.attribute.static.forEach((attribute, i) => {
      if (attributes.has(attribute.name))
        error(
          ['monsaas', 'event', 'attribute', 'static', i, 'name'],
          `${quote(attribute.name)} is a built-in attribute of the monitoring-SaaS events (platform-formats.md §8.3); choose another name`,
        );
    });
  }
}

/** A feature the schema has settings for but Svc does not have yet. */
export interface NotBuilt {
  /** The feature's key or section below `Svc`; the docs mark it and everything below it. */
  key: readonly string[];
  /** The key (or section of keys) that turns it on, when not `key` itself. */
  switches?: readonly string[];
  /** The feature, as it reads in "…, but <feature> is not built yet". */
  feature: string;
}

/**
 * Every feature switch whose feature is not built yet: THE list. `svc validate-config` prints a
 * warning for each one a file turns on (defaults included), start-up logs the same at WARN, the
 * generated docs mark the keys, and the README's "Not built yet" list is checked against it.
 * Building a feature removes its entry.
 */
export const NOT_BUILT: readonly NotBuilt[] = [];

const ROOT = ConfigFileSchema as SchemaNode;

/** The keys at or below `path` that are on: true, a non-empty text or a non-empty list. */
function onAt(value: unknown, path: PathSegment[]): PathSegment[][] {
  if (value === true || (typeof value === 'string' && value !== '') || (Array.isArray(value) && value.length > 0))
    return [path];
  if (isRecord(value)) return Object.entries(value).flatMap(([key, child]) => onAt(child, [...path, key]));
  return [];
}

/** A warning for every switch of NOT_BUILT this config turns on; a default that is on says so. */
export function notBuiltFindings(c: SvcConfig, entries: readonly NotBuilt[] = NOT_BUILT): RuleFinding[] {
  return entries.flatMap(({ key, switches = key, feature }) =>
    onAt(getPath(c, switches), [...switches]).map((path): RuleFinding => {
      const value = getPath(c, path);
      const byDefault = schemaAt(ROOT, ['Svc', ...path])?.default === value ? ' (the default)' : '';
      const state =
        value === true
          ? `is true${byDefault}`
          : Array.isArray(value)
            ? `lists ${value.length} item${value.length === 1 ? '' : 's'}`
            : 'is set';
      return {
        severity: 'warning',
        path,
        message: `${state}, but ${feature} is not built yet: this setting has no effect`,
      };
    }),
  );
}

/** For the generated docs: the not-built feature whose key is exactly `path` (below Svc), if any. */
export function notBuiltFeature(path: readonly string[]): string | undefined {
  return NOT_BUILT.find(({ key }) => key.length === path.length && key.every((seg, i) => seg === path[i]))?.feature;
}

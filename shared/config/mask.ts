/**
 * Masking of the config for the config web view (platform-formats.md §10.7): a pure function from a
 * config (the value of `Svc`) to a masked deep copy, used on the server so that the page never
 * receives a secret.
 *
 * - Full mask: the value becomes `**********`; objects and arrays below keep their structure and
 *   every leaf is masked; `null` stays `null`. By key name (MASKED_KEY, at any depth) and by path
 *   (FULL_MASK_PATHS); full wins over partial.
 * - Partial mask: the first N characters (of the value as text) + `**********` (PARTIAL_MASKS).
 * - Svc choices: a value the schema marks secret (`x-secret`, `x-secret-values`: secrets.ts) is
 *   always fully masked, and so is every key of the regex and path list: `obfuscate: false` only
 *   turns the partial masks off (host names, topics, certificate paths become readable), never the
 *   secrets. A URL's `user:password@` is replaced by `**********@` in every shown text, before a
 *   partial mask takes its first characters, so a password in a URL never shows either.
 */
import { isRecord } from '../util/records.js';
import { isSecretPath } from './secrets.js';
import type { PathSegment } from './walk.js';

export const MASK = '**********';

/** §10.7: a key whose name matches is fully masked, at any depth. */
export const MASKED_KEY =
  /(password|passwd|pwd|secret|token|api[_-]?key|api[_-]?token|access[_-]?key|passphrase|client[_-]?secret)/i;

/**
 * A path below `Svc`, written as in the spec: `.` between keys, `[]` = every element of an array,
 * `*` = every key of a mapping.
 */
export type MaskPath = string;

/** §10.7 full masks by path (a prefix: everything below is masked too). */
export const FULL_MASK_PATHS: readonly MaskPath[] = [
  'monsaas.event.header[].value',
  'monsaas.metric.header[].value',
  'serversToMonitor.servers[].headers.*',
];

/** §10.7 partial masks: the first N characters stay. */
export const PARTIAL_MASKS: readonly { n: number; paths: readonly MaskPath[] }[] = [
  {
    n: 3,
    paths: [
      'configVisualisation.host',
      'userEvents.udpServerConfig.serverHost',
      'logEvents.udpServerConfig.serverHost',
      'userEvents.udpServerConfig.allowedSources[]',
      'logEvents.udpServerConfig.allowedSources[]',
      'mqttConfig.brokerHost',
      'metricsEndpoint.host',
      'tsdbConfig.host',
      'tsdbConfig.v2Config.org',
      'tsdbConfig.v2Config.bucket',
      'tsdbConfig.v1Config.auth.username',
      'appNames.hostIP',
      'thirdPartyToolsCredentials.monsaas[].accountId',
      'serversToMonitor.servers[].host',
      'serversToMonitor.servers[].userSessions.host',
      'serversToMonitor.servers[].userSessions.virtualProxies[].virtualProxy',
    ],
  },
  {
    n: 5,
    paths: [
      'logEvents.enginePerformanceMonitor.monitorFilter.appSpecific.app[].include[].appId',
      'logEvents.enginePerformanceMonitor.monitorFilter.appSpecific.app[].include[].appName',
    ],
  },
  {
    n: 10,
    paths: [
      'heartbeat.remoteURL',
      'userEvents.sendToMQTT.postTo.everythingTopic.topic',
      'userEvents.sendToMQTT.postTo.sessionStartTopic.topic',
      'userEvents.sendToMQTT.postTo.sessionStopTopic.topic',
      'userEvents.sendToMQTT.postTo.connectionOpenTopic.topic',
      'userEvents.sendToMQTT.postTo.connectionCloseTopic.topic',
      'logEvents.sendToMQTT.baseTopic',
      'cert.clientCert',
      'cert.clientCertKey',
      'cert.clientCertCA',
    ],
  },
];

type Pattern = readonly string[];

/** `a.b[].c` → `['a', 'b', '[]', 'c']` */
export function parseMaskPath(path: MaskPath): Pattern {
  return path.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), '[]'] : [part]));
}

/** Whether `pattern` matches the first segments of `path`. */
export function matchesPrefix(pattern: Pattern, path: readonly PathSegment[]): boolean {
  if (pattern.length > path.length) return false;
  return pattern.every((p, i) => {
    const seg = path[i];
    if (p === '[]') return typeof seg === 'number';
    if (p === '*') return typeof seg === 'string';
    return seg === p;
  });
}

const FULL: readonly Pattern[] = FULL_MASK_PATHS.map(parseMaskPath);
const PARTIAL: readonly { n: number; pattern: Pattern }[] = PARTIAL_MASKS.flatMap(({ n, paths }) =>
  paths.map((p) => ({ n, pattern: parseMaskPath(p) })),
);

/** Whether the value at `path` (below `Svc`) is fully masked; everything below it is then masked too. */
function fullyMasked(path: readonly PathSegment[]): boolean {
  const last = path[path.length - 1];
  if (typeof last === 'string' && MASKED_KEY.test(last)) return true;
  return FULL.some((pattern) => matchesPrefix(pattern, path)) || isSecretPath(['Svc', ...path]);
}

/** `scheme://user:password@host` → `scheme://**********@host`, anywhere in a text. */
const URL_USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^/?#@\s]+@/gi;

function leafText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? '';
}

export interface MaskOptions {
  /** `configVisualisation.obfuscate`: false turns off the partial masks only (see the module comment). */
  obfuscate: boolean;
}

/** A masked deep copy of `config` (the value of `Svc`); the input is not changed. */
export function maskConfig(config: unknown, options: MaskOptions): unknown {
  const fullLeaves = (value: unknown): unknown => {
    if (value === null) return null;
    if (Array.isArray(value)) return value.map(fullLeaves);
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fullLeaves(v)]));
    return MASK;
  };
  const walk = (value: unknown, path: PathSegment[]): unknown => {
    if (value === null) return null;
    if (path.length > 0 && fullyMasked(path)) return fullLeaves(value);
    if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i]));
    if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, [...path, k])]));
    const partial = options.obfuscate ? PARTIAL.find(({ pattern }) => matchesPrefix(pattern, path)) : undefined;
    if (partial) return [...leafText(value).replace(URL_USERINFO, `$1${MASK}@`)].slice(0, partial.n).join('') + MASK;
    return typeof value === 'string' ? value.replace(URL_USERINFO, `$1${MASK}@`) : value;
  };
  return walk(config, []);
}

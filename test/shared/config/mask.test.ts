/**
 * Masking of the config view (platform-formats.md §10.7): every path of the spec's table, the key
 * regex at any depth, the spec's examples, full over partial, structure kept, null kept, and Svc's
 * choices (secrets masked with `obfuscate: false` too, credentials in URLs).
 */
import { describe, expect, it } from 'vitest';
import {
  FULL_MASK_PATHS,
  MASK,
  MASKED_KEY,
  maskConfig,
  PARTIAL_MASKS,
  parseMaskPath,
} from '../../../shared/config/mask.js';
import { ConfigFileSchema } from '../../../shared/config/schema.js';
import { SECRET_KEYS, secretValues } from '../../../shared/config/secrets.js';
import { type SchemaNode, schemaAt, visitSchema } from '../../../shared/config/walk.js';
import { getPath } from '../../../shared/util/records.js';
import { svcConfig } from '../../support/udp.js';

const ROOT = ConfigFileSchema as SchemaNode;
const on = (config: unknown) => maskConfig(config, { obfuscate: true });
const off = (config: unknown) => maskConfig(config, { obfuscate: false });

/** A value at `pattern` (`[]` = index 0, `*` = key `h`) in an otherwise empty object. */
function at(pattern: readonly string[], value: unknown): Record<string, unknown> {
  let out: unknown = value;
  for (let i = pattern.length - 1; i >= 0; i--) {
    const seg = pattern[i];
    out = seg === '[]' ? [out] : { [seg === '*' ? 'h' : (seg ?? '')]: out };
  }
  return out as Record<string, unknown>;
}
const concrete = (pattern: readonly string[]) => pattern.map((seg) => (seg === '[]' ? 0 : seg === '*' ? 'h' : seg));

describe('§10.7 masking', () => {
  it('names only paths that exist in the schema', () => {
    for (const path of [...FULL_MASK_PATHS, ...PARTIAL_MASKS.flatMap((p) => p.paths)]) {
      expect(schemaAt(ROOT, ['Svc', ...concrete(parseMaskPath(path))]), path).toBeDefined();
    }
  });

  it('masks every partial path of the table to its first N characters (3, 5, 10)', () => {
    const expected: Record<string, number> = {};
    for (const { n, paths } of PARTIAL_MASKS) for (const p of paths) expected[p] = n;
    // The table of §10.7, written out again: a path dropped from mask.ts fails here.
    expect(expected).toEqual({
      'configVisualisation.host': 3,
      'userEvents.udpServerConfig.serverHost': 3,
      'logEvents.udpServerConfig.serverHost': 3,
      'userEvents.udpServerConfig.allowedSources[]': 3,
      'logEvents.udpServerConfig.allowedSources[]': 3,
      'mqttConfig.brokerHost': 3,
      'metricsEndpoint.host': 3,
      'tsdbConfig.host': 3,
      'tsdbConfig.v2Config.org': 3,
      'tsdbConfig.v2Config.bucket': 3,
      'tsdbConfig.v1Config.auth.username': 3,
      'appNames.hostIP': 3,
      'thirdPartyToolsCredentials.monsaas[].accountId': 3,
      'serversToMonitor.servers[].host': 3,
      'serversToMonitor.servers[].userSessions.host': 3,
      'serversToMonitor.servers[].userSessions.virtualProxies[].virtualProxy': 3,
      'logEvents.enginePerformanceMonitor.monitorFilter.appSpecific.app[].include[].appId': 5,
      'logEvents.enginePerformanceMonitor.monitorFilter.appSpecific.app[].include[].appName': 5,
      'heartbeat.remoteURL': 10,
      'userEvents.sendToMQTT.postTo.everythingTopic.topic': 10,
      'userEvents.sendToMQTT.postTo.sessionStartTopic.topic': 10,
      'userEvents.sendToMQTT.postTo.sessionStopTopic.topic': 10,
      'userEvents.sendToMQTT.postTo.connectionOpenTopic.topic': 10,
      'userEvents.sendToMQTT.postTo.connectionCloseTopic.topic': 10,
      'logEvents.sendToMQTT.baseTopic': 10,
      'cert.clientCert': 10,
      'cert.clientCertKey': 10,
      'cert.clientCertCA': 10,
    });
    for (const [path, n] of Object.entries(expected)) {
      const pattern = parseMaskPath(path);
      const value = 'abcdefghijklmnopqrstuvwxyz';
      expect(getPath(on(at(pattern, value)), concrete(pattern)), path).toBe(value.slice(0, n) + MASK);
      // Shorter than N: all of it, then the stars; a number is masked as text.
      expect(getPath(on(at(pattern, 42)), concrete(pattern)), path).toBe(`42${MASK}`);
      expect(getPath(on(at(pattern, null)), concrete(pattern)), path).toBeNull();
      // obfuscate false: shown as is.
      expect(getPath(off(at(pattern, value)), concrete(pattern)), path).toBe(value);
    }
  });

  it("gives the spec's examples", () => {
    const config = svcConfig([
      '  tsdbConfig: {enable: true, version: 1, v1Config: {dbName: x, auth: {enable: true, username: dbwriter, password: pw}}}',
      '  heartbeat: {enable: true, remoteURL: "http://monitor.example.com/hb"}',
    ]);
    const masked = on(config);
    expect(getPath(masked, ['tsdbConfig', 'v1Config', 'auth', 'username'])).toBe('dbw**********');
    expect(getPath(masked, ['heartbeat', 'remoteURL'])).toBe('http://mon**********');
    expect(getPath(masked, ['tsdbConfig', 'v1Config', 'auth', 'password'])).toBe('**********');
  });

  it('masks fully, at any depth, every key the regex names (the spec lists insertApiKey, token, apiToken, clientCertPassphrase, scrambleSecret)', () => {
    for (const key of [
      'insertApiKey',
      'token',
      'apiToken',
      'clientCertPassphrase',
      'scrambleSecret',
      'password',
      'PASSWD',
      'pwd',
      'mySecret',
      'api_key',
      'api-token',
      'accessKey',
      'access_key',
      'passphrase',
      'client-secret',
    ]) {
      expect(MASKED_KEY.test(key), key).toBe(true);
      expect(on({ a: { b: [{ [key]: 'value' }] } }), key).toEqual({ a: { b: [{ [key]: MASK }] } });
      expect(off({ [key]: 'value' }), key).toEqual({ [key]: MASK });
    }
    // Only the listed paths are partly masked: a `host` elsewhere is shown as is.
    expect(on({ host: 'h', name: 'n', enable: true, port: 1 })).toEqual({
      host: 'h',
      name: 'n',
      enable: true,
      port: 1,
    });
  });

  it('keeps structure under a fully masked key, masks every leaf, and keeps null', () => {
    const value = { token: { a: 'x', b: [1, true, null, { c: 'y' }], d: null }, password: null };
    expect(on(value)).toEqual({ token: { a: MASK, b: [MASK, MASK, null, { c: MASK }], d: null }, password: null });
  });

  it("masks the monsaas header values and every value of a server's headers, keeping the names", () => {
    const config = svcConfig([
      '  monsaas:',
      '    enable: true',
      '    event: {url: "https://e.example.com/", header: [{name: X-Team, value: platform}]}',
      '    metric: {url: "https://m.example.com/", header: [{name: X-Env, value: prod}], destinationAccount: [ops]}',
      '  thirdPartyToolsCredentials: {monsaas: [{accountName: ops, accountId: "1234567", insertApiKey: KEY-123}]}',
      '  serversToMonitor: {servers: [{host: "node1.example.com:4747", serverName: n1, headers: {X-Auth: "Bearer abc", X-Other: plain}}]}',
      '  cert: {clientCert: /etc/svc/client.pem, clientCertKey: /etc/svc/key.pem, clientCertCA: /etc/svc/root.pem}',
    ]);
    const masked = on(config);
    expect(getPath(masked, ['monsaas', 'event', 'header'])).toEqual([{ name: 'X-Team', value: MASK }]);
    expect(getPath(masked, ['monsaas', 'metric', 'header'])).toEqual([{ name: 'X-Env', value: MASK }]);
    expect(getPath(masked, ['serversToMonitor', 'servers', 0, 'headers'])).toEqual({ 'X-Auth': MASK, 'X-Other': MASK });
    expect(getPath(masked, ['serversToMonitor', 'servers', 0, 'host'])).toBe(`nod${MASK}`);
    expect(getPath(masked, ['serversToMonitor', 'servers', 0, 'serverName'])).toBe('n1');
    expect(getPath(masked, ['thirdPartyToolsCredentials', 'monsaas', 0])).toEqual({
      accountName: 'ops',
      accountId: `123${MASK}`,
      insertApiKey: MASK,
    });
    // obfuscate false: the same secrets stay masked; host names and paths show.
    const plain = off(config);
    expect(getPath(plain, ['monsaas', 'event', 'header'])).toEqual([{ name: 'X-Team', value: MASK }]);
    expect(getPath(plain, ['serversToMonitor', 'servers', 0, 'headers'])).toEqual({ 'X-Auth': MASK, 'X-Other': MASK });
    expect(getPath(plain, ['serversToMonitor', 'servers', 0, 'host'])).toBe('node1.example.com:4747');
    expect(getPath(plain, ['cert', 'clientCert'])).toBe('/etc/svc/client.pem');
    expect(getPath(plain, ['thirdPartyToolsCredentials', 'monsaas', 0, 'insertApiKey'])).toBe(MASK);
  });

  it('lets a full mask win over a partial one', () => {
    // A partial path below a fully masked key (a header value named like a partial path is not possible
    // in the schema, so the rule is shown on a made-up key inside a masked section).
    expect(on({ tsdbConfig: { host: 'db.example.com', token: { host: 'db.example.com' } } })).toEqual({
      tsdbConfig: { host: `db.${MASK}`, token: { host: MASK } },
    });
  });

  it('masks every value the schema marks secret, with obfuscate true or false', () => {
    const secretPaths: string[][] = [];
    visitSchema(ROOT, (node, path) => {
      if (node['x-secret']) secretPaths.push(path.slice(1).map((seg) => (seg === -1 ? '[]' : String(seg))));
    });
    expect(secretPaths.length).toBe(12);
    // The proxy URLs are masked as secrets of the schema, not by their names; the alert channels'
    // `url` is too common a name for log lines to censor by name (its values are scrubbed instead).
    expect(SECRET_KEYS.filter((key) => !MASKED_KEY.test(key))).toEqual(['httpProxy', 'httpsProxy']);
    for (const pattern of secretPaths) {
      for (const mask of [on, off])
        expect(getPath(mask(at(pattern, 'SECRET-MARKER')), concrete(pattern)), pattern.join('.')).toBe(MASK);
    }
  });

  it("masks the alert channels' URLs and SMTP password inside the channels list, and lists them for the logs and crash dumps", () => {
    const config = svcConfig([
      '  alerts:',
      '    channels:',
      '      - {name: ops, type: slack, url: "https://hooks.slack.com/services/T0/B0/SLACK-KEY-1"}',
      '      - name: mail',
      '        type: email',
      '        email: {smtp: {host: smtp.example.com, username: svc, password: SMTP-PASSWORD-1}, from: svc@example.com, to: [ops@example.com]}',
    ]);
    for (const mask of [on, off]) {
      const masked = mask(config);
      expect(getPath(masked, ['alerts', 'channels', 0, 'url'])).toBe(MASK);
      expect(getPath(masked, ['alerts', 'channels', 0, 'name'])).toBe('ops');
      expect(getPath(masked, ['alerts', 'channels', 1, 'email', 'smtp', 'password'])).toBe(MASK);
      expect(getPath(masked, ['alerts', 'channels', 1, 'email', 'smtp', 'host'])).toBe('smtp.example.com');
      expect(JSON.stringify(masked)).not.toMatch(/SLACK-KEY-1|SMTP-PASSWORD-1/);
    }
    // The values every log line and crash dump is scrubbed of (boot.ts, crash-dump.ts).
    expect(secretValues(config)).toEqual(
      expect.arrayContaining(['https://hooks.slack.com/services/T0/B0/SLACK-KEY-1', 'SMTP-PASSWORD-1']),
    );
  });

  it('replaces the credentials of a URL (Svc choice), before a partial mask and where nothing else masks', () => {
    expect(on({ heartbeat: { remoteURL: 'https://bob:hunter22@hb.example.com/ping' } })).toEqual({
      heartbeat: { remoteURL: `https://**${MASK}` },
    });
    expect(off({ heartbeat: { remoteURL: 'https://bob:hunter22@hb.example.com/ping' } })).toEqual({
      heartbeat: { remoteURL: `https://${MASK}@hb.example.com/ping` },
    });
    expect(on({ monsaas: { metric: { url: 'https://u:p@m.example.com/' } } })).toEqual({
      monsaas: { metric: { url: `https://${MASK}@m.example.com/` } },
    });
  });

  it('works on a copy: the config is not changed', () => {
    const config = svcConfig([
      '  tsdbConfig: {enable: true, host: db.example.com, version: 2, v2Config: {org: acme, bucket: b, token: T0KEN-VALUE}}',
    ]);
    const before = JSON.stringify(config);
    const masked = on(config);
    expect(JSON.stringify(config)).toBe(before);
    expect(JSON.stringify(masked)).not.toContain('T0KEN-VALUE');
    expect(JSON.stringify(masked)).not.toContain('db.example.com');
  });
});

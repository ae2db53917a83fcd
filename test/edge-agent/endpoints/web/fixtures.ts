/**
 * A marker secret in every secret-like key of the config (the §10.7 regex keys, the header values,
 * a password inside a URL), in sections that are on, so the loaded config holds them all. Every
 * outside address is 127.0.0.1 on `closedPort` (nothing listens there): the sections can run in a
 * real Svc, whose writes then fail (which fills the status page's errors).
 */
export const SECRET_MARKERS = [
  'MARKER-TSDB-PASSWORD',
  'MARKER-TSDB-V2-TOKEN',
  'MARKER-TSDB-V3-TOKEN',
  'MARKER-AUDIT-API-TOKEN',
  'MARKER-MONSAAS-INSERT-KEY',
  'MARKER-EVENT-HEADER',
  'MARKER-METRIC-HEADER',
  'MARKER-SCRAMBLE-SECRET',
  'MARKER-URL-PASSWORD',
] as const;

/** YAML lines below `Svc:` (indented by 2). */
export function secretConfigLines(closedPort: number): string[] {
  const url = (path: string) => `"http://127.0.0.1:${closedPort}/${path}"`;
  return [
    `  tsdbConfig: {enable: true, host: 127.0.0.1, port: ${closedPort}, version: 1, v1Config: {dbName: svc, auth: {enable: true, username: dbwriter, password: MARKER-TSDB-PASSWORD}}, v2Config: {org: acme, bucket: b, token: MARKER-TSDB-V2-TOKEN}, v3Config: {database: d, token: MARKER-TSDB-V3-TOKEN}}`,
    '  auditEvents: {enable: true, apiToken: MARKER-AUDIT-API-TOKEN}',
    '  thirdPartyToolsCredentials: {monsaas: [{accountName: ops, accountId: "1234567", insertApiKey: MARKER-MONSAAS-INSERT-KEY}]}',
    `  monsaas: {enable: true, event: {url: ${url('events')}, header: [{name: X-Team, value: MARKER-EVENT-HEADER}]}, metric: {url: ${url('metrics')}, destinationAccount: [ops], header: [{name: X-Env, value: MARKER-METRIC-HEADER}]}}`,
    '  heartbeat: {enable: true, remoteURL: "http://hb:MARKER-URL-PASSWORD@127.0.0.1:' + String(closedPort) + '/ping"}',
  ];
}

/** userEvents with the scramble secret (sent to monsaas, so the section is on); `udpPort` for its listener. */
export function secretUserEventLines(udpPort: number): string[] {
  return [
    `  userEvents: {enable: true, udpServerConfig: {serverHost: 127.0.0.1, portUserActivityEvents: ${udpPort}}, sendToMonSaas: {enable: true, destinationAccount: [ops], scrambleSecret: MARKER-SCRAMBLE-SECRET}}`,
  ];
}

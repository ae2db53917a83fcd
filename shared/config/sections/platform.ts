/**
 * Reaching the platform's APIs: the client certificate (`cert`) and the pollers' sections
 * (`appNames`, `userSessions`, `serversToMonitor`).
 */
import { Type } from '@sinclair/typebox';
import {
  Bool,
  Gated,
  List,
  Millis,
  Required,
  Secret,
  Section,
  Str,
  StringList,
  StringMap,
  UserRef,
} from '../builders.js';

export const cert = Section(
  'Client certificate for the platform APIs (PEM files exported from the management console)',
  {
    clientCert: Str('', 'Certificate file (client.pem); a relative path starts from the working directory'),
    clientCertKey: Str('', 'Certificate key file (client_key.pem); a relative path starts from the working directory'),
    clientCertCA: Str(
      '',
      "Root certificate file (root.pem), which signed the servers' certificates; needed while serversToMonitor.rejectUnauthorized is true",
    ),
    clientCertPassphrase: Secret('Passphrase set at export; empty = none'),
  },
);

export const appNames = Gated('App names from the platform', ['enableAppNameExtract'], {
  enableAppNameExtract: Bool(false, 'Extract app names from the platform'),
  extractInterval: Millis(60_000, 1000, 'Time between extractions'),
  hostIP: Required(
    "IP or FQDN of the platform server whose repository service lists the apps (port 4242); write host:port for another port (e.g. the simulator's)",
  ),
});

export const userSessions = Gated('User sessions per virtual proxy', ['enableSessionExtract'], {
  enableSessionExtract: Bool(false, 'Extract user session data per virtual proxy'),
  pollingInterval: Millis(30_000, 1000, 'Time between polls'),
  excludeUser: List(UserRef, 'Users to ignore; items are {directory, userId}', [
    { directory: 'INTERNAL', userId: 'sa_repository' },
  ]),
});

/** One item of serversToMonitor.servers. */
const Server = Type.Object(
  {
    host: Type.String({
      minLength: 1,
      pattern: '^[^\\s/:]+(:[0-9]{1,5})?$',
      'x-expect': 'a host name with port such as node1.example.com:4747',
      description: 'Server FQDN including port (normally :4747); the domain matches the exported certificate',
    }),
    serverName: Type.String({ minLength: 1, description: 'Human-friendly name' }),
    serverDescription: Type.String({ default: '', description: 'Human-friendly description' }),
    userSessions: Type.Object(
      {
        enable: Type.Boolean({ default: false }),
        host: Type.String({
          default: '',
          'x-required': true,
          pattern: '^(|[^\\s/:]+(:[0-9]{1,5})?)$',
          'x-expect': 'a host name with port such as node1.example.com:4243',
        }),
        virtualProxies: Type.Array(
          Type.Object(
            { virtualProxy: Type.String({ pattern: '^/', 'x-expect': 'a path that starts with /' }) },
            { additionalProperties: false },
          ),
          { default: [] },
        ),
      },
      { additionalProperties: false, default: {}, 'x-gate': ['enable'] },
    ),
    serverTags: StringMap(
      "Tag name: value pairs added to this server's data; exactly the names of serverTagsDefinition",
    ),
    headers: StringMap(
      'Header name: value pairs sent when polling this server (values are masked in the config view)',
      { 'x-secret-values': true },
    ),
  },
  { additionalProperties: false },
);

export const serversToMonitor = Section('Platform servers whose health API is polled', {
  pollingInterval: Millis(30_000, 1000, 'How often the health API is queried'),
  rejectUnauthorized: Bool(true, 'false accepts self-signed platform certificates'),
  serverTagsDefinition: StringList(
    "Tag names added to each server's data; every one must be present in each server",
    ['site', 'role'],
    Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', 'x-expect': 'a name of letters, digits and _' }),
  ),
  servers: List(
    Server,
    'Servers; items are {host, serverName, serverDescription, userSessions{enable, host, virtualProxies[{virtualProxy}]}, serverTags{…}, headers{…}}',
    [
      {
        host: 'node1.example.com:4747',
        serverName: 'node1',
        serverDescription: 'Central node',
        userSessions: { enable: true, host: 'node1.example.com:4243', virtualProxies: [{ virtualProxy: '/' }] },
        serverTags: { site: 'lab', role: 'central' },
        headers: {},
      },
    ],
  ),
});

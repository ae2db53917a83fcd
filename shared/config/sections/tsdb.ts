/** `tsdbConfig`: the time-series database connection, for versions 1, 2 and 3. */
import { Type } from '@sinclair/typebox';
import { Bool, Enum, Feature, Int, Millis, Port, Required, Secret, Section, Str } from '../builders.js';

/** Retention of what Svc creates in the tsdb: a v1 policy, a v2 bucket, a v3 database. */
const RETENTION = { pattern: '^[1-9][0-9]*[hdw]$', 'x-expect': 'a duration of whole hours, days or weeks such as 10d' };

export const tsdbConfig = Feature(
  'Time-series database connection; master switch of every tsdb write',
  false,
  'Store data in the tsdb',
  {
    host: Str('localhost', 'Server IP or FQDN', { minLength: 1 }),
    port: Port(8086, 'Server port'),
    version: Enum([1, 2, 3] as const, 1, 'tsdb major version: 1, 2 or 3'),
    maxBatchSize: Int(1000, 1, 10_000, 'Points per write batch; a failed batch is retried in smaller chunks'),
    tls: Feature('TLS to the tsdb (https), for every version', false, 'Connect with https instead of http', {
      caFile: Str(
        '',
        "PEM file of the CA certificate(s) that signed the server's certificate, trusted besides the system's root certificates; empty = the system's root certificates only; a relative path starts from the working directory",
      ),
      rejectUnauthorized: Bool(
        true,
        'Refuse a server certificate no trusted CA signed or that names another host; false accepts any certificate (the connection is encrypted but the server is not verified)',
      ),
    }),
    v3Config: Type.Object(
      {
        database: Str('svc', 'Database', { minLength: 1 }),
        description: Str('Svc data', 'Database description'),
        token: Secret('API token; empty when the server runs without authentication'),
        retentionDuration: Str('10d', 'Retention of a database Svc creates', RETENTION),
        writeTimeout: Millis(10_000, 100, 'Socket timeout of writes'),
        queryTimeout: Millis(60_000, 100, 'Query timeout'),
      },
      {
        additionalProperties: false,
        default: {},
        description: 'Version 3 settings (used when version is 3)',
        'x-only-when': { key: 'version', value: 3 },
      },
    ),
    v2Config: Type.Object(
      {
        org: Required('Organisation'),
        bucket: Str('svc', 'Bucket', { minLength: 1 }),
        description: Str('Svc data', 'Bucket description'),
        token: Required('API token', { 'x-secret': true }),
        retentionDuration: Str('10d', 'Retention of a bucket Svc creates', RETENTION),
      },
      {
        additionalProperties: false,
        default: {},
        description: 'Version 2 settings (used when version is 2)',
        'x-only-when': { key: 'version', value: 2 },
      },
    ),
    v1Config: Type.Object(
      {
        auth: Feature('Password protection', false, 'Authenticate with username and password', {
          username: Required('User name'),
          password: Required('Password', { 'x-secret': true }),
        }),
        dbName: Str('svc', 'Database name', { minLength: 1 }),
        retentionPolicy: Section('Default retention policy created with the database', {
          name: Str('svc_rp', 'Retention policy name', { minLength: 1 }),
          duration: Str('10d', 'Retention policy duration', RETENTION),
        }),
      },
      {
        additionalProperties: false,
        default: {},
        description: 'Version 1 settings (used when version is 1)',
        'x-only-when': { key: 'version', value: 1 },
      },
    ),
    includeFields: Section('Lists of apps stored with the health metrics', {
      activeDocs: Bool(false, 'Store the list of active apps'),
      loadedDocs: Bool(false, 'Store the list of apps opened in a session'),
      inMemoryDocs: Bool(false, 'Store the list of apps in memory'),
    }),
  },
);

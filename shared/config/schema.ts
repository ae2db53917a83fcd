/**
 * THE config schema: the single source of the config's TypeScript types, defaults, validation and
 * `docs/configuration.md`. Keys follow ../shared/spec/configuration-reference.md, the audit API keys of
 * ARCHITECTURE.md and the keys platform-formats.md adds. Where the reference shows a dash the
 * default here is ours; docs/configuration.md lists every one.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import {
  Bool, Enum, Feature, Flag, Gated, HTTP_URL, Int, List, LogLevel, LOG_LEVELS, Millis, NameValues, Port, Required,
  Schedule, Secret, Section, Str, StringList, StringMap, Tags, UserRef,
} from './builders.js';

const AUDIT_DESTINATION_TYPES = ['tsdb', 'parquet', 'tablefile', 'json'] as const;
export { AUDIT_DESTINATION_TYPES };

const RETENTION = { pattern: '^[1-9][0-9]*[hdw]$', 'x-expect': 'a duration of whole hours, days or weeks such as 10d' };

const batching = (what: string, directory: string | null, writeFrequency: number) => ({
  ...(directory === null ? {} : { exportDirectory: Str(directory, `Directory for the ${what} files; relative paths resolve from the working directory`) }),
  maxBatchSize: Int(1000, 1, 100_000, `Events per ${what} batch`),
  writeFrequency: Millis(writeFrequency, 100, `Longest time an event waits in the ${what} buffer before it is written`),
  staticTags: Tags(`Static tags added to every ${what} row`),
});

const auditEvents = Feature('Audit event HTTP ingest API (audit-event-api.md)', false, 'Enable the audit event HTTP ingest API', {
  host: Str('127.0.0.1', "Where local mode's gateway listens", { minLength: 1 }),
  port: Port(8181, "Port of local mode's gateway"),
  apiToken: Secret('Bearer token required by POST /api/v1/audit-event and GET /api/v1/test-connection; empty = no token required (a warning is logged at start)'),
  maxBodyBytes: Int(1_048_576, 1024, 10_485_760, "Largest accepted request body in bytes; larger bodies get 413 (local mode's gateway answers as soon as the Content-Length header or the body passes it, and closes the connection)"),
  headersTimeout: Millis(10_000, 100, "Local mode only: longest time a request's line and headers may take to arrive, from the connection (or, on a kept-alive connection, from the request's first byte); a slower client gets 408 and the connection is closed"),
  bodyTimeout: Millis(10_000, 100, "Local mode only: longest time a request body may take to arrive, from the end of its headers; a slower body gets 408 and the connection is closed"),
  maxConnectionsPerClient: Int(32, 1, 100_000, 'Local mode only: open connections allowed per client address (the socket peer, not X-Forwarded-For); at the limit a new connection replaces the longest idle kept-alive one, or is closed at once, without an answer, when none is idle; the addresses in trustedProxies are not limited'),
  trustedProxies: StringList('Peer IP addresses whose X-Forwarded-For header is believed for the client IP; in local mode they are also exempt from maxConnectionsPerClient', ['10.0.0.5'], Type.String({ format: 'ip', 'x-expect': 'an IPv4 or IPv6 address' })),
  rateLimit: Feature('HTTP rate limit per client IP, fixed 1-minute window', true, 'Enable the per-IP HTTP rate limit', {
    maxPerMinute: Int(300, 1, 1_000_000, 'Requests per minute per client IP'),
  }),
  cors: Section('CORS for browser callers', {
    allowedOrigins: StringList('Origins (scheme://host[:port]) allowed for browser callers; empty = no browser origin is allowed', ['https://analytics.example.com'], Type.String({ pattern: '^https?://[^/\\s]+$', 'x-expect': 'an origin such as https://analytics.example.com (no path)' })),
  }),
  idempotency: Feature('One record per eventId, so a retried event is queued once (docs/audit-api.md)', true, 'Answer a repeated eventId from the record instead of queueing it again', {
    windowSeconds: Int(86_400, 60, 31_536_000, 'How long a record is kept: a repeat within this many seconds of the first receipt is not queued again'),
    maxEntries: Int(250_000, 1000, 50_000_000, 'Local mode: records held in memory (about 100 bytes each); past this the oldest are forgotten before their window ends'),
  }),
  queue: Section('Internal queue between the API and the writers', {
    capacity: Int(10_000, 1, 10_000_000, 'Events the local queue holds before the API answers 503'),
    rateLimit: Feature('Global throughput limit of the queue (not per IP)', false, 'Enable the queue throughput limit', {
      maxPerMinute: Int(600, 1, 10_000_000, 'Events per minute taken from the queue'),
    }),
  }),
  destination: Feature('Writers for accepted events', false, 'Write accepted events to destinations', {
    type: Str('parquet', `Comma-delimited list of active writers, among: ${AUDIT_DESTINATION_TYPES.join(', ')}`, {
      pattern: `^\\s*(${AUDIT_DESTINATION_TYPES.join('|')})\\s*(,\\s*(${AUDIT_DESTINATION_TYPES.join('|')})\\s*)*$`,
      'x-expect': `a comma-delimited list of ${AUDIT_DESTINATION_TYPES.join(', ')}`,
    }),
    tsdb: Section('tsdb writer; the connection is Svc.tsdbConfig', {
      measurementName: Str('audit_events', 'Measurement of audit event points', { minLength: 1 }),
      ...batching('tsdb', null, 5000),
    }),
    parquet: Section('Parquet writer: a file is closed at maxBatchSize rows or after writeFrequency', {
      ...batching('parquet', 'audit-events/parquet', 60_000),
      s3: Feature('Write the parquet files to S3 instead of the directory', false, 'Write to S3', {
        bucket: Required('Bucket name'),
        prefix: Str('audit-events/', 'Key prefix'),
        region: Str('us-east-1', 'AWS region', { minLength: 1 }),
        endpoint: Str('', 'Endpoint URL of an S3-compatible service; empty = AWS'),
      }),
    }),
    tablefile: Section('Table-file (QVD) writer: a file is closed at maxBatchSize rows or after writeFrequency', batching('tablefile', 'audit-events/tablefile', 60_000)),
    json: Section('JSON writers', {
      objectdata: Feature('One JSON file per event for payload.event.objectData, written immediately (no batching)', false, 'Write payload.event.objectData to per-event JSON files', {
        exportDirectory: Str('audit-events/json', 'Directory for those files', { minLength: 1 }),
        staticTags: Tags('Static tags added to each file'),
      }),
    }),
  }),
});

const udpCommon = (listener: 'user' | 'log') => ({
    serverHost: Str('0.0.0.0', 'Listen host or IP; 0.0.0.0 = every interface (the log appenders send from the platform servers); a specific address is recommended', { minLength: 1 }),
    messageQueue: Section('Listener queue that absorbs bursts', {
      maxConcurrent: Int(10, 1, 1000, 'Messages processed simultaneously'),
      maxSize: Int(200, 1, 1_000_000, 'Waiting messages before new ones are dropped'),
      backpressureThreshold: Int(80, 1, 100, 'Warn at this queue utilisation, percent'),
    }),
    rateLimit: Feature('Per-listener message rate limit, fixed 60 s window', false, 'Rate-limit messages', {
      maxMessagesPerMinute: Int(600, 1, 100_000_000, 'Messages per minute'),
    }),
    maxMessageSize: Int(65507, 1, 65507, 'Largest accepted datagram in bytes'),
    receiveBufferBytes: Int(4_194_304, 65_536, 1_073_741_824, 'Socket receive buffer requested from the OS (bytes); a larger buffer rides out bursts without kernel drops'),
    enableSourceValidation: Bool(false, 'Accept datagrams only from allowedSources (resolved to IPv4 at start); with none resolved, validation is off'),
    allowedSources: StringList('IPv4 addresses or host names allowed to send; unresolvable entries are skipped with an error', ['platform-node1.example.com', '192.168.1.20']),
    queueMetrics: Section('Listener queue metrics', {
      tsdb: Feature('Store queue metrics in the tsdb', false, 'Store queue metrics', {
        writeFrequency: Millis(20_000, 1000, 'Time between writes'),
        measurementName: Str(listener === 'user' ? 'user_events_queue' : 'log_events_queue', 'Measurement name', { minLength: 1 }),
        tags: Tags('Static tags'),
      }),
    }),
  });
const udpServerConfigUser = Section('UDP listener', {
  portUserActivityEvents: Port(9997, 'UDP port for user-activity events; must match the log appender'),
  ...udpCommon('user'),
});
const udpServerConfigLog = Section('UDP listener', {
  portLogEvents: Port(9996, 'UDP port for log events; must match the log appenders'),
  ...udpCommon('log'),
});

const topic = (def: string, what: string) =>
  Feature(`${what}`, false, `Publish ${what.toLowerCase()}`, { topic: Str(def, 'Topic', { minLength: 1 }) });

const userEvents = Feature('User-activity events over UDP (session start/stop, connection open/close)', false, 'Track user events', {
  excludeUser: List(UserRef, 'Users to ignore; items are {directory, userId}, compared case-insensitively', [{ directory: 'INTERNAL', userId: 'sa_scheduler' }]),
  udpServerConfig: udpServerConfigUser,
  tags: Tags('Tags added to each user event'),
  sendToMQTT: Feature('Publish user events to MQTT (needs Svc.mqttConfig.enable)', false, 'Send user events to MQTT', {
    postTo: Section('Topics', {
      everythingTopic: topic('svc/userevent', 'All user events'),
      sessionStartTopic: topic('svc/userevent/session/start', 'Session start messages'),
      sessionStopTopic: topic('svc/userevent/session/stop', 'Session stop messages'),
      connectionOpenTopic: topic('svc/userevent/connection/open', 'Connection open messages'),
      connectionCloseTopic: topic('svc/userevent/connection/close', 'Connection close messages'),
    }),
  }),
  sendToTsdb: Flag(false, 'Save user events in the tsdb (needs Svc.tsdbConfig.enable)'),
  sendToMonSaas: Feature('Send user events to the monitoring SaaS (needs Svc.monsaas.enable)', false, 'Send user events to the monitoring SaaS', {
    destinationAccount: StringList('Account names (Svc.thirdPartyToolsCredentials.monsaas[].accountName)', ['ops']),
    scramble: Bool(false, 'Replace user directory and user id by keyed hashes before sending'),
    scrambleSecret: Secret('Key of the scrambling hash, at least 16 characters; empty = a random key per start (pseudonyms then change at every restart)', { pattern: '^(|.{16,})$', 'x-expect': 'empty or at least 16 characters' }),
  }),
});

const all = (name: string) => Bool(true, `true: all ${name} except the exclusions; false: only the inclusions`);
const exclude = <T extends TSchema>(items: T, name: string, flag: string) => List(items, `Excluded ${name} (when ${flag} is true)`);
const include = <T extends TSchema>(items: T, name: string, flag: string) => List(items, `Included ${name} (when ${flag} is false)`);
const NonEmpty = Type.String({ minLength: 1 });
const objectTypeRule = Section('Object types: all (minus exclusions) or only the inclusions', {
  allObjectTypes: all('object types'),
  allObjectTypesExclude: exclude(NonEmpty, 'object types', 'allObjectTypes'),
  someObjectTypesInclude: include(NonEmpty, 'object types', 'allObjectTypes'),
});
const methodRule = Section('Methods: all (minus exclusions) or only the inclusions', {
  allMethods: all('methods'),
  allMethodsExclude: exclude(NonEmpty, 'methods', 'allMethods'),
  someMethodsInclude: include(NonEmpty, 'methods', 'allMethods'),
});
const AppMatch = Type.Object(
  { appId: Type.Optional(Type.String({ minLength: 1 })), appName: Type.Optional(Type.String({ minLength: 1 })) },
  { additionalProperties: false, minProperties: 1 },
);
const ObjectRef = Type.Object({ objectId: Type.String({ minLength: 1 }) }, { additionalProperties: false });
const appObjectRule = Section('App objects (by object id): all (minus exclusions) or only the inclusions', {
  allAppObjects: all('app objects'),
  allAppObjectsExclude: exclude(ObjectRef, 'app objects ({objectId})', 'allAppObjects'),
  someAppObjectsInclude: include(ObjectRef, 'app objects ({objectId})', 'allAppObjects'),
});

const logSource = Flag(false, 'Handle log events from this service');
const monSaasLogSource = Feature('Send this service\'s events', false, 'Handle this service\'s events', {
  logLevel: Section('Levels to send', {
    error: Bool(true, 'Send ERROR and FATAL events'),
    warn: Bool(true, 'Send WARN events'),
  }),
});

const logEvents = Gated(
  'Log events over UDP; the listener runs when any source is enabled',
  ['source.engine.enable', 'source.proxy.enable', 'source.repository.enable', 'source.scheduler.enable', 'source.apiPerf.enable'],
  {
    udpServerConfig: udpServerConfigLog,
    tags: Tags('Tags added to each log event'),
    source: Section('Which services\' log events are handled', {
      engine: logSource,
      proxy: logSource,
      repository: logSource,
      scheduler: logSource,
      apiPerf: Flag(false, 'Handle log events about engine API performance'),
    }),
    categorise: Feature('Categorisation of log events by rules', false, 'Enable categorisation', {
      rules: List(
        Type.Object(
          {
            description: Type.String({ default: '' }),
            logLevel: Type.Array(Type.String({ minLength: 1 }), { minItems: 1 }),
            action: Type.Unsafe<'categorise' | 'drop'>({ type: 'string', enum: ['categorise', 'drop'] }),
            category: Type.Array(Type.Object({ name: Type.String({ minLength: 1 }), value: Type.String() }, { additionalProperties: false }), { default: [] }),
            filter: Type.Array(Type.Object({ type: Type.String({ minLength: 1 }), value: Type.String() }, { additionalProperties: false }), { minItems: 1 }),
          },
          { additionalProperties: false },
        ),
        'Rules {description, logLevel[], action: categorise|drop, category[{name, value}], filter[{type: sw|ew|so, value}]}, evaluated in order',
        [{ description: 'Licence problems', logLevel: ['warn', 'error'], action: 'categorise', category: [{ name: 'qs_log_category', value: 'license' }], filter: [{ type: 'so', value: 'license' }] }],
      ),
      ruleDefault: Feature('Categories added when no rule matches', false, 'Enable the default rule', {
        category: NameValues('Categories added'),
      }),
    }),
    enginePerformanceMonitor: Feature('Engine performance data extracted from log events', false, 'Extract app performance data from log events', {
      appNameLookup: Flag(false, 'Look up app names from app ids'),
      trackRejectedEvents: Feature('Track events the monitor filter rejects', false, 'Track rejected events', {
        tags: Tags('Tags added to rejected-event counts'),
      }),
      monitorFilter: Section('Which events are monitored; both blocks disabled = all rejected', {
        allApps: Feature('Monitor all apps', false, 'Monitor all apps', {
          appExclude: List(AppMatch, 'Apps to exclude; items are {appId and/or appName}', [{ appName: 'Test app' }]),
          objectType: objectTypeRule,
          method: methodRule,
        }),
        appSpecific: Feature('Monitor specific apps', false, 'App-specific monitoring', {
          app: List(
            Type.Object(
              {
                include: Type.Array(AppMatch, { minItems: 1 }),
                objectType: objectTypeRule,
                appObject: appObjectRule,
                method: methodRule,
              },
              { additionalProperties: false },
            ),
            'Apps and their rules; items are {include[{appId and/or appName}], objectType, appObject, method}',
          ),
        }),
      }),
    }),
    sendToMQTT: Feature('Publish log events to MQTT (needs Svc.mqttConfig.enable)', false, 'Send log events to MQTT', {
      baseTopic: Str('svc/logevent', 'Root topic', { minLength: 1 }),
      postTo: Section('Where to post', {
        baseTopic: Bool(false, 'Post all events to the root topic'),
        subsystemTopics: Bool(false, 'Post to subsystem topics below the root topic'),
      }),
    }),
    sendToTsdb: Flag(false, 'Save log events in the tsdb (needs Svc.tsdbConfig.enable)'),
    sendToMonSaas: Feature('Send log events to the monitoring SaaS (needs Svc.monsaas.enable)', false, 'Send log events to the monitoring SaaS', {
      destinationAccount: StringList('Account names', ['ops']),
      source: Section('Per service', {
        engine: monSaasLogSource,
        proxy: monSaasLogSource,
        repository: monSaasLogSource,
        scheduler: monSaasLogSource,
      }),
    }),
  },
);

const metricFlag = (what: string) => Flag(false, `Send ${what}`);
const monsaas = Feature('Platform health metrics and events to the monitoring SaaS', false, 'Send platform health metrics', {
  event: Section('Event API', {
    url: Str('', 'Event API URL (one of the two regional endpoints); required when user or log events are sent', { pattern: '^(|https?://\\S+)$', 'x-expect': 'empty or an absolute http:// or https:// URL' }),
    header: NameValues('HTTP headers for event calls'),
    attribute: Section('Event attributes', {
      static: NameValues('Attributes added to all events'),
      dynamic: Section('Computed attributes', { svcVersion: Flag(true, 'Attach the service version') }),
    }),
  }),
  metric: Section('Metric API', {
    destinationAccount: StringList('Account names', ['ops']),
    url: Required('Metric API URL (one of the two regional endpoints)', HTTP_URL),
    header: NameValues('HTTP headers for metric calls'),
    dynamic: Section('Metric groups', {
      engine: Section('Engine metrics', {
        memory: metricFlag('engine memory'), cpu: metricFlag('engine CPU'), calls: metricFlag('engine calls'),
        selections: metricFlag('engine selections'), sessions: metricFlag('engine sessions'), users: metricFlag('engine users'),
        saturated: metricFlag('engine saturation'),
      }),
      apps: Section('App metrics', {
        docCount: metricFlag('app counts'), activeDocs: metricFlag('active app list'), loadedDocs: metricFlag('loaded app list'),
        inMemoryDocs: metricFlag('in-memory app list'),
      }),
      cache: Section('Cache metrics', { cache: metricFlag('cache metrics') }),
      proxy: Section('Proxy metrics', { sessions: metricFlag('aggregated proxy session metrics') }),
    }),
    attribute: Section('Metric attributes', {
      static: NameValues('Attributes for all health metrics'),
      dynamic: Section('Computed attributes', { svcVersion: Flag(true, 'Attach the service version') }),
    }),
  }),
});

const tsdbConfig = Feature('Time-series database connection; master switch of every tsdb write', false, 'Store data in the tsdb', {
  host: Str('localhost', 'Server IP or FQDN', { minLength: 1 }),
  port: Port(8086, 'Server port'),
  version: Enum([1, 2, 3] as const, 1, 'tsdb major version: 1, 2 or 3'),
  maxBatchSize: Int(1000, 1, 10_000, 'Points per write batch; a failed batch is retried in smaller chunks'),
  v3Config: Type.Object(
    {
      database: Str('svc', 'Database', { minLength: 1 }),
      description: Str('Svc data', 'Database description'),
      token: Secret('API token; empty when the server runs without authentication'),
      retentionDuration: Str('10d', 'Retention of a database Svc creates', RETENTION),
      writeTimeout: Millis(10_000, 100, 'Socket timeout of writes'),
      queryTimeout: Millis(60_000, 100, 'Query timeout'),
    },
    { additionalProperties: false, default: {}, description: 'Version 3 settings (used when version is 3)', 'x-only-when': { key: 'version', value: 3 } },
  ),
  v2Config: Type.Object(
    {
      org: Required('Organisation'),
      bucket: Str('svc', 'Bucket', { minLength: 1 }),
      description: Str('Svc data', 'Bucket description'),
      token: Required('API token', { 'x-secret': true }),
      retentionDuration: Str('10d', 'Retention of a bucket Svc creates', RETENTION),
    },
    { additionalProperties: false, default: {}, description: 'Version 2 settings (used when version is 2)', 'x-only-when': { key: 'version', value: 2 } },
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
    { additionalProperties: false, default: {}, description: 'Version 1 settings (used when version is 1)', 'x-only-when': { key: 'version', value: 1 } },
  ),
  includeFields: Section('Lists of apps stored with the health metrics', {
    activeDocs: Bool(false, 'Store the list of active apps'),
    loadedDocs: Bool(false, 'Store the list of apps opened in a session'),
    inMemoryDocs: Bool(false, 'Store the list of apps in memory'),
  }),
});

const Server = Type.Object(
  {
    host: Type.String({ minLength: 1, pattern: '^[^\\s/:]+(:[0-9]{1,5})?$', 'x-expect': 'a host name with port such as node1.example.com:4747', description: 'Server FQDN including port (normally :4747); the domain matches the exported certificate' }),
    serverName: Type.String({ minLength: 1, description: 'Human-friendly name' }),
    serverDescription: Type.String({ default: '', description: 'Human-friendly description' }),
    userSessions: Type.Object(
      {
        enable: Type.Boolean({ default: false }),
        host: Type.String({ default: '', 'x-required': true, pattern: '^(|[^\\s/:]+(:[0-9]{1,5})?)$', 'x-expect': 'a host name with port such as node1.example.com:4243' }),
        virtualProxies: Type.Array(Type.Object({ virtualProxy: Type.String({ pattern: '^/', 'x-expect': 'a path that starts with /' }) }, { additionalProperties: false }), { default: [] }),
      },
      { additionalProperties: false, default: {}, 'x-gate': ['enable'] },
    ),
    serverTags: StringMap('Tag name: value pairs added to this server\'s data; exactly the names of serverTagsDefinition'),
    headers: StringMap('Header name: value pairs sent when polling this server (values are masked in the config view)', { 'x-secret-values': true }),
  },
  { additionalProperties: false },
);

/** Everything under the root key `Svc`. */
export const SvcConfigSchema = Section('Svc configuration', {
  logLevel: LogLevel('info', `Log level: ${LOG_LEVELS.join(', ')} (decreasing detail)`),
  fileLogging: Bool(false, 'Also log to daily-rotated files in logDirectory'),
  logDirectory: Str('log', 'Directory for log files; relative paths resolve from the working directory', { minLength: 1 }),
  anonTelemetry: Bool(false, 'Share anonymous data about the service with its project; requires systemInfo.enable'),
  crashFile: Feature('Crash dumps written on an uncaught exception', true, 'Master switch for crash dumps', {
    crashFileDirectory: Str('./crash_dumps', "Output directory; relative paths resolve from the working directory, '' = the working directory"),
    crashFileCreateJson: Bool(true, 'Create a machine-readable JSON dump'),
    crashFileCreateText: Bool(true, 'Create a plain-text dump'),
  }),
  auditEvents,
  localQueue: Section("The durable on-disk event queue of local mode (and the edge agent's spool)", {
    directory: Str('./data/queue', 'Directory of the queue journal and its dead-letter folders; relative paths resolve from the working directory', { minLength: 1 }),
    maxReceiveCount: Int(5, 1, 100, 'Delivery attempts of a message before it moves to the dead-letter folder'),
    udpEventCapacity: Int(500_000, 1000, 100_000_000, "Events from the UDP listeners (and the edge's own counters) the queue under <directory>/platform holds undelivered before it refuses more; a refused event is counted as failed by its listener"),
  }),
  configVisualisation: Feature('Web view of the config', false, 'Serve the config file in a web UI', {
    host: Str('localhost', 'Listen host; localhost or the host IP in most cases', { minLength: 1 }),
    port: Port(3100, 'Listen port'),
    obfuscate: Bool(true, 'Mask secrets and host names in the view'),
  }),
  systemInfo: Flag(true, 'Gather detailed host information by running OS commands; false where command execution is restricted'),
  heartbeat: Feature("'Alive' calls to a URL", false, 'Send heartbeats', {
    remoteURL: Required('URL called at each heartbeat (GET)', HTTP_URL),
    frequency: Schedule('every 1 hour', 'How often (text schedule)'),
  }),
  containerHealthCheck: Feature('Health endpoint for container runtimes (GET /health, all interfaces)', false, 'Create the health endpoint', {
    port: Port(12398, 'Port; change when several instances share a server'),
  }),
  uptimeMonitor: Feature('Uptime and memory messages', true, 'Log uptime and memory use', {
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
  }),
  thirdPartyToolsCredentials: Section('Credentials of third-party tools', {
    monsaas: List(
      Type.Object(
        {
          accountName: Type.String({ minLength: 1 }),
          insertApiKey: Type.String({ minLength: 1, 'x-secret': true }),
          accountId: Type.String({ minLength: 1 }),
        },
        { additionalProperties: false },
      ),
      'Monitoring SaaS accounts; items are {accountName, insertApiKey, accountId}',
      [{ accountName: 'ops', insertApiKey: '${env:MONSAAS_INSERT_KEY}', accountId: '1234567' }],
    ),
  }),
  platformEvents: Section('Counters of user and log events', {
    tsdb: Feature('Store the counters in the tsdb', false, 'Store counters of user/log events and rejected events', {
      writeFrequency: Millis(20_000, 1000, 'Time between counter writes'),
    }),
    eventCount: Feature('Event count', false, 'Store the event count', {
      tsdb: Section('tsdb', {
        measurementName: Str('event_count', 'Measurement for the event count', { minLength: 1 }),
        tags: Tags('Tags added before storing'),
      }),
    }),
    rejectedEventCount: Feature('Rejected-event count', false, 'Count and store rejected events', {
      tsdb: Section('tsdb', {
        measurementName: Str('rejected_event_count', 'Measurement for the rejected count', { minLength: 1 }),
      }),
    }),
  }),
  userEvents,
  logEvents,
  cert: Section('Client certificate for the platform APIs (PEM files exported from the management console)', {
    clientCert: Str('', 'Certificate file'),
    clientCertKey: Str('', 'Certificate key file'),
    clientCertCA: Str('', 'Root certificate file'),
    clientCertPassphrase: Secret('Passphrase set at export; empty = none'),
  }),
  mqttConfig: Feature('MQTT broker; master switch of every MQTT publish', false, 'Send data to MQTT', {
    brokerHost: Str('localhost', 'Broker IP or FQDN', { minLength: 1 }),
    brokerPort: Port(1883, 'Broker port'),
    baseTopic: Str('svc/', 'Default topic; should end with /', { minLength: 1 }),
  }),
  monsaas,
  metricsEndpoint: Feature('Pull-based metrics endpoint (GET /metrics)', false, 'Expose health metrics', {
    host: Str('127.0.0.1', 'Host or IP to listen on; a specific address is recommended', { minLength: 1 }),
    port: Port(9842, 'Port'),
  }),
  tsdbConfig,
  errorTracking: Feature('Counting of errors in platform communication and destination writes', false, 'Master switch; false disables in-memory counting, daily summary and tsdb writes', {
    logSummary: Flag(false, 'Log a daily error summary at midnight UTC'),
    tsdb: Feature('Error events in the tsdb', false, 'Write individual error events to the tsdb', {
      measurementName: Str('svc_errors', 'Measurement name', { minLength: 1 }),
    }),
  }),
  appNames: Gated('App names from the platform', ['enableAppNameExtract'], {
    enableAppNameExtract: Bool(false, 'Extract app names from the platform'),
    extractInterval: Millis(60_000, 1000, 'Time between extractions'),
    hostIP: Required('IP or FQDN of the platform server'),
  }),
  userSessions: Gated('User sessions per virtual proxy', ['enableSessionExtract'], {
    enableSessionExtract: Bool(false, 'Extract user session data per virtual proxy'),
    pollingInterval: Millis(30_000, 1000, 'Time between polls'),
    excludeUser: List(UserRef, 'Users to ignore; items are {directory, userId}', [{ directory: 'INTERNAL', userId: 'sa_repository' }]),
  }),
  serversToMonitor: Section('Platform servers whose health API is polled', {
    pollingInterval: Millis(30_000, 1000, 'How often the health API is queried'),
    rejectUnauthorized: Bool(true, 'false accepts self-signed platform certificates'),
    serverTagsDefinition: StringList('Tag names added to each server\'s data; every one must be present in each server', ['site', 'role'], Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$', 'x-expect': 'a name of letters, digits and _' })),
    servers: List(Server, 'Servers; items are {host, serverName, serverDescription, userSessions{enable, host, virtualProxies[{virtualProxy}]}, serverTags{…}, headers{…}}', [
      {
        host: 'node1.example.com:4747',
        serverName: 'node1',
        serverDescription: 'Central node',
        userSessions: { enable: true, host: 'node1.example.com:4243', virtualProxies: [{ virtualProxy: '/' }] },
        serverTags: { site: 'lab', role: 'central' },
        headers: {},
      },
    ]),
  }),
});

export const ConfigFileSchema = Type.Object({ Svc: SvcConfigSchema }, { additionalProperties: false });

/** The loaded, validated config: every key present, defaults applied. */
export type SvcConfig = Static<typeof SvcConfigSchema>;
export type AuditDestinationType = (typeof AUDIT_DESTINATION_TYPES)[number];

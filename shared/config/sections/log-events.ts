/**
 * `logEvents`: log events over UDP, their categorisation, the engine performance monitor fed by
 * them, and where they are sent.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import { Bool, Feature, Flag, Gated, List, NameValues, Port, Section, Str, StringList, Tags } from '../builders.js';
import { UdpServerConfig } from './udp-listener.js';

// The blocks of enginePerformanceMonitor.monitorFilter: each an `all…` switch with its exclusions, or
// inclusions only.
const all = (name: string) => Bool(true, `true: all ${name} except the exclusions; false: only the inclusions`);
const exclude = <T extends TSchema>(items: T, name: string, flag: string) =>
  List(items, `Excluded ${name} (when ${flag} is true)`);
const include = <T extends TSchema>(items: T, name: string, flag: string) =>
  List(items, `Included ${name} (when ${flag} is false)`);
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
const monSaasLogSource = Feature("Send this service's events", false, "Handle this service's events", {
  logLevel: Section('Levels to send', {
    error: Bool(true, 'Send ERROR and FATAL events'),
    warn: Bool(true, 'Send WARN events'),
  }),
});

export const logEvents = Gated(
  'Log events over UDP; the listener runs when any source is enabled',
  [
    'source.engine.enable',
    'source.proxy.enable',
    'source.repository.enable',
    'source.scheduler.enable',
    'source.apiPerf.enable',
  ],
  {
    udpServerConfig: UdpServerConfig(
      { portLogEvents: Port(9996, 'UDP port for log events; must match the log appenders') },
      'log_events_queue',
    ),
    tags: Tags('Tags added to each log event'),
    source: Section("Which services' log events are handled", {
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
            category: Type.Array(
              Type.Object(
                { name: Type.String({ minLength: 1 }), value: Type.String() },
                { additionalProperties: false },
              ),
              { default: [] },
            ),
            filter: Type.Array(
              Type.Object(
                { type: Type.String({ minLength: 1 }), value: Type.String() },
                { additionalProperties: false },
              ),
              { minItems: 1 },
            ),
          },
          { additionalProperties: false },
        ),
        'Rules {description, logLevel[], action: categorise|drop, category[{name, value}], filter[{type: sw|ew|so, value}]}, evaluated in order',
        [
          {
            description: 'Licence problems',
            logLevel: ['warn', 'error'],
            action: 'categorise',
            category: [{ name: 'qs_log_category', value: 'license' }],
            filter: [{ type: 'so', value: 'license' }],
          },
        ],
      ),
      ruleDefault: Feature('Categories added when no rule matches', false, 'Enable the default rule', {
        category: NameValues('Categories added'),
      }),
    }),
    enginePerformanceMonitor: Feature(
      'Engine performance data extracted from log events',
      false,
      'Extract app performance data from log events',
      {
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
      },
    ),
    sendToMQTT: Feature('Publish log events to MQTT (needs Svc.mqttConfig.enable)', false, 'Send log events to MQTT', {
      baseTopic: Str('svc/logevent', 'Root topic', { minLength: 1 }),
      postTo: Section('Where to post', {
        baseTopic: Bool(false, 'Post all events to the root topic'),
        subsystemTopics: Bool(false, 'Post to subsystem topics below the root topic'),
      }),
    }),
    sendToTsdb: Flag(false, 'Save log events in the tsdb (needs Svc.tsdbConfig.enable)'),
    sendToMonSaas: Feature(
      'Send log events to the monitoring SaaS (needs Svc.monsaas.enable)',
      false,
      'Send log events to the monitoring SaaS',
      {
        destinationAccount: StringList('Account names', ['ops']),
        source: Section('Per service', {
          engine: monSaasLogSource,
          proxy: monSaasLogSource,
          repository: monSaasLogSource,
          scheduler: monSaasLogSource,
        }),
      },
    ),
  },
);

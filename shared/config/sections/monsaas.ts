/**
 * The monitoring SaaS: `monsaas` (its event and metric APIs) and `thirdPartyToolsCredentials` (the
 * accounts that every `destinationAccount` list names).
 */
import { Type } from '@sinclair/typebox';
import { Feature, Flag, HTTP_URL, List, NameValues, Required, Section, Str, StringList } from '../builders.js';

/** One metric of `metric.dynamic`: every one is off until switched on. */
const metricFlag = (what: string) => Flag(false, `Send ${what}`);

export const monsaas = Feature(
  'Platform health metrics and events to the monitoring SaaS',
  false,
  'Send platform health metrics',
  {
    event: Section('Event API', {
      url: Str('', 'Event API URL (one of the two regional endpoints); required when user or log events are sent', {
        pattern: '^(|https?://\\S+)$',
        'x-expect': 'empty or an absolute http:// or https:// URL',
      }),
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
          memory: metricFlag('engine memory'),
          cpu: metricFlag('engine CPU'),
          calls: metricFlag('engine calls'),
          selections: metricFlag('engine selections'),
          sessions: metricFlag('engine sessions'),
          users: metricFlag('engine users'),
          saturated: metricFlag('engine saturation'),
        }),
        apps: Section('App metrics', {
          docCount: metricFlag('app counts'),
          activeDocs: metricFlag('active app list'),
          loadedDocs: metricFlag('loaded app list'),
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
  },
);

export const thirdPartyToolsCredentials = Section('Credentials of third-party tools', {
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
});

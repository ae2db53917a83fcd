/**
 * `alerts`: alert rules over what Svc knows, evaluated in the process (svc local, svc edge, svc demo),
 * their state kept in the embedded store, and notifications to channels (docs/alerts.md).
 *
 * The field names a rule may use, and the labels each has, are the catalog of shared/alerts/rules/fields.ts;
 * the cross-field rules (shared/config/rules.ts) check a rule's field, labels and template against it.
 */
import { type TProperties, Type } from '@sinclair/typebox';
import {
  Bool,
  Duration,
  Enum,
  HTTP_URL,
  List,
  Port,
  Secret,
  Section,
  Str,
  StringList,
  StringMap,
} from '../builders.js';

export const ALERT_SEVERITIES = ['critical', 'warning', 'info'] as const;
export const ALERT_AGGREGATES = ['last', 'min', 'max', 'avg', 'increase', 'perMinute'] as const;
export const ALERT_OPERATORS = ['>', '>=', '<', '<=', '==', '!='] as const;
export const ALERT_CHANNEL_TYPES = ['webhook', 'slack', 'teams', 'email', 'mqtt'] as const;

/** One condition: a field's series, filtered, summed by labels, aggregated over a window, compared with a threshold. */
export const AlertCondition = Type.Object(
  {
    field: Str(
      '',
      'What is measured: a field of the catalog in docs/alerts.md, e.g. health.cpu_total, server.up, logEvents, udp.dropped',
      {
        minLength: 1,
      },
    ),
    where: StringMap(
      'Keep only the series whose labels have these values; a value may list alternatives separated by |, e.g. {level: ERROR|FATAL}',
    ),
    by: StringList(
      'The labels kept: series that differ only in other labels are added up. Empty = every label of the field',
      ['server'],
    ),
    aggregate: Enum(
      ALERT_AGGREGATES,
      'last',
      'How the series is read: last = its value now; min, max, avg = over the window; increase = how much a count grew over the window; perMinute = increase per minute',
    ),
    window: Duration('5m', 'The window of min, max, avg, increase and perMinute (unused by last)'),
    op: Enum(ALERT_OPERATORS, '>', 'How the value is compared with the threshold'),
    threshold: Type.Number({ default: 0, description: 'The number the value is compared with' }),
    baseline: Type.Object(
      {
        factor: Type.Number({
          default: 0,
          minimum: 0,
          description:
            'Also require the value to be above factor times the same aggregate over the baseline window just before the window (0 = no baseline); a rise, not a level',
        }),
        window: Duration('1h', 'The window before the window that the value is compared with'),
      },
      { additionalProperties: false, default: {}, description: 'A rise against the time before (perMinute only)' },
    ),
  },
  { additionalProperties: false },
);

/** One rule of the operator's own. */
export const AlertRule = Type.Object(
  {
    name: Str('', "The rule's name: the alert's `alertname` label; letters, digits and _", {
      minLength: 1,
      pattern: '^[A-Za-z][A-Za-z0-9_]*$',
      'x-expect': 'a name of letters, digits and _ that starts with a letter',
    }),
    enable: Bool(true, 'Evaluate this rule'),
    expr: AlertCondition,
    and: List(AlertCondition, 'More conditions that must hold too, joined on the labels the first one keeps'),
    for: Duration(
      '0',
      'How long the condition must hold, counted from the first evaluation at which it held, before the alert fires',
    ),
    severity: Enum(ALERT_SEVERITIES, 'warning', 'How bad it is: the `severity` label'),
    labels: StringMap('More labels on the alert (routes match on them)'),
    summary: Str(
      '{{alertname}} on {{server}}: {{value}}',
      'One line saying what fired; {{value}}, {{threshold}}, {{alertname}}, {{severity}} and {{<label>}} are replaced',
      { minLength: 1 },
    ),
  },
  { additionalProperties: false },
);

/** One notification channel; `type` says which of its settings are used. */
export const AlertChannel = Type.Object(
  {
    name: Str('', "The channel's name: routes, logs, the metrics and the Alerts page refer to it", { minLength: 1 }),
    type: Enum(
      ALERT_CHANNEL_TYPES,
      'webhook',
      'webhook (Alertmanager payload, version 4), slack, teams, email or mqtt',
    ),
    url: Secret(
      'For webhook, slack and teams: the URL notifications are POSTed to (http:// or https://); a secret: it carries the key',
      HTTP_URL,
    ),
    email: Type.Object(
      {
        smtp: Type.Object(
          {
            host: Str('', 'SMTP server host name or IP address'),
            port: Port(587, 'SMTP port: 587 for submission with STARTTLS, 465 for implicit TLS (secure), 25 for relay'),
            secure: Bool(
              false,
              'Implicit TLS from the first byte (port 465); false = plain connection upgraded by STARTTLS',
            ),
            requireStartTls: Bool(
              true,
              'With secure false: refuse to send unless the server offers STARTTLS (false sends in clear text where it does not)',
            ),
            username: Str('', 'User name for SMTP AUTH; empty = no authentication'),
            password: Secret('Password for SMTP AUTH'),
            caFile: Str(
              '',
              "PEM file of the CA(s) that signed the SMTP server's certificate; empty = Node's built-in public CAs",
            ),
          },
          { additionalProperties: false, default: {} },
        ),
        from: Str('', 'Sender address, e.g. "Svc alerts <svc@example.com>"'),
        to: StringList('Recipient addresses', ['platform-admins@example.com']),
      },
      {
        additionalProperties: false,
        default: {},
        description: 'For email: the SMTP server and the addresses',
        'x-only-when': { key: 'type', value: 'email' },
      },
    ),
    topic: Str(
      'svc/alerts',
      'For mqtt: the topic the JSON notification is published to, on the broker of Svc.mqttConfig',
      {
        minLength: 1,
        'x-only-when': { key: 'type', value: 'mqtt' },
      },
    ),
  },
  { additionalProperties: false },
);

/** Which alerts go to which channels. */
export const AlertRoute = Type.Object(
  {
    match: StringMap(
      'Labels an alert must have, with these values (a value may list alternatives separated by |); empty = every alert',
    ),
    channels: StringList('The channels (by name) the alerts this route matches go to', ['ops-webhook']),
    groupBy: StringList(
      'Alerts with the same values of these labels go out in one notification; empty = alertname and server',
      ['alertname', 'server'],
    ),
  },
  { additionalProperties: false },
);

/** A switch, a `for` and the threshold of a built-in rule (docs/prometheus/README.md gives each default's reason). */
const builtIn = <P extends TProperties>(description: string, forDefault: string, extra: P) =>
  Type.Object(
    {
      enable: Bool(true, `Evaluate the built-in rule: ${description}`),
      for: Duration(forDefault, 'How long it must hold before it fires'),
      ...extra,
    },
    { additionalProperties: false, default: {}, description },
  );
const threshold = (def: number, description: string) => Type.Number({ default: def, description });

export const alerts = Section(
  'Alerts: rules over what Svc knows (server state and health, sessions, UDP, queues and destinations, log events, errors, the client certificate), evaluated by svc local, svc edge and svc demo; their state and history are kept in the embedded store (Svc.store), and notifications go to the channels (docs/alerts.md)',
  {
    enable: Bool(
      true,
      'Evaluate the rules (needs Svc.store.enable). Firing alerts show on the Alerts page (/alerts) and the metrics endpoint; they are sent once a channel is set',
    ),
    evaluationInterval: Duration('10s', 'How often every rule is evaluated'),
    repeatInterval: Duration('4h', 'While an alert fires, its notification is sent again this often'),
    groupWait: Duration(
      '30s',
      'How long a new group waits for more alerts before its first notification (alerts that fire together go out together)',
    ),
    externalUrl: Str(
      '',
      "The address of Svc's pages as the people notified reach them (links in notifications), e.g. https://svc.example.com:3100; empty = http://<host name>:<Svc.configVisualisation.port>",
      HTTP_URL,
    ),
    builtIn: Section('The built-in rules, each on by default (docs/alerts.md, docs/prometheus/README.md)', {
      serverDown: builtIn('a server not answering its health API', '2m', {}),
      engineMemoryHigh: builtIn('engine memory high', '5m', {
        threshold: threshold(0.9, 'Committed memory over committed plus free memory, 0 to 1'),
      }),
      engineCpuHigh: builtIn('engine CPU high', '5m', { threshold: threshold(90, 'CPU in percent') }),
      sessionsDroppedToZero: builtIn('sessions on a server that had many dropping to zero', '2m', {
        threshold: threshold(5, 'The sessions the server had at some point in the window'),
        window: Duration('30m', 'How far back the sessions it had are looked for'),
      }),
      errorLogRise: builtIn('a rise in ERROR log events from one source', '5m', {
        threshold: threshold(1, 'ERROR log events per minute over the window, at least'),
        window: Duration('10m', 'The window of the rate'),
        factor: threshold(3, 'And more than this many times the rate of the baseline window before'),
        baseline: Duration('1h', 'The time before the window the rate is compared with'),
      }),
      udpDatagramsDropped: builtIn('UDP datagrams dropped', '0', {
        threshold: threshold(0, 'Datagrams dropped in the window, more than'),
        window: Duration('5m', 'The window'),
      }),
      destinationFailing: builtIn('a destination failing writes', '5m', {
        threshold: threshold(0, 'Failed writes in the window, more than'),
        window: Duration('5m', 'The window'),
      }),
      queueBackingUp: builtIn("a destination's queue backing up", '0', {
        threshold: threshold(300, 'Age in seconds of the oldest event waiting for the destination, more than'),
      }),
      deadLetters: builtIn('dead letters present', '0', {
        threshold: threshold(0, 'Messages dead-lettered in the window, more than'),
        window: Duration('1h', 'The window'),
      }),
      clientCertificateExpiring: builtIn('the platform client certificate expiring', '0', {
        threshold: threshold(30, 'Days left, fewer than: warning'),
        criticalDays: threshold(7, 'Days left, fewer than: critical'),
      }),
    }),
    rules: List(AlertRule, 'Rules of your own, beside the built-in ones', [
      {
        name: 'engineMemoryOver20GiB',
        expr: { field: 'health.mem_committed', op: '>', threshold: 21474836480 },
        for: '5m',
        severity: 'warning',
        summary: 'Engine on {{server}} has {{value}} bytes committed',
      },
    ]),
    channels: List(AlertChannel, 'Where notifications go', [
      { name: 'ops-webhook', type: 'webhook', url: 'https://alerts.example.com/svc' },
    ]),
    routes: List(
      AlertRoute,
      'Which alerts go to which channels; an alert that no route matches goes to every channel (with no routes, every channel gets every alert, grouped by alertname and server)',
      [{ match: { severity: 'critical' }, channels: ['ops-webhook'], groupBy: ['alertname', 'server'] }],
    ),
  },
);

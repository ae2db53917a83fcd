/**
 * The field catalog: every name a rule's condition may measure (`Svc.alerts.rules[].expr.field`),
 * the labels its series carry, whether it is a gauge (a value now) or a counter (a total since Svc
 * started), and the page that shows it. The facts (edge-agent/alerts/facts.ts) produce exactly these
 * fields; the config rules (shared/config/rules.ts) check rules against them; docs/alerts.md lists
 * them (test/shared/alerts/rules/fields.test.ts keeps the table and this list the same).
 */
import { HEALTH_GAUGES, type HealthGauge } from '../../platform/metrics-endpoint.js';

/** gauge: a value now, read with last, min, max or avg. counter: a total since start, read with increase or perMinute. */
export type FieldKind = 'gauge' | 'counter';

/** The history page showing a field's series: its path, and the labels it takes as query parameters. */
export interface FieldPage {
  path: string;
  /** Labels of the series put in the page's query, under the same name (the history pages' filters). */
  query: readonly string[];
}

/** One field of the catalog. */
export interface FieldSpec {
  name: string;
  labels: readonly string[];
  kind: FieldKind;
  description: string;
  page: FieldPage;
}

/** A field read from each server's last health answer, named after its metric without the `svc_` prefix. */
export interface HealthField {
  field: string;
  gauge: HealthGauge;
}

/** `health.<name>` for every gauge of the metrics endpoint's health list (`svc_cpu_total` → `health.cpu_total`). */
export const HEALTH_FIELDS: readonly HealthField[] = HEALTH_GAUGES.map((gauge) => ({
  field: `health.${gauge.name.replace(/^svc_/, '')}`,
  gauge,
}));

const SERVERS_PAGE: FieldPage = { path: '/servers', query: ['server'] };
const STATUS_PAGE: FieldPage = { path: '/status', query: [] };
const QUEUE_LABELS = ['queue', 'destination'] as const;

/** The catalog, in the order docs/alerts.md lists it. */
export const FIELDS: readonly FieldSpec[] = [
  {
    name: 'server.up',
    labels: ['server'],
    kind: 'gauge',
    description:
      "1 when the server's last health poll answered, 0 when it failed; absent before the server's first poll",
    page: SERVERS_PAGE,
  },
  {
    name: 'server.memoryUsedRatio',
    labels: ['server'],
    kind: 'gauge',
    description: "The engine's committed memory over committed plus free memory (0 to 1), from the last health answer",
    page: SERVERS_PAGE,
  },
  ...HEALTH_FIELDS.map(
    ({ field, gauge }): FieldSpec => ({
      name: field,
      labels: ['server'],
      kind: 'gauge',
      description: `${gauge.help}, from the last health answer (${gauge.name} on the metrics endpoint)`,
      page: SERVERS_PAGE,
    }),
  ),
  {
    name: 'sessions.count',
    labels: ['server', 'virtualProxy'],
    kind: 'gauge',
    description:
      "User sessions of the virtual proxy, from the session poller's last answer (excluded users not counted)",
    page: { path: '/users', query: ['server'] },
  },
  {
    name: 'sessions.users',
    labels: ['server', 'virtualProxy'],
    kind: 'gauge',
    description: "Distinct users with a session on the virtual proxy, from the session poller's last answer",
    page: { path: '/users', query: ['server'] },
  },
  {
    name: 'udp.received',
    labels: ['listener'],
    kind: 'counter',
    description: 'Datagrams a UDP listener read from its socket (listener: user_events or log_events)',
    page: STATUS_PAGE,
  },
  {
    name: 'udp.dropped',
    labels: ['listener', 'reason'],
    kind: 'counter',
    description:
      'Datagrams a UDP listener dropped, by reason (source, size, rate_limit, queue_full; kernel where the OS counts receive-buffer overflows)',
    page: STATUS_PAGE,
  },
  {
    name: 'queue.pending',
    labels: QUEUE_LABELS,
    kind: 'gauge',
    description: 'Events waiting in the local queue to be written by the destination',
    page: STATUS_PAGE,
  },
  {
    name: 'queue.oldestAgeSeconds',
    labels: QUEUE_LABELS,
    kind: 'gauge',
    description:
      'Age in seconds of the oldest event waiting for the destination (since it was received); 0 when none waits',
    page: STATUS_PAGE,
  },
  {
    name: 'destination.failedWrites',
    labels: QUEUE_LABELS,
    kind: 'counter',
    description: 'Events a destination did not write on a delivery attempt (each is delivered again or dead-lettered)',
    page: STATUS_PAGE,
  },
  {
    name: 'queue.deadLettered',
    labels: QUEUE_LABELS,
    kind: 'counter',
    description: 'Messages moved to the dead-letter folder after their last attempt (svc dlq replay puts them back)',
    page: STATUS_PAGE,
  },
  {
    name: 'logEvents',
    labels: ['source', 'level', 'server', 'category'],
    kind: 'counter',
    description:
      'Log events received: source engine, proxy, repository, scheduler or qix-perf; level as sent (DEBUG … FATAL, else other); server the configured serverName of the host, else the host; one count per category name=value of the event, "" for an event without category',
    page: { path: '/logs', query: ['server', 'source', 'level', 'category'] },
  },
  {
    name: 'errors',
    labels: ['type'],
    kind: 'counter',
    description:
      "Errors tracked, by error type (every type from 0; absent while Svc.errorTracking.enable is false), as the metrics endpoint's svc_errors_tracked_total",
    page: STATUS_PAGE,
  },
  {
    name: 'polls.failed',
    labels: ['kind', 'server'],
    kind: 'counter',
    description: 'Polls that failed (no answer, HTTP error, invalid answer), by kind (health, sessions) and server',
    page: SERVERS_PAGE,
  },
  {
    name: 'certificate.daysLeft',
    labels: ['file'],
    kind: 'gauge',
    description:
      'Days until the platform client certificate (Svc.cert.clientCert) stops being valid; absent while no poller uses one',
    page: STATUS_PAGE,
  },
];

const BY_NAME: ReadonlyMap<string, FieldSpec> = new Map(FIELDS.map((field) => [field.name, field]));

/** Every field name, for "did you mean" suggestions. */
export const FIELD_NAMES: readonly string[] = FIELDS.map((field) => field.name);

/** The field of this name, or undefined. */
export function fieldSpec(name: string): FieldSpec | undefined {
  return BY_NAME.get(name);
}

/**
 * The page showing a series of `field`: its path with the series' labels the page filters on in the
 * query (`/servers?server=node2`, `/logs?server=node2&source=engine&level=ERROR`); labels empty or
 * absent are left out. `/alerts` for a field not in the catalog.
 */
export function pageLink(field: string, labels: Readonly<Record<string, string>>): string {
  const page = BY_NAME.get(field)?.page ?? { path: '/alerts', query: [] };
  const query = new URLSearchParams();
  for (const name of page.query) {
    const value = labels[name];
    if (value !== undefined && value !== '') query.set(name, value);
  }
  const text = query.toString();
  return text === '' ? page.path : `${page.path}?${text}`;
}

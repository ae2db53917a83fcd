/**
 * The alerts' endpoints of the read API (docs/api.md, docs/alerts.md): what is firing, the history,
 * and the silences, read from the alert engine (Observed.alerts) rather than the store's read-only
 * connection: the engine holds the alerts of its last evaluation, and its own connection writes the
 * silences that `POST alerts/silences` adds.
 */
import { Value } from '@sinclair/typebox/value';
import { alertViews, silenceFromAsk, silenceView } from '../../../../shared/alerts/silences.js';
import {
  type AlertHistoryAnswer,
  type AlertsAnswer,
  SilenceRequestSchema,
  SilenceViewSchema,
} from '../../../../shared/store/api-types.js';
import { BadCursorError, decodeCursor, isDecimal, nextCursor } from '../../../../shared/store/queries/common.js';
import type { ObservedAlerts } from '../../observed.js';
import type { Endpoint } from './endpoint.js';
import type { PostDescription } from './openapi.js';
import { COMMON } from './params.js';

/** Ended silences the answer still lists, so the page shows what just ended. */
export const ENDED_SILENCES_SHOWN_MS = 86_400_000;

/** A POST body at most (413 above). */
export const MAX_POST_BYTES = 16 * 1024;

/** What the alerts' endpoints know of the config besides the engine (ReadApiOptions). */
export interface AlertsSettings {
  /** The engine while it runs; null while alerts are off (read at each request: the engine registers after the web view is made). */
  observed: () => ObservedAlerts | null;
  /** The rules a silence may name: knownRuleNames of the config. */
  knownRules: readonly string[];
  /** Svc.alerts.evaluationInterval, for the answer while alerts are off. */
  evaluationIntervalMs: number;
}

/** `alerts` and `alerts/history`. */
export const ALERT_ENDPOINTS: readonly Endpoint[] = [
  {
    path: 'alerts',
    summary: 'The alerts pending and firing, the rules, the silences and the channels',
    description:
      'The alerts pending and firing now (firing first, then by severity, the most recent first), each with the silence covering it; every rule with its last evaluation; the silences active or ended in the last 24 hours; the channels with their counts. With alerts off: `enabled: false` and empty lists.',
    parameters: [],
    run: ({ alerts, now }) => alertsAnswer(alerts, now),
  },
  {
    path: 'alerts/history',
    summary: "The alerts' history, newest first",
    description:
      'Fired, notified, notify_failed, resolved and silenced entries in the range, newest first, a page of `limit` at a time; `rule` keeps one rule’s.',
    parameters: [
      COMMON.from,
      COMMON.to,
      COMMON.limit,
      COMMON.cursor,
      { name: 'rule', kind: 'text', description: 'only this rule (alertname)' },
    ],
    run: ({ alerts, range, query }): AlertHistoryAnswer => {
      const limit = query.limit();
      const cursor = query.text('cursor');
      const rule = query.text('rule');
      let beforeId: number | undefined;
      if (cursor !== undefined) {
        const [id] = decodeCursor(cursor, 1, isDecimal) ?? [];
        if (id === undefined) throw new BadCursorError();
        beforeId = Number(id);
      }
      if (!alerts.observed) return { range, entries: [], nextCursor: null };
      const found = alerts.observed.store.history({
        from: range.from,
        to: range.to,
        limit: limit + 1,
        ...(rule === undefined ? {} : { rule }),
        ...(beforeId === undefined ? {} : { beforeId }),
      });
      const entries = found
        .slice(0, limit)
        .map(({ at, ...entry }) => ({ ...entry, time: at, labels: { ...entry.labels } }));
      const last = entries[entries.length - 1];
      return { range, entries, nextCursor: nextCursor(found.length, limit, last && [String(last.id)]) };
    },
  },
];

function alertsAnswer(
  alerts: { observed: ObservedAlerts | null; evaluationIntervalMs: number },
  now: number,
): AlertsAnswer {
  const engine = alerts.observed;
  if (!engine)
    return {
      enabled: false,
      evaluationIntervalMs: alerts.evaluationIntervalMs,
      alerts: [],
      rules: [],
      silences: [],
      channels: [],
    };
  const active = engine.store.activeSilences(now);
  return {
    enabled: true,
    evaluationIntervalMs: engine.evaluationIntervalMs,
    alerts: alertViews(engine.active(), active, now),
    rules: engine.rules(),
    silences: engine.store.silences(now, ENDED_SILENCES_SHOWN_MS).map((silence) => silenceView(silence, now)),
    channels: engine.channels(),
  };
}

/** The POSTs, for the OpenAPI document. */
export const ALERT_POSTS: readonly PostDescription[] = [
  {
    path: 'alerts/silences',
    summary: 'Add a silence',
    description:
      'Silences the alerts of a rule (`rule`) and/or with labels (`matchers`) from now until `endsAt` (RFC 3339, in the future) or for `duration` (`2h`): they are still evaluated and shown, but not notified. The rule must be a built-in one or one of Svc.alerts.rules.',
    body: SilenceRequestSchema,
    status: '201',
    answer: SilenceViewSchema,
    refusals: {
      '400':
        'not JSON, a member of the wrong type or unknown (named in `parameter`), an unknown rule (the known ones listed), neither rule nor matchers, no end, or an end not in the future',
      '404': 'alerts are off',
    },
  },
  {
    path: 'alerts/silences/{id}/expire',
    summary: 'End a silence now',
    description: 'Ends an active silence now; its alerts are notified again from the next evaluation.',
    pathParameters: { id: "the silence's id (8 hex digits)" },
    status: '200',
    answer: SilenceViewSchema,
    refusals: { '400': 'a body that is not JSON', '404': 'alerts are off, or no active silence has this id' },
  },
];

/** A POST's outcome: 2xx with its JSON, or the status and reason of a refusal. */
export type PostOutcome =
  | { status: 200 | 201; value: object }
  | { status: 400 | 404; message: string; parameter?: string };

/** The POST paths below /api/v1/, with the id of `alerts/silences/{id}/expire`. */
export function postTarget(rest: string): { kind: 'silence' } | { kind: 'expire'; id: string } | undefined {
  if (rest === 'alerts/silences') return { kind: 'silence' };
  const expire = /^alerts\/silences\/([0-9A-Za-z_-]+)\/expire$/.exec(rest);
  return expire?.[1] ? { kind: 'expire', id: expire[1] } : undefined;
}

/** The body member a TypeBox error path names (`/matchers/server` → `matchers.server`), or `body` for the whole. */
function memberOf(path: string): string {
  return path === '' ? 'body' : path.slice(1).split('/').join('.');
}

/** `POST alerts/silences` (body: SilenceRequest JSON) and `POST alerts/silences/{id}/expire`, with alerts on. */
export function alertsPost(
  target: { kind: 'silence' } | { kind: 'expire'; id: string },
  body: string,
  engine: ObservedAlerts,
  knownRules: readonly string[],
  now: number,
): PostOutcome {
  let parsed: unknown = {};
  if (body.trim() !== '' || target.kind === 'silence') {
    try {
      parsed = JSON.parse(body);
    } catch (err) {
      return {
        status: 400,
        parameter: 'body',
        message: `body: not JSON (${err instanceof Error ? err.message : String(err)})`,
      };
    }
  }
  if (target.kind === 'expire') {
    if (!engine.store.expireSilence(target.id, now))
      return { status: 404, message: `no active silence has the id ${JSON.stringify(target.id)}` };
    const ended = engine.store.silences(now, ENDED_SILENCES_SHOWN_MS).find((silence) => silence.id === target.id);
    return { status: 200, value: ended ? silenceView(ended, now) : { id: target.id } };
  }
  if (!Value.Check(SilenceRequestSchema, parsed)) {
    const [first] = Value.Errors(SilenceRequestSchema, parsed);
    const member = memberOf(first?.path ?? '');
    return { status: 400, parameter: member, message: `${member}: ${first?.message ?? 'not a silence request'}` };
  }
  const asked = silenceFromAsk(parsed, knownRules, now);
  if ('problem' in asked) {
    const { field, message } = asked.problem;
    return { status: 400, parameter: field, message: `${field}: ${message}` };
  }
  return { status: 201, value: silenceView(engine.store.addSilence(asked.silence), now) };
}

/**
 * Why a POST's headers are refused, or null: its body must be JSON (`content-type: application/json`,
 * which a cross-site form cannot send without the browser asking first), and it must come from the
 * web view's own pages (`Sec-Fetch-Site: same-origin`, or an `Origin` equal to `http://<Host>`).
 */
export function postHeadersProblem(headers: Readonly<Record<string, string | string[] | undefined>>): string | null {
  const one = (name: string) => {
    const value = headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const type = one('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json')
    return `content-type must be application/json (got ${type === undefined ? 'none' : JSON.stringify(type)})`;
  const site = one('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin')
    return `a request from another site (Sec-Fetch-Site: ${site}) cannot change the alerts`;
  if (site === 'same-origin') return null;
  const origin = one('origin');
  if (origin === undefined) return 'an Origin header is required (the web view’s own pages send it)';
  const own = `http://${one('host') ?? ''}`;
  if (origin !== own) return `the Origin ${origin} is not this web view’s (${own})`;
  return null;
}

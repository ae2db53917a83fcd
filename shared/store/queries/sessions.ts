/**
 * `user-sessions` and `user-events`: sessions per server and virtual proxy over time (raw samples
 * where the store still has them, `sessions_5m` before: servers.ts planSeries), who was on when
 * (`session_presence` runs overlapping the range), and the user events newest first, paged.
 */
import type { DatabaseSync } from 'node:sqlite';
import type { UserEventsAnswer, UserSessionsAnswer } from '../api-types.js';
import {
  inTerms,
  newestFirst,
  nextCursor,
  nsBounds,
  nsOf,
  num,
  type Page,
  pageBounds,
  type Range,
  type Row,
  rfc3339,
  rows,
  seriesValue,
  serverNames,
  str,
  strOrNull,
} from './common.js';
import { mergePoints, planSeries, rawBoundary } from './servers.js';

/** Filters of user-sessions; an absent or empty list does not filter. */
export interface SessionFilters {
  servers?: readonly string[] | undefined;
  virtualProxies?: readonly string[] | undefined;
  /** Presence runs of these users only (`DIR\id`). */
  users?: readonly string[] | undefined;
}

/** Sessions per server and virtual proxy over the range, and who was on (at most `limit` runs, newest first). */
export function userSessions(
  db: DatabaseSync,
  params: { range: Range; filters: SessionFilters; limit: number },
): UserSessionsAnswer {
  const { range, filters, limit } = params;
  const [fromNs, toNs] = nsBounds(range);
  const where = inTerms(db, { servers: filters.servers, text: [['virtual_proxy', filters.virtualProxies]] });
  const boundary = rawBoundary(db, 'SELECT min(time_ns) / 1000000 AS t FROM session_samples');
  const plan = planSeries(range, boundary, () =>
    num(
      rows(
        db,
        `SELECT max(n) AS n FROM (SELECT count(*) AS n FROM session_samples WHERE time_ns BETWEEN ? AND ?${where.sql}
         GROUP BY server_id, virtual_proxy)`,
        fromNs,
        toNs,
        ...where.values,
      )[0] ?? {},
      'n',
    ),
  );
  let parts: Row[] = [];
  if (plan.stepMs !== null && plan.rollupFrom < plan.rollupTo) {
    parts = parts.concat(
      rows(
        db,
        `SELECT server_id, virtual_proxy, (bucket_ms / ?) * ? AS t, sum(samples) AS samples,
           sum(sessions_mean * samples) / sum(samples) AS sessions, max(sessions_max) AS sessions_max, max(users_max) AS users
         FROM sessions_5m WHERE bucket_ms >= ? AND bucket_ms < ?${where.sql} GROUP BY 1, 2, 3`,
        plan.stepMs,
        plan.stepMs,
        plan.rollupFrom,
        plan.rollupTo,
        ...where.values,
      ),
    );
  }
  if (plan.rawFrom <= range.to) {
    const rawFromNs = nsOf(plan.rawFrom);
    parts = parts.concat(
      plan.stepMs === null
        ? rows(
            db,
            `SELECT server_id, virtual_proxy, time_ns / 1000000 AS t, 1 AS samples, sessions, sessions AS sessions_max, users
             FROM session_samples WHERE time_ns BETWEEN ? AND ?${where.sql}`,
            rawFromNs,
            toNs,
            ...where.values,
          )
        : rows(
            db,
            `SELECT server_id, virtual_proxy, ((time_ns / 1000000) / ?) * ? AS t, count(*) AS samples,
               avg(sessions) AS sessions, max(sessions) AS sessions_max, max(users) AS users
             FROM session_samples WHERE time_ns BETWEEN ? AND ?${where.sql} GROUP BY 1, 2, 3`,
            plan.stepMs,
            plan.stepMs,
            rawFromNs,
            toNs,
            ...where.values,
          ),
    );
  }
  const names = serverNames(db);
  const byPair = new Map<string, Row[]>();
  for (const row of parts) {
    const key = `${names.get(num(row, 'server_id')) ?? ''}\n${str(row, 'virtual_proxy')}`;
    const list = byPair.get(key) ?? [];
    list.push(row);
    byPair.set(key, list);
  }
  const series = [...byPair]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, pairRows]) => {
      const [server = '', virtualProxy = ''] = key.split('\n');
      const merged = mergePoints(pairRows, { means: ['sessions'], mins: [], maxes: ['sessions_max', 'users'] });
      const t = [...merged.keys()].sort((a, b) => a - b);
      const column = (name: string) => t.map((time) => seriesValue(merged.get(time)?.get(name)));
      return {
        server,
        virtualProxy,
        t,
        sessions: column('sessions'),
        sessionsMax: column('sessions_max'),
        users: column('users'),
      };
    });
  const presenceWhere = inTerms(db, {
    servers: filters.servers,
    text: [
      ['virtual_proxy', filters.virtualProxies],
      ['user_full', filters.users],
    ],
  });
  const runs = rows(
    db,
    `SELECT server_id, virtual_proxy, user_full, start_ms, end_ms FROM session_presence
     WHERE end_ms >= ? AND start_ms <= ?${presenceWhere.sql} ORDER BY start_ms DESC, id DESC LIMIT ?`,
    range.from,
    range.to,
    ...presenceWhere.values,
    limit + 1,
  );
  const presence = runs.slice(0, limit).map((row) => ({
    user: str(row, 'user_full'),
    server: names.get(num(row, 'server_id')) ?? '',
    virtualProxy: str(row, 'virtual_proxy'),
    start: num(row, 'start_ms'),
    end: num(row, 'end_ms'),
  }));
  return { range, stepMs: plan.stepMs, series, presence, presenceTruncated: runs.length > limit };
}

/** Filters of user-events. */
export interface UserEventFilters {
  servers?: readonly string[] | undefined;
  users?: readonly string[] | undefined;
  /** App ids. */
  apps?: readonly string[] | undefined;
}

/** User events in the range, newest first, `limit` a page. */
export function userEvents(
  db: DatabaseSync,
  params: { range: Range; filters: UserEventFilters } & Page,
): UserEventsAnswer {
  const { range, filters, limit, cursor } = params;
  const [fromNs, toNs] = pageBounds(range, cursor);
  const where = inTerms(db, {
    servers: filters.servers,
    text: [
      ['user_full', filters.users],
      ['app_id', filters.apps],
    ],
  });
  const found = newestFirst(
    db,
    'user_events',
    'server_id, message_type, command, user_full, origin, context, message, app_id, app_name, ua_browser, ua_os',
    [fromNs, toNs],
    where,
    limit,
  );
  const names = serverNames(db);
  const events = found.slice(0, limit).map((row) => ({
    id: str(row, 'id'),
    time: rfc3339(num(row, 'time_ms')),
    timeMs: num(row, 'time_ms'),
    server: names.get(num(row, 'server_id')) ?? '',
    messageType: str(row, 'message_type'),
    command: str(row, 'command'),
    user: str(row, 'user_full'),
    origin: str(row, 'origin'),
    context: str(row, 'context'),
    message: str(row, 'message'),
    appId: strOrNull(row, 'app_id'),
    appName: strOrNull(row, 'app_name'),
    browser: strOrNull(row, 'ua_browser'),
    os: strOrNull(row, 'ua_os'),
  }));
  const last = events[events.length - 1];
  return { range, events, nextCursor: nextCursor(found.length, limit, last && [last.id]) };
}

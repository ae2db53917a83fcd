/** The log-event endpoints of the read API: the events, filtered and paged, and their counts over time. */
import {
  LOG_COUNT_BY,
  type LogFilters,
  logCounts,
  logEvents,
  searchWords,
} from '../../../../shared/store/queries/log-events.js';
import type { Endpoint } from './endpoint.js';
import { BadParameterError, COMMON, choice, type QueryParameters } from './params.js';

const FILTERS = [COMMON.level, COMMON.source, COMMON.server, COMMON.category, COMMON.app] as const;

/** The filters of a log-event request (q only when `withText`). */
function filters(query: QueryParameters, withText: boolean): LogFilters {
  const categories = query.list('category')?.map((item) => {
    const at = item.indexOf('=');
    return at === -1 ? { name: item } : { name: item.slice(0, at), value: item.slice(at + 1) };
  });
  const q = withText ? query.text('q') : undefined;
  const words = q === undefined ? undefined : searchWords(q);
  if (words?.length === 0) throw new BadParameterError('q', 'has no word of letters or digits to search for');
  return {
    levels: query.list('level'),
    sources: query.list('source'),
    servers: query.list('server'),
    categories,
    apps: query.list('app'),
    words,
  };
}

/** `log-events` and `log-events/counts`. */
export const LOG_EVENT_ENDPOINTS: readonly Endpoint[] = [
  {
    path: 'log-events',
    summary: 'Log events, newest first',
    description:
      'The log events of the engine, proxy, repository and scheduler in the range, newest first, filtered, a page of `limit` at a time (pass `nextCursor` as `cursor` for the next).',
    parameters: [COMMON.from, COMMON.to, COMMON.limit, COMMON.cursor, ...FILTERS, COMMON.q],
    run: ({ db, range, query }) =>
      logEvents(db, { range, filters: filters(query, true), limit: query.limit(), cursor: query.text('cursor') }),
  },
  {
    path: 'log-events/counts',
    summary: 'Log events counted by level or category over time',
    description:
      'Counts per bucket of `stepMs` and per level (or category `name=value`), largest first, at most 20 series. Buckets under an hour count the events; longer ones come from the hourly counts (whole hours), except with `app`, which the hourly counts do not keep.',
    parameters: [COMMON.from, COMMON.to, choice('by', LOG_COUNT_BY, 'count by level or by category'), ...FILTERS],
    run: ({ db, range, query }) =>
      logCounts(db, { range, by: query.choice('by', LOG_COUNT_BY), filters: filters(query, false) }),
  },
];

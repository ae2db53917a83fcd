/** The performance endpoint of the read API: the apps, objects and methods that cost the most. */
import { PERF_BY, PERF_ORDER } from '../../../../shared/store/api-types.js';
import { performanceTop } from '../../../../shared/store/queries/performance.js';
import type { Endpoint } from './endpoint.js';
import { COMMON, choice } from './params.js';

/** `performance/top`. */
export const PERFORMANCE_ENDPOINTS: readonly Endpoint[] = [
  {
    path: 'performance/top',
    summary: 'The apps, objects or methods that cost the most',
    description:
      "From the engine's performance events counted per hour (whole hours overlapping the range): count, total, p95 and maximum of the process time per app, object or method, with the users who cost the most in each; the `limit` first by `order`.",
    parameters: [
      COMMON.from,
      COMMON.to,
      COMMON.limit,
      choice('by', PERF_BY, 'rank apps, objects (app + object) or methods'),
      choice('order', PERF_ORDER, 'rank by total process time, p95 or count', 'total'),
      COMMON.server,
      COMMON.app,
      COMMON.user,
    ],
    run: ({ db, range, query }) =>
      performanceTop(db, {
        range,
        by: query.choice('by', PERF_BY),
        order: query.choice('order', PERF_ORDER),
        limit: query.limit(),
        filters: { servers: query.list('server'), apps: query.list('app'), users: query.list('user') },
      }),
  },
];

/** The users-and-sessions endpoints of the read API: sessions over time with who was on, and the user events. */
import { userEvents, userSessions } from '../../../../shared/store/queries/sessions.js';
import type { Endpoint } from './endpoint.js';
import { COMMON } from './params.js';

/** `user-sessions` and `user-events`. */
export const SESSION_ENDPOINTS: readonly Endpoint[] = [
  {
    path: 'user-sessions',
    summary: 'Sessions per virtual proxy over time, and who was on when',
    description:
      'Sessions and users per server and virtual proxy as columnar series, and the runs of session polls that listed each user (at most `limit`, newest first; `presenceTruncated` says when there were more).',
    parameters: [COMMON.from, COMMON.to, COMMON.limit, COMMON.server, COMMON.virtualProxy, COMMON.user],
    run: ({ db, range, query }) =>
      userSessions(db, {
        range,
        limit: query.limit(),
        filters: {
          servers: query.list('server'),
          virtualProxies: query.list('virtualProxy'),
          users: query.list('user'),
        },
      }),
  },
  {
    path: 'user-events',
    summary: 'User events (session and connection starts and stops), newest first',
    description: 'The user-activity events in the range, newest first, a page of `limit` at a time.',
    parameters: [COMMON.from, COMMON.to, COMMON.limit, COMMON.cursor, COMMON.server, COMMON.user, COMMON.app],
    run: ({ db, range, query }) =>
      userEvents(db, {
        range,
        limit: query.limit(),
        cursor: query.text('cursor'),
        filters: { servers: query.list('server'), users: query.list('user'), apps: query.list('app') },
      }),
  },
];

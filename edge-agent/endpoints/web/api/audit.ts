/** The audit endpoints of the read API: the audit events, paged, and their counts over time. */
import { AUDIT_COUNT_BY } from '../../../../shared/store/api-types.js';
import { type AuditFilters, auditCounts, auditEvents } from '../../../../shared/store/queries/audit.js';
import type { Endpoint } from './endpoint.js';
import { COMMON, choice, type QueryParameters } from './params.js';

const FILTERS = [COMMON.type, COMMON.app, COMMON.sheet, COMMON.user] as const;

function filters(query: QueryParameters): AuditFilters {
  return { types: query.list('type'), apps: query.list('app'), sheets: query.list('sheet'), users: query.list('user') };
}

/** `audit-events` and `audit-events/counts`. */
export const AUDIT_ENDPOINTS: readonly Endpoint[] = [
  {
    path: 'audit-events',
    summary: 'Audit events, newest first',
    description:
      'The audit events in the range (whatever auditEvents.destination says), newest first, a page of `limit` at a time.',
    parameters: [COMMON.from, COMMON.to, COMMON.limit, COMMON.cursor, ...FILTERS],
    run: ({ db, range, query }) =>
      auditEvents(db, { range, filters: filters(query), limit: query.limit(), cursor: query.text('cursor') }),
  },
  {
    path: 'audit-events/counts',
    summary: 'Audit events counted by type, app, sheet or user over time',
    description: 'Counts per bucket of `stepMs` and per type (or app, sheet, user), largest first, at most 20 series.',
    parameters: [COMMON.from, COMMON.to, choice('by', AUDIT_COUNT_BY, 'count by type, app, sheet or user'), ...FILTERS],
    run: ({ db, range, query }) =>
      auditCounts(db, { range, by: query.choice('by', AUDIT_COUNT_BY), filters: filters(query) }),
  },
];

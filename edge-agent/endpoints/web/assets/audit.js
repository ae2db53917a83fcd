// The Audit page: audit events counted per type, app, sheet and user over time, and the events
// (a row opens its whole envelope). From /api/v1/audit-events/counts and /api/v1/audit-events.
/* global SvcHistory */
'use strict';
{
  const { el, api, body, noData, link, countsChart, pagedTable, details, time, duration, start } = SvcHistory;
  const HINT = 'audit events come from the audit API (Svc.auditEvents) when it is on.';
  const BY = { type: 'Events by type', app: 'Events by app', sheet: 'Events by sheet', user: 'Events by user' };
  const FILTERS = ['type', 'app', 'sheet', 'user'];

  function rows(events) {
    return events.map((e) => ({
      id: e.id,
      cells: [
        time(e.timeMs),
        e.type,
        link('/audit', { app: e.appId }, e.appId),
        e.sheetId,
        e.objectId,
        link('/users', { user: e.user }, e.user),
        e.durationMs === null ? '' : duration(e.durationMs),
      ],
      open: () => details(`${e.type}, ${e.time}`, { ...e.envelope }),
    }));
  }

  async function load(view) {
    const filter = Object.fromEntries(FILTERS.map((name) => [name, view.query.get(name)]));
    const [events, ...counts] = await Promise.all([
      api('audit-events', filter),
      ...Object.keys(BY).map((by) => api('audit-events/counts', { ...filter, by })),
    ]);
    const filtered = FILTERS.some((name) => filter[name]);
    body('counts').replaceChildren(
      el('div', { class: 'chart-grid' }, ...Object.values(BY).map((title, i) => countsChart(title, counts[i], HINT))),
    );
    const box = body('events');
    if (events.events.length === 0)
      return box.replaceChildren(
        noData(filtered ? 'no audit events match these filters in this range' : 'no audit events in this range', HINT),
      );
    box.replaceChildren(
      pagedTable(['time', 'type', 'app', 'sheet', 'object', 'user', 'duration'], events, rows, (cursor) =>
        api('audit-events', { ...filter, cursor }),
      ),
    );
  }

  load.filters = [
    { name: 'type', label: 'type', placeholder: 'event type' },
    { name: 'app', label: 'app', placeholder: 'app id' },
    { name: 'sheet', label: 'sheet', placeholder: 'sheet id' },
    { name: 'user', label: 'user', placeholder: 'user' },
  ];
  start(load);
}

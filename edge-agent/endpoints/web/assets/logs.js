// The Log events page: the events newest first with filters (server, source, level, category, app,
// free text), their counts by level and by category over time, "older" pages, and a row opens the
// whole event. From /api/v1/log-events and /api/v1/log-events/counts.
/* global SvcHistory */
'use strict';
{
  const { el, api, body, noData, link, countsChart, totals, pagedTable, details, time, start } = SvcHistory;
  const HINT =
    "log events come over UDP from the platform's log appenders (Svc.logEvents); they appear once one is received.";
  const FILTERS = ['server', 'source', 'level', 'category', 'app', 'q'];
  function cells(e) {
    return [
      time(e.timeMs),
      link('/servers', { server: e.server }, e.server),
      e.source,
      el('span', { class: `level level-${e.level.toLowerCase()}` }, e.level),
      e.subsystem,
      el('span', { class: 'message' }, e.message),
      e.category.map((c) => `${c.name}=${c.value}`).join(', '),
    ];
  }

  function rows(events) {
    return events.map((e) => ({
      id: e.id,
      cells: cells(e),
      open: () => details(`${e.level} ${e.source} event, ${e.time}`, { ...e.event, category: e.category }),
    }));
  }

  async function load(view, { refresh }) {
    const filter = Object.fromEntries(FILTERS.map((name) => [name, view.query.get(name)]));
    // The counts take every filter but the free text.
    const countFilter = { ...filter, q: null };
    // A live refresh fetches as many rows as are shown (older pages included), so none goes away.
    const shown = document.querySelectorAll('#events tbody tr').length;
    const limit = refresh ? Math.min(1000, Math.max(100, shown)) : 100;
    const [events, byLevel, byCategory] = await Promise.all([
      api('log-events', { ...filter, limit }),
      api('log-events/counts', { ...countFilter, by: 'level' }),
      api('log-events/counts', { ...countFilter, by: 'category' }),
    ]);
    const filtered = FILTERS.some((name) => filter[name]);
    const what = filtered ? 'no log events match these filters in this range' : 'no log events in this range';

    body('counts').replaceChildren(
      totals(byLevel, (level, text) => link('/logs', { level }, text)),
      el(
        'div',
        { class: 'chart-grid' },
        countsChart('Events by level', byLevel, HINT),
        countsChart('Events by category', byCategory, 'categories come from the rules of Svc.logEvents.categorise.'),
      ),
    );

    const box = body('events');
    if (events.events.length === 0)
      return box.replaceChildren(noData(what, filtered ? 'Clear a filter or widen the range.' : HINT));
    box.replaceChildren(
      pagedTable(['time', 'server', 'source', 'level', 'subsystem', 'message', 'category'], events, rows, (cursor) =>
        api('log-events', { ...filter, cursor }),
      ),
    );
  }

  load.filters = [
    { name: 'server', label: 'server', placeholder: 'name' },
    { name: 'source', label: 'source', options: ['engine', 'proxy', 'repository', 'scheduler'] },
    { name: 'level', label: 'level', options: ['FATAL', 'ERROR', 'WARN', 'INFO', 'DEBUG'] },
    { name: 'category', label: 'category', placeholder: 'name=value' },
    { name: 'app', label: 'app', placeholder: 'app id' },
    { name: 'q', label: 'text', placeholder: 'words of the message', size: 20 },
  ];
  start(load);
}

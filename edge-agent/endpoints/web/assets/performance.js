// The Performance page: the apps, objects or methods (`by`) that cost the engine the most over the
// range, ordered by total time, p95 or count (`order`), each with the users it cost most for; links
// to the app's log events and audit events. From /api/v1/performance/top.
/* global SvcHistory */
'use strict';
{
  const { el, api, body, noData, table, link, navigate, num, duration, start } = SvcHistory;
  const HINT =
    "engine performance events come over UDP from the engine's performance log appender, kept when Svc.logEvents.source.apiPerf and Svc.logEvents.enginePerformanceMonitor are on.";
  const BY = { app: 'Apps', object: 'Objects', method: 'Methods' };
  const ORDER = { total: 'total time', p95: 'p95', count: 'count' };

  function switcher(name, choices, current) {
    return el(
      'span',
      { class: 'group', role: 'group', 'aria-label': name },
      ...Object.entries(choices).map(([value, label]) => {
        const button = el(
          'button',
          { type: 'button', [`data-${name}`]: value, 'aria-pressed': String(value === current) },
          label,
        );
        button.addEventListener('click', () => navigate({ [name]: value }));
        return button;
      }),
    );
  }

  async function load(view) {
    const by = Object.hasOwn(BY, view.query.get('by') ?? '') ? view.query.get('by') : 'app';
    const order = Object.hasOwn(ORDER, view.query.get('order') ?? '') ? view.query.get('order') : 'total';
    const server = view.query.get('server');
    const answer = await api('performance/top', { by, order, server });
    const box = body('top');
    const controls = el(
      'div',
      { class: 'toolbar' },
      switcher('by', BY, by),
      el('span', { class: 'label' }, 'ordered by'),
      switcher('order', ORDER, order),
    );
    if (answer.rows.length === 0)
      return box.replaceChildren(
        controls,
        noData(
          server
            ? `no engine performance events of ${server} in this range`
            : 'no engine performance events in this range',
          HINT,
        ),
      );
    const measure = { total: (r) => r.totalMs, p95: (r) => r.p95Ms, count: (r) => r.count }[order];
    const top = Math.max(...answer.rows.map(measure), 1);
    const headers = [
      '#',
      'app',
      ...(by === 'object' ? ['object'] : []),
      ...(by === 'method' ? ['method'] : []),
      'count',
      'total',
      'p95',
      'max',
      'for whom',
      'see',
    ];
    box.replaceChildren(
      controls,
      table(
        headers,
        answer.rows.map((r, i) => {
          const bar = el('span', { class: 'bar' });
          // Width through the CSSOM (the CSP allows no inline style attribute).
          bar.style.width = `${(100 * measure(r)) / top}%`;
          const figure = (text, mine) => (mine ? el('span', { class: 'measured' }, bar, el('span', {}, text)) : text);
          return {
            id: r.key,
            cells: [
              String(i + 1),
              el('span', { class: 'app', title: r.appId }, r.appName || r.appId || '–'),
              ...(by === 'object' ? [`${r.objectType} ${r.objectId}`.trim()] : []),
              ...(by === 'method' ? [r.method] : []),
              figure(num(r.count), order === 'count'),
              figure(duration(r.totalMs), order === 'total'),
              figure(duration(r.p95Ms), order === 'p95'),
              duration(r.maxMs),
              el(
                'span',
                { class: 'users' },
                ...r.topUsers.flatMap((u, k) => [
                  k > 0 ? ', ' : '',
                  el(
                    'span',
                    { class: 'who' },
                    link('/users', { user: u.user }, u.user),
                    ` (${num(u.count)}, ${duration(u.totalMs)})`,
                  ),
                ]),
              ),
              r.appId
                ? el(
                    'span',
                    { class: 'links' },
                    link('/logs', { app: r.appId }, 'log events'),
                    link('/audit', { app: r.appId }, 'audit'),
                  )
                : '',
            ],
          };
        }),
      ),
    );
  }

  load.filters = [{ name: 'server', label: 'server', placeholder: 'all servers' }];
  start(load);
}

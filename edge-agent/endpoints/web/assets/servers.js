// The Servers page: each server's latest values and its CPU, memory, sessions, users, apps and cache
// over the range (one chart per measure, one line per server), from /api/v1/servers and
// /api/v1/servers/{name}/health. Drag across a chart to zoom; a server links to its log events and sessions.
/* global SvcHistory */
'use strict';
{
  const { el, api, body, noData, table, link, chart, align, num, time, start } = SvcHistory;
  const HINT =
    'health samples come from polling the servers of Svc.serversToMonitor; they appear after the first poll.';
  /** Servers charted at most (each is one request); a `server` filter shows one. */
  const MAX_CHARTED = 12;

  const MEASURES = [
    ['CPU', 'cpu', { unit: ' %', floor: 100 }],
    ['Memory allocated (MB)', 'memAllocated', {}],
    ['Sessions', 'sessions', {}],
    ['Users', 'users', {}],
    ['Apps loaded', 'appsLoaded', {}],
    ['Cache hit ratio', 'cacheHitRatio', { unit: ' %', floor: 100, percent: true }],
  ];

  async function load(view) {
    const chosen = view.query.get('server') ?? '';
    const answer = await api('servers');
    const servers = answer.servers.filter((s) => !chosen || s.name === chosen);
    const latestBox = body('latest');
    const chartsBox = body('charts');
    if (servers.length === 0) {
      const what = chosen ? `no server named ${chosen} has health in this range` : 'no server health in this range';
      latestBox.replaceChildren(noData(what, HINT));
      chartsBox.replaceChildren();
      return;
    }
    const charted = servers.slice(0, MAX_CHARTED);
    const healths = await Promise.all(charted.map((s) => api(`servers/${encodeURIComponent(s.name)}/health`)));

    latestBox.replaceChildren(
      table(
        [
          'server',
          'last sample',
          'CPU',
          'memory allocated',
          'sessions',
          'users',
          'apps loaded',
          'cache hits',
          'version',
          'see',
        ],
        servers.map((s) => {
          const l = s.latest;
          return {
            id: s.name,
            cells: [
              link('/servers', { server: s.name }, s.name),
              l ? time(l.time) : `none in range (last ${time(s.lastSeen)})`,
              l ? `${num(l.cpu, 1)} %` : '–',
              l ? `${num(l.memAllocated)} MB` : '–',
              l ? num(l.sessions) : '–',
              l ? num(l.users) : '–',
              l ? `${num(l.appsLoaded)} (${num(l.appsActive)} active)` : '–',
              l && l.cacheLookups > 0 ? `${num((100 * l.cacheHits) / l.cacheLookups, 1)} %` : '–',
              l ? l.version : '–',
              el(
                'span',
                { class: 'links' },
                link('/logs', { server: s.name }, 'log events'),
                link('/users', { server: s.name }, 'sessions'),
              ),
            ],
          };
        }),
      ),
      servers.length > charted.length
        ? el(
            'p',
            { class: 'meta' },
            `The charts show the first ${MAX_CHARTED} servers; pick one with the server filter.`,
          )
        : '',
    );

    if (healths.every((h) => h.t.length === 0))
      return chartsBox.replaceChildren(noData('no health samples in this range', HINT));
    chartsBox.replaceChildren(
      el(
        'div',
        { class: 'chart-grid' },
        ...MEASURES.map(([title, key, y]) => {
          const scale = y.percent ? 100 : 1;
          const aligned = align(
            healths.map((h) => ({ t: h.t, values: h[key].map((v) => (v === null ? null : v * scale)) })),
          );
          return chart(
            title,
            aligned.t,
            healths.map((h, k) => ({ label: h.server, values: aligned.values[k] })),
            y,
          );
        }),
      ),
      el(
        'p',
        { class: 'meta' },
        healths[0].stepMs
          ? `Points are ${num(healths[0].stepMs / 60_000, 1)}-minute means.`
          : 'Points are the raw samples.',
      ),
    );
  }

  load.filters = [{ name: 'server', label: 'server', placeholder: 'all servers' }];
  start(load);
}

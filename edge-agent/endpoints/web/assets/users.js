// The Users page: sessions per virtual proxy over time, who was on when (a timeline of presence runs
// per user, or a table when there are too many), and the session starts and stops (user events),
// of one user when the `user` filter is set. From /api/v1/user-sessions and /api/v1/user-events.
/* global SvcHistory */
'use strict';
{
  const { el, api, body, noData, table, link, chart, pagedTable, align, details, time, duration, start } = SvcHistory;
  const SESSIONS_HINT = "sessions come from polling the proxies' session lists (Svc.userSessions).";
  const EVENTS_HINT = 'user events come over UDP from the proxy (Svc.userEvents).';
  /** Users drawn as a timeline at most; more are a table. */
  const MAX_TIMELINE_USERS = 40;
  /** Presence runs asked for (the API's largest page): a month of a busy platform is still cut, and says so. */
  const MAX_PRESENCE_RUNS = 1000;

  function timeline(view, presence) {
    const users = new Map();
    for (const run of presence) {
      const runs = users.get(run.user) ?? [];
      runs.push(run);
      users.set(run.user, runs);
    }
    const span = view.to - view.from;
    const rows = [...users.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([user, runs]) => {
        const track = el('div', { class: 'track' });
        for (const run of runs) {
          const start = Math.max(run.start, view.from);
          const end = Math.min(Math.max(run.end, start), view.to);
          const bar = el('span', {
            class: 'run',
            title: `${run.user} on ${run.server}${run.virtualProxy}: ${time(run.start)} → ${time(run.end)} (${duration(run.end - run.start)})`,
          });
          // Positions set through the CSSOM (the CSP allows no inline style attribute).
          bar.style.left = `${(100 * (start - view.from)) / span}%`;
          bar.style.width = `max(2px, ${(100 * (end - start)) / span}%)`;
          track.append(bar);
        }
        return el(
          'div',
          { class: 'timeline-row', 'data-user': user },
          el('span', { class: 'who' }, link('/users', { user }, user)),
          track,
        );
      });
    return el(
      'div',
      { class: 'timeline' },
      ...rows,
      el(
        'div',
        { class: 'timeline-row axis' },
        el('span', { class: 'who' }),
        el('div', { class: 'track ends' }, el('span', {}, time(view.from)), el('span', {}, time(view.to))),
      ),
    );
  }

  function presenceTable(presence) {
    return table(
      ['user', 'server', 'virtual proxy', 'from', 'to', 'for'],
      presence.map((run) => ({
        cells: [
          link('/users', { user: run.user }, run.user),
          run.server,
          run.virtualProxy,
          time(run.start),
          time(run.end),
          duration(run.end - run.start),
        ],
      })),
    );
  }

  function eventRows(events) {
    return events.map((e) => ({
      id: e.id,
      cells: [
        time(e.timeMs),
        link('/servers', { server: e.server }, e.server),
        e.command,
        link('/users', { user: e.user }, e.user),
        e.appName ?? e.appId ?? '',
        e.browser ?? '',
        e.origin,
      ],
      open: () => details(`${e.command}, ${e.time}`, e),
    }));
  }

  async function load(view) {
    const server = view.query.get('server');
    const user = view.query.get('user');
    const [sessions, events] = await Promise.all([
      api('user-sessions', { server, user, limit: MAX_PRESENCE_RUNS }),
      api('user-events', { server, user }),
    ]);
    const filtered = Boolean(server || user);

    const sessionBox = body('sessions');
    const withData = sessions.series.filter((s) => s.t.length > 0);
    if (withData.length === 0)
      sessionBox.replaceChildren(
        noData(
          filtered ? 'no sessions match these filters in this range' : 'no session samples in this range',
          SESSIONS_HINT,
        ),
      );
    else {
      const aligned = align(withData.map((s) => ({ t: s.t, values: s.sessions })));
      sessionBox.replaceChildren(
        chart(
          'Sessions',
          aligned.t,
          withData.map((s, k) => ({ label: `${s.server} ${s.virtualProxy}`, values: aligned.values[k] })),
          { height: 200 },
        ),
      );
    }

    const presenceBox = body('presence');
    const distinct = new Set(sessions.presence.map((run) => run.user)).size;
    if (sessions.presence.length === 0)
      presenceBox.replaceChildren(noData('nobody was on in this range', SESSIONS_HINT));
    else
      presenceBox.replaceChildren(
        distinct <= MAX_TIMELINE_USERS ? timeline(view, sessions.presence) : presenceTable(sessions.presence),
        sessions.presenceTruncated
          ? el('p', { class: 'meta' }, 'Only the first runs are shown: narrow the range or pick a user.')
          : '',
      );

    const eventBox = body('user-events');
    if (events.events.length === 0)
      return eventBox.replaceChildren(
        noData(
          user ? `no session starts or stops of ${user} in this range` : 'no user events in this range',
          EVENTS_HINT,
        ),
      );
    eventBox.replaceChildren(
      pagedTable(['time', 'server', 'command', 'user', 'app', 'browser', 'origin'], events, eventRows, (cursor) =>
        api('user-events', { server, user, cursor }),
      ),
    );
  }

  load.filters = [
    { name: 'server', label: 'server', placeholder: 'name' },
    { name: 'user', label: 'user', placeholder: 'DIRECTORY\\userid', size: 20 },
  ];
  start(load);
}

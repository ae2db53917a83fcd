// The Alerts page (docs/alerts.md, "The Alerts page"): what fires now and what is pending, the
// history of the alerts (paged, by rule, over the range of the other pages), the silences with the
// form that makes one, the rules with their last evaluation, and the channels. From /api/v1/alerts and
// /api/v1/alerts/history; a silence is made and ended with a POST to /api/v1/alerts/silences. The
// frame and the silence form are pages.ts alertsPage; a refresh never touches the form.
/* global SvcHistory */
'use strict';
{
  const { el, api, request, refresh, body, noData, table, pagedTable, details, time, num, start } = SvcHistory;
  /** Labels every alert has, shown in columns of their own rather than among the labels. */
  const SHOWN_APART = new Set(['alertname', 'severity', 'server']);
  const HISTORY_HINT = "an alert's history starts when it first fires (Svc.alerts)";
  const NAME_KEY = 'svc.silence.createdBy';
  const SECTIONS = ['active', 'history', 'silences', 'rules', 'channels'];
  /** The fingerprint of the URL's `#…` (a notification's link): its rows are marked at every render. */
  const target = decodeURIComponent(location.hash.slice(1));
  /** Whether the page has scrolled to the target yet (once: after that, the reader scrolls). */
  let scrolledToTarget = false;

  /** A measured value: as precise as it needs, at most two decimals. */
  const measured = (number) =>
    number === null || number === undefined
      ? '–'
      : Number(number).toLocaleString('en-US', { maximumFractionDigits: 2 });
  /** The time of day when it is today, else the date and time. */
  const clock = (ms) => (new Date(ms).toDateString() === new Date().toDateString() ? time(ms).slice(11) : time(ms));
  /** How long ago, roughly: `40 s`, `18 min`, `5 h`, `3 d`. */
  function ago(ms) {
    const seconds = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (seconds < 90) return `${seconds} s`;
    if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
    if (seconds < 48 * 3600) return `${Math.round(seconds / 3600)} h`;
    return `${Math.round(seconds / 86_400)} d`;
  }
  const severity = (level) => el('span', { class: `severity severity-${level}` }, level);

  /** An alert's labels but alertname, severity and server, as `key=value` chips. */
  function otherLabels(labels) {
    const entries = Object.entries(labels).filter(([key]) => !SHOWN_APART.has(key));
    return el('span', { class: 'labels' }, ...entries.map(([key, value]) => el('code', {}, `${key}=${value}`)));
  }

  function matchersText(matchers) {
    return Object.entries(matchers)
      .map(([key, value]) => `${key}=${value}`)
      .join(', ');
  }

  /** `server=a, listener=b` → {server: 'a', listener: 'b'}; a part without `=` is refused, naming it. */
  function parseMatchers(text) {
    const matchers = {};
    for (const part of text.split(',')) {
      const pair = part.trim();
      if (pair === '') continue;
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`labels: "${pair}" is not key=value (separate labels with commas)`);
      matchers[pair.slice(0, at).trim()] = pair.slice(at + 1).trim();
    }
    return matchers;
  }

  // ── the silence form ────────────────────────────────────────────────────────────────────────────

  const form = document.getElementById('silence-form');
  const message = document.getElementById('silence-message');

  function say(text, bad) {
    message.textContent = text;
    message.classList.toggle('bad', bad);
    message.hidden = false;
  }

  /** The "Silence" action of an alert: the form gets its rule and its labels (not its severity, so a rise to critical stays silenced). */
  function fillForm(alert) {
    const matchers = Object.fromEntries(
      Object.entries(alert.labels).filter(([key]) => key !== 'alertname' && key !== 'severity'),
    );
    form.elements.rule.value = alert.rule;
    form.elements.matchers.value = matchersText(matchers);
    message.hidden = true;
    form.scrollIntoView({ block: 'center' });
    form.elements.comment.focus();
  }

  form.elements.createdBy.value = localStorage.getItem(NAME_KEY) ?? '';
  form.addEventListener('reset', () => {
    message.hidden = true;
  });
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const fields = form.elements;
    const silence = {};
    try {
      const matchers = parseMatchers(fields.matchers.value);
      if (fields.rule.value.trim()) silence.rule = fields.rule.value.trim();
      if (Object.keys(matchers).length > 0) silence.matchers = matchers;
      if (fields.endsAt.value) {
        const end = new Date(fields.endsAt.value).getTime();
        if (!Number.isFinite(end)) throw new Error('until: not a date and time');
        silence.endsAt = new Date(end).toISOString();
      } else if (fields.duration.value.trim()) silence.duration = fields.duration.value.trim();
      if (fields.comment.value.trim()) silence.comment = fields.comment.value.trim();
      if (fields.createdBy.value.trim()) silence.createdBy = fields.createdBy.value.trim();
    } catch (err) {
      return say(err.message, true);
    }
    const button = form.querySelector('button[type="submit"]');
    button.disabled = true;
    try {
      const made = await request('alerts/silences', {}, silence);
      localStorage.setItem(NAME_KEY, fields.createdBy.value.trim());
      for (const name of ['rule', 'matchers', 'endsAt', 'comment']) fields[name].value = '';
      say(`Silence ${made.id} made, until ${time(made.endsAt)}.`, false);
      refresh();
    } catch (err) {
      say(err.message, true);
    } finally {
      button.disabled = false;
    }
  });

  // ── the sections ────────────────────────────────────────────────────────────────────────────────

  function active(answer) {
    const box = body('active');
    if (answer.alerts.length === 0)
      return box.replaceChildren(
        el(
          'p',
          { class: 'empty' },
          `Nothing fires and nothing is pending: ${answer.rules.length} rule${answer.rules.length === 1 ? '' : 's'}, evaluated every ${num(answer.evaluationIntervalMs / 1000)} s.`,
        ),
      );
    // Firing first, then pending (the API's order within each).
    const alerts = [...answer.alerts].sort((a, b) => (a.phase === b.phase ? 0 : a.phase === 'firing' ? -1 : 1));
    const rows = alerts.map((alert) => {
      const since = alert.firedAt ?? alert.activeSince;
      const silence = el('button', { type: 'button', class: 'silence' }, 'Silence');
      silence.addEventListener('click', () => fillForm(alert));
      return {
        id: alert.fingerprint,
        cells: [
          el('span', { class: `state ${alert.phase === 'firing' ? 'failed' : 'waiting'}` }, alert.phase),
          severity(alert.severity),
          alert.rule,
          el('span', { class: 'where' }, alert.labels.server ?? '', otherLabels(alert.labels)),
          el('span', { title: time(since) }, `${clock(since)} (${ago(since)})`),
          measured(alert.value),
          el('span', { class: 'message' }, alert.summary),
          el('a', { href: alert.link }, 'Show'),
          el(
            'span',
            { class: 'silencing' },
            alert.silencedBy ? el('span', { class: 'silenced' }, `silenced by ${alert.silencedBy}`) : silence,
          ),
        ],
      };
    });
    const made = table(['state', 'severity', 'rule', 'server, labels', 'since', 'value', 'summary', 'page', ''], rows);
    // The row is the target of a notification's link, /alerts#<fingerprint>.
    for (const tr of made.querySelectorAll('tbody tr')) tr.id = tr.dataset.id;
    box.replaceChildren(made);
  }

  function historyRows(entries) {
    return entries.map((entry) => ({
      id: String(entry.id),
      data: { fingerprint: entry.fingerprint },
      cells: [
        time(entry.time),
        el('span', { class: `event event-${entry.event}` }, entry.event.replace('_', ' ')),
        entry.rule,
        severity(entry.severity),
        entry.labels.server ?? '–',
        otherLabels(entry.labels),
        measured(entry.value),
        entry.channel ?? '',
        el('span', { class: 'message' }, entry.detail ?? ''),
      ],
      open: () => details(`${entry.rule}: ${entry.event}, ${time(entry.time)}`, entry),
    }));
  }

  async function history(view, refreshing) {
    const rule = view.query.get('rule');
    // A live refresh fetches as many rows as are shown (older pages included), so none goes away.
    const shown = document.querySelectorAll('#history tbody tr').length;
    const limit = refreshing ? Math.min(1000, Math.max(100, shown)) : 100;
    const page = (answer) => ({ events: answer.entries, nextCursor: answer.nextCursor });
    const first = await api('alerts/history', { rule, limit });
    const box = body('history');
    if (first.entries.length === 0)
      return box.replaceChildren(
        noData(
          rule ? `rule ${rule} has no history in this range` : 'no alert history in this range',
          rule ? 'Clear the filter or widen the range.' : HISTORY_HINT,
        ),
      );
    box.replaceChildren(
      pagedTable(
        ['time', 'event', 'rule', 'severity', 'server', 'labels', 'value', 'channel', 'detail'],
        page(first),
        historyRows,
        async (cursor) => page(await api('alerts/history', { rule, cursor })),
      ),
    );
  }

  function silences(answer) {
    const box = body('silences');
    if (answer.silences.length === 0)
      return box.replaceChildren(el('p', { class: 'empty' }, 'No silence is active or ended in the last 24 hours.'));
    const rows = answer.silences.map((s) => {
      const state = s.active ? 'active' : s.expiredAt !== null ? `expired ${time(s.expiredAt)}` : 'ended';
      let action = '';
      if (s.active) {
        action = el('button', { type: 'button', class: 'expire' }, 'Expire');
        action.addEventListener('click', async () => {
          action.disabled = true;
          try {
            await request(`alerts/silences/${encodeURIComponent(s.id)}/expire`, {}, {});
            refresh();
          } catch (err) {
            SvcHistory.showError(err);
            action.disabled = false;
          }
        });
      }
      return {
        id: s.id,
        cells: [
          el('code', {}, s.id),
          el('span', { class: `state ${s.active ? 'ok' : 'ended'}` }, state),
          s.rule ?? 'any rule',
          matchersText(s.matchers) || '–',
          time(s.startsAt),
          time(s.endsAt),
          s.createdBy,
          el('span', { class: 'message' }, s.comment),
          action,
        ],
      };
    });
    box.replaceChildren(table(['id', 'state', 'rule', 'labels', 'from', 'until', 'by', 'comment', ''], rows));
  }

  function rules(answer) {
    const names = [...new Set(answer.rules.map((rule) => rule.name))];
    const list = document.getElementById('rule-names');
    // Set again only when the rules change, so an open suggestion list stays open.
    if ([...list.options].map((option) => option.value).join('\n') !== names.join('\n'))
      list.replaceChildren(...names.map((name) => el('option', { value: name })));
    const rows = answer.rules.map((rule) => {
      const last = rule.lastEvaluation;
      return {
        id: rule.id,
        cells: [
          rule.name,
          severity(rule.severity),
          rule.builtIn ? 'built in' : 'own',
          el('code', { class: 'rule-text' }, rule.text),
          last ? time(last.at) : 'not yet',
          last ? num(last.series) : '–',
          last ? num(last.pending) : '–',
          last ? num(last.firing) : '–',
          last?.error ? el('span', { class: 'stale message' }, last.error) : '',
        ],
      };
    });
    body('rules').replaceChildren(
      rows.length === 0
        ? el('p', { class: 'empty' }, 'No rule is on (Svc.alerts.builtIn, Svc.alerts.rules).')
        : table(['rule', 'severity', 'kind', 'condition', 'evaluated', 'series', 'pending', 'firing', 'error'], rows),
    );
  }

  function channels(answer) {
    const rows = answer.channels.map((channel) => ({
      id: channel.name,
      cells: [
        channel.name,
        channel.type,
        el('code', {}, channel.target),
        channel.failing
          ? el('span', { class: 'state failed' }, 'failing')
          : channel.sent === 0
            ? el('span', { class: 'state waiting' }, 'nothing sent')
            : el('span', { class: 'state ok' }, 'delivering'),
        num(channel.sent),
        el('span', { class: channel.failed > 0 ? 'stale' : '' }, num(channel.failed)),
        el('span', { class: 'stale message' }, channel.lastError ?? ''),
      ],
    }));
    body('channels').replaceChildren(
      rows.length === 0
        ? el('p', { class: 'empty' }, 'No channel: alerts are shown here but sent nowhere (Svc.alerts.channels).')
        : table(['channel', 'type', 'target', 'state', 'sent', 'failed', 'last error'], rows),
    );
  }

  /** When alerts are off, the page says so and which settings turn them on, and shows nothing else; `why` is the API's word, if any. */
  function disabled(why) {
    const notice = document.getElementById('disabled');
    notice.replaceChildren(
      el('strong', {}, 'Alerts are off.'),
      ' Svc evaluates its rules, sends notifications and keeps silences when ',
      el('code', {}, 'Svc.alerts.enable'),
      ' is true and the embedded store is on (',
      el('code', {}, 'Svc.store.enable'),
      '), where the alerts keep their state.',
      why ? ` (${why})` : '',
    );
    notice.hidden = false;
    for (const id of SECTIONS) document.getElementById(id).hidden = true;
  }

  function enabledAgain() {
    document.getElementById('disabled').hidden = true;
    for (const id of SECTIONS) document.getElementById(id).hidden = false;
  }

  /** Marks the alert (or, once it is not active, its history) a link's `#fingerprint` names; scrolls to it once. */
  function showTarget() {
    if (!target) return;
    const alert = document.getElementById(target);
    const rows = alert
      ? [alert]
      : [...document.querySelectorAll('#history tbody tr')].filter((tr) => tr.dataset.fingerprint === target);
    for (const row of rows) row.classList.add('target');
    if (rows.length === 0 || scrolledToTarget) return;
    rows[0].scrollIntoView({ block: 'center' });
    scrolledToTarget = true;
  }

  async function load(view, { refresh: refreshing }) {
    let answer;
    try {
      answer = await request('alerts');
    } catch (err) {
      // With the store off, the whole API answers 404 saying so.
      if (err.status === 404) return disabled(err.message);
      throw err;
    }
    if (!answer.enabled) return disabled('');
    enabledAgain();
    active(answer);
    silences(answer);
    rules(answer);
    channels(answer);
    await history(view, refreshing);
    showTarget();
  }

  load.filters = [{ name: 'rule', label: 'rule', placeholder: 'rule name', size: 18 }];
  start(load);
}

// What the history pages (/servers, /logs, /users, /performance, /audit) share: the time range and the
// filters, kept in the page's URL (so a link or a reload shows the same view, and links between the
// pages carry the range), reading the read API (/api/v1/) with its errors shown as text, uPlot charts
// whose drag-selection zooms the range, tables, the event details dialog, "no data yet", and the live
// refresh while the range ends at "now". Every value is set as text (textContent), never as HTML.
// A page's own script calls SvcHistory.start(load), where load(view) fetches and renders its data.
/* global uPlot */
'use strict';

// Shared with the page's own script, loaded after this one.
globalThis.SvcHistory = (() => {
  const LIVE_MS = 10_000;
  const HOUR = 3_600_000;
  const RANGES = { '1h': HOUR, '24h': 24 * HOUR, '7d': 7 * 24 * HOUR, '30d': 30 * 24 * HOUR };
  const RANGE_LABELS = { '1h': 'Last hour', '24h': '24 hours', '7d': '7 days', '30d': '30 days' };
  const DEFAULT_RANGE = '24h';
  /** Levels keep their colour in every chart: errors red, warnings amber. */
  const LEVEL_COLOURS = { FATAL: '#7f1d1d', ERROR: '#b42318', WARN: '#a15c07', INFO: '#1f5f8b', DEBUG: '#57534e' };
  const COMPACT = new Intl.NumberFormat('en-US', { notation: 'compact', maximumFractionDigits: 1 });
  const COLOURS = [
    '#1f5f8b',
    '#c2410c',
    '#1e7d46',
    '#7a3e9d',
    '#b42318',
    '#a15c07',
    '#0e7490',
    '#be185d',
    '#4d7c0f',
    '#57534e',
  ];
  /** The charts of the current render, resized with the window. */
  let charts = [];
  /** Bumped by every navigation: an answer or a timer of an older view is dropped. */
  let generation = 0;
  let timer;
  let loadPage;
  /** The view of the render under way (its range is fixed when it starts). */
  let rendering;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs ?? {})) {
      if (value === undefined || value === null || value === false) continue;
      if (name === 'class') node.className = value;
      else node.setAttribute(name, value === true ? '' : String(value));
    }
    for (const child of children) {
      if (child === undefined || child === null || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  // ── the view: range and filters from the URL ────────────────────────────────────────────────────

  /** The view the URL asks for: the range (ms), whether it is live (ends at now or later), and the query. */
  function view() {
    const query = new URLSearchParams(location.search);
    const from = Date.parse(query.get('from') ?? '');
    const to = Date.parse(query.get('to') ?? '');
    const now = Date.now();
    if (Number.isFinite(from) && Number.isFinite(to) && from < to)
      return { key: 'custom', from, to, live: to >= now, query };
    const key = Object.hasOwn(RANGES, query.get('range') ?? '') ? query.get('range') : DEFAULT_RANGE;
    return { key, from: now - RANGES[key], to: now, live: true, query };
  }

  /** The URL of `path` with this view's range and the given parameters (null or '' drops one). */
  function href(path, parameters = {}, keep = false) {
    const current = new URLSearchParams(location.search);
    const next = new URLSearchParams();
    for (const name of keep ? [...current.keys()] : ['range', 'from', 'to']) {
      const value = current.get(name);
      if (value) next.set(name, value);
    }
    for (const [name, value] of Object.entries(parameters)) {
      if (value === null || value === undefined || value === '') next.delete(name);
      else next.set(name, String(value));
    }
    const text = next.toString();
    return text ? `${path}?${text}` : path;
  }

  /** Shows the view with these parameters changed (a new history entry, so Back returns). */
  function navigate(parameters) {
    history.pushState(null, '', href(location.pathname, parameters, true));
    reload();
  }

  const RANGE_PARAMETERS = { range: null, from: null, to: null };

  function rangeBar() {
    const box = document.getElementById('range');
    const current = view();
    const buttons = Object.keys(RANGES).map((key) => {
      const button = el(
        'button',
        { type: 'button', 'data-range': key, 'aria-pressed': String(current.key === key) },
        RANGE_LABELS[key],
      );
      button.addEventListener('click', () => navigate({ ...RANGE_PARAMETERS, range: key }));
      return button;
    });
    const local = (ms) => {
      const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
      return d.toISOString().slice(0, 16);
    };
    const fromInput = el('input', {
      type: 'datetime-local',
      name: 'from',
      'aria-label': 'from',
      value: local(current.from),
    });
    const toInput = el('input', { type: 'datetime-local', name: 'to', 'aria-label': 'to', value: local(current.to) });
    const apply = el(
      'button',
      { type: 'button', id: 'custom-apply', 'aria-pressed': String(current.key === 'custom') },
      'Show',
    );
    apply.addEventListener('click', () => {
      const from = new Date(fromInput.value).getTime();
      const to = new Date(toInput.value).getTime();
      if (!Number.isFinite(from) || !Number.isFinite(to) || from >= to)
        return showError(new Error('custom range: give a "from" before the "to"'));
      navigate({ ...RANGE_PARAMETERS, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
    });
    box.replaceChildren(
      el('span', { class: 'group' }, ...buttons),
      el('span', { class: 'group custom' }, fromInput, el('span', {}, '→'), toInput, apply),
    );
  }

  /** The inputs of the filters form, set again from the URL at every navigation. */
  let filterInputs = [];

  /**
   * The page's filters as a form (fields: {name, label, options?, placeholder?}; options make a select
   * whose first choice is "any"); Apply puts them in the URL, Clear removes them.
   */
  function filters(fields) {
    const form = document.getElementById('filters');
    form.hidden = fields.length === 0;
    filterInputs = fields.map((field) => {
      const input = field.options
        ? el(
            'select',
            { name: field.name },
            el('option', { value: '' }, 'any'),
            ...field.options.map((option) => el('option', { value: option }, option)),
          )
        : el('input', {
            type: 'search',
            name: field.name,
            placeholder: field.placeholder ?? '',
            size: field.size ?? 14,
          });
      return [field, input];
    });
    const apply = el('button', { type: 'submit' }, 'Apply');
    const clear = el('button', { type: 'button' }, 'Clear');
    form.replaceChildren(
      ...filterInputs.map(([field, input]) => el('label', {}, el('span', {}, field.label), input)),
      el('span', { class: 'group' }, apply, clear),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      navigate(Object.fromEntries(filterInputs.map(([field, input]) => [field.name, input.value.trim()])));
    });
    clear.addEventListener('click', () => navigate(Object.fromEntries(fields.map((field) => [field.name, null]))));
  }

  function syncFilters() {
    const query = view().query;
    for (const [field, input] of filterInputs) input.value = query.get(field.name) ?? '';
  }

  // ── the API ─────────────────────────────────────────────────────────────────────────────────────

  /** The answer of `/api/v1/<path>` for this view's range and the given parameters ('' and null are left out). */
  function api(path, parameters = {}) {
    // The range of the render under way, so that all of its requests cover the same times.
    const current = rendering ?? view();
    return request(path, {
      from: new Date(current.from).toISOString(),
      to: new Date(current.to).toISOString(),
      ...parameters,
    });
  }

  /**
   * The answer of `/api/v1/<path>?<parameters>` ('' and null are left out), or of a POST of `json` when
   * one is given; an error says which path and what the API answered (its message and parameter).
   */
  async function request(path, parameters = {}, json) {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(parameters))
      if (value !== null && value !== undefined && value !== '') query.set(name, String(value));
    const text = query.toString();
    const url = `/api/v1/${path}${text ? `?${text}` : ''}`;
    let response;
    try {
      response = await fetch(
        url,
        json === undefined
          ? { cache: 'no-store' }
          : {
              method: 'POST',
              cache: 'no-store',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(json),
            },
      );
    } catch (err) {
      throw new Error(
        `cannot reach Svc for ${path} (${err instanceof Error ? err.message : String(err)}); retrying while the page is live`,
      );
    }
    // 204 (an expired silence, say) has no body.
    if (response.ok) return response.status === 204 ? null : response.json();
    let detail = `HTTP ${response.status}`;
    try {
      const body = await response.json();
      if (body && typeof body.message === 'string')
        detail = `${body.message}${body.parameter ? ` (parameter ${body.parameter})` : ''}`;
    } catch {
      // not JSON: the status is all there is
    }
    // The status goes with the error: a page may take a 404 to mean a part of Svc is off.
    throw Object.assign(new Error(`${path}: ${detail}`), { status: response.status });
  }

  function showError(err) {
    const box = document.getElementById('error');
    box.textContent = err instanceof Error ? err.message : String(err);
    box.hidden = false;
  }

  function clearError() {
    const box = document.getElementById('error');
    box.textContent = '';
    box.hidden = true;
  }

  // ── formatting ──────────────────────────────────────────────────────────────────────────────────

  const pad = (n) => String(n).padStart(2, '0');
  /** Local time, `YYYY-MM-DD HH:MM:SS`. */
  function time(ms) {
    if (ms === null || ms === undefined) return '–';
    const d = new Date(ms);
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  }
  function num(value, digits = 0) {
    if (value === null || value === undefined || !Number.isFinite(Number(value))) return '–';
    return Number(value).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
  }
  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 1000) return `${num(ms)} ms`;
    if (ms < 120_000) return `${num(ms / 1000, 1)} s`;
    if (ms < 2 * HOUR) return `${num(ms / 60_000, 1)} min`;
    return `${num(ms / HOUR, 1)} h`;
  }

  // ── parts of a page ─────────────────────────────────────────────────────────────────────────────

  /** The body of a section of the page (pages.ts makes `<section id=…><h2/><div class=body/>`). */
  function body(id) {
    return document.querySelector(`#${id} > .body`);
  }

  /** "No data yet", and what feeds it: instead of an empty chart or table. */
  function noData(what, hint) {
    const sentence = hint ? ` ${hint.charAt(0).toUpperCase()}${hint.slice(1)}` : '';
    return el('p', { class: 'empty no-data' }, `No data yet: ${what}.`, sentence);
  }

  /** A table in a box that scrolls sideways by itself; onRow(row, tr) makes a row open something. */
  function table(headers, rows, options = {}) {
    const tbody = el('tbody');
    appendRows(tbody, rows, options);
    return el(
      'div',
      { class: 'table-box' },
      el('table', { class: 'data' }, el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))), tbody),
    );
  }

  /**
   * Rows as {cells, open?, id?, data?}: `open` (a function) makes the row a button that opens it; `id`
   * and each of `data` become a `data-` attribute of the row.
   */
  function appendRows(tbody, rows) {
    for (const row of rows) {
      const attributes = Object.fromEntries(
        Object.entries(row.data ?? {}).map(([name, value]) => [`data-${name}`, value]),
      );
      if (row.id) attributes['data-id'] = row.id;
      const tr = el('tr', attributes, ...row.cells.map((cell) => el('td', {}, cell)));
      if (row.open) {
        tr.tabIndex = 0;
        tr.classList.add('opens');
        tr.addEventListener('click', (event) => {
          if (event.target instanceof Element && event.target.closest('a')) return;
          row.open();
        });
        tr.addEventListener('keydown', (event) => {
          if (event.key === 'Enter') row.open();
        });
      }
      tbody.append(tr);
    }
  }

  function link(path, parameters, text) {
    return el('a', { href: href(path, parameters) }, text);
  }

  /** The details dialog: a title and the key/value list of an object (nested values as JSON text). */
  function details(title, object) {
    const dialog = document.getElementById('details');
    dialog.querySelector('h2').textContent = title;
    const list = dialog.querySelector('dl');
    list.replaceChildren(
      ...Object.entries(object).flatMap(([key, value]) => [
        el('dt', {}, key),
        el(
          'dd',
          {},
          value !== null && typeof value === 'object'
            ? el('pre', {}, JSON.stringify(value, null, 2))
            : String(value ?? ''),
        ),
      ]),
    );
    if (!dialog.open) dialog.showModal();
  }

  /**
   * A line chart of columnar series ({label, values}) over `t` (ms), one colour each; dragging across
   * it shows that range (it goes into the URL). `y` is {min?, max?, unit?}.
   */
  function chart(title, t, series, y = {}) {
    const host = el('div', { class: 'chart', 'data-series': series.length });
    const box = el('figure', { class: 'chart-box' }, el('figcaption', {}, title), host);
    if (typeof uPlot !== 'function') return box;
    const width = () => Math.max(260, (host.clientWidth || box.clientWidth || 480) - 4);
    const options = {
      width: 480,
      height: y.height ?? 180,
      ms: 1,
      legend: { show: true, live: false },
      cursor: { drag: { x: true, y: false, setScale: false } },
      scales: {
        x: { time: true },
        y: { range: (_u, min, max) => [y.min ?? Math.min(0, min ?? 0), Math.max(y.max ?? 0, max ?? 1, y.floor ?? 1)] },
      },
      axes: [
        { size: 30, font: '11px system-ui' },
        {
          size: 50,
          font: '11px system-ui',
          values: (_u, ticks) => ticks.map((v) => `${COMPACT.format(v)}${y.unit ?? ''}`),
        },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.colour ?? COLOURS[i % COLOURS.length],
          width: 1.5,
          spanGaps: true,
          ...(s.steps ? { paths: uPlot.paths.stepped({ align: 1 }) } : {}),
        })),
      ],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 4) return;
            const from = u.posToVal(u.select.left, 'x');
            const to = u.posToVal(u.select.left + u.select.width, 'x');
            navigate({ ...RANGE_PARAMETERS, from: new Date(from).toISOString(), to: new Date(to).toISOString() });
          },
        ],
      },
    };
    const made = new uPlot(options, [t, ...series.map((s) => s.values)], host);
    charts.push({ chart: made, width });
    // Sized after it is in the page (the section's width is known then).
    requestAnimationFrame(() => made.setSize({ width: width(), height: options.height }));
    return box;
  }

  /** A chart of a counts answer (log-events/counts, audit-events/counts), or "no data yet". */
  function countsChart(title, answer, hint) {
    if (answer.series.length === 0 || answer.series.every((s) => s.total === 0))
      return noData(`no ${title.toLowerCase()} in this range`, hint);
    return chart(
      title,
      answer.t,
      answer.series.map((s) => ({
        label: `${s.key} (${num(s.total)})`,
        values: s.counts,
        steps: true,
        ...(answer.by === 'level' ? { colour: LEVEL_COLOURS[s.key.toUpperCase()] } : {}),
      })),
      { floor: 1 },
    );
  }

  /** Totals of a counts answer as links (e.g. a level → the log events of that level). */
  function totals(answer, linkOf) {
    return el(
      'p',
      { class: 'totals' },
      ...answer.series.map((s) =>
        el(
          'span',
          { class: 'total' },
          linkOf ? linkOf(s.key, `${s.key}: ${num(s.total)}`) : `${s.key}: ${num(s.total)}`,
        ),
      ),
    );
  }

  /**
   * A table of a list answer ({events, nextCursor}) and an "Older" button that appends the next page
   * (next(cursor) fetches it) and goes away on the last one; rowsOf(events) makes the rows.
   */
  function pagedTable(headers, answer, rowsOf, next) {
    const made = table(headers, rowsOf(answer.events));
    const tbody = made.querySelector('tbody');
    let cursor = answer.nextCursor;
    const button = el('button', { type: 'button', class: 'older' }, 'Older');
    button.hidden = cursor === null;
    button.addEventListener('click', async () => {
      button.disabled = true;
      try {
        const page = await next(cursor);
        appendRows(tbody, rowsOf(page.events));
        cursor = page.nextCursor;
        button.hidden = cursor === null;
      } catch (err) {
        showError(err);
      } finally {
        button.disabled = false;
      }
    });
    return el('div', { class: 'paged' }, made, button);
  }

  /**
   * Columnar series of different point times on one time axis for a chart: the union of their
   * times, each series null where it has no point. `series`: [{t, values}].
   */
  function align(series) {
    const times = [...new Set(series.flatMap((s) => s.t))].sort((a, b) => a - b);
    const index = new Map(times.map((t, i) => [t, i]));
    return {
      t: times,
      values: series.map((s) => {
        const values = new Array(times.length).fill(null);
        s.t.forEach((t, i) => {
          values[index.get(t)] = s.values[i];
        });
        return values;
      }),
    };
  }

  // ── the loop ────────────────────────────────────────────────────────────────────────────────────

  function describe(current, at) {
    const what =
      current.key === 'custom'
        ? `${time(current.from)} → ${time(current.to)}`
        : `the last ${RANGE_LABELS[current.key].toLowerCase().replace('last ', '')}`;
    return `Showing ${what}; updated ${time(at)}${current.live ? `, live (every ${LIVE_MS / 1000} s)` : ' (a past range: not live)'}.`;
  }

  async function run(mine, refresh) {
    const current = view();
    rendering = current;
    const scroll = window.scrollY;
    try {
      const previous = charts;
      charts = [];
      await loadPage(current, { refresh, stale: () => mine !== generation });
      if (mine !== generation) return;
      for (const { chart: old } of previous) old.destroy();
      clearError();
      document.getElementById('shown').textContent = describe(current, Date.now());
      if (refresh) window.scrollTo(0, scroll);
    } catch (err) {
      if (mine !== generation) return;
      showError(err);
      document.getElementById('shown').textContent = `Not shown (${time(Date.now())}): see the error below.`;
    } finally {
      if (mine === generation) {
        document.body.dataset.loaded = '1';
        document.body.dataset.renders = String(Number(document.body.dataset.renders ?? 0) + 1);
        clearTimeout(timer);
        if (current.live) timer = setTimeout(() => void run(mine, true), LIVE_MS);
      }
    }
  }

  /** Fetches and renders the current view again now (after a change the page made), keeping the scroll. */
  function refresh() {
    generation += 1;
    clearTimeout(timer);
    void run(generation, true);
  }

  function reload() {
    generation += 1;
    clearTimeout(timer);
    rangeBar();
    syncFilters();
    void run(generation, false);
  }

  /** Starts a page: load(view, {refresh, stale}) fetches and renders; load.filters are its filter fields. */
  function start(load) {
    loadPage = load;
    const dialog = document.getElementById('details');
    dialog.querySelector('.close').addEventListener('click', () => dialog.close());
    filters(load.filters ?? []);
    window.addEventListener('popstate', reload);
    let resizing;
    window.addEventListener('resize', () => {
      clearTimeout(resizing);
      resizing = setTimeout(() => {
        for (const { chart: c, width } of charts) c.setSize({ width: width(), height: c.height });
      }, 100);
    });
    reload();
  }

  return {
    el,
    view,
    href,
    navigate,
    api,
    request,
    refresh,
    body,
    noData,
    table,
    appendRows,
    link,
    details,
    chart,
    countsChart,
    totals,
    pagedTable,
    align,
    time,
    num,
    duration,
    start,
    showError,
  };
})();

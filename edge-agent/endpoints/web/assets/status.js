// The live status page: reads /status.json every REFRESH_MS and renders it. Every value is set as
// text (textContent), never as HTML, so nothing in the data can become markup. Charts are uPlot
// (served by Svc itself, /uPlot.iife.min.js), one per server, made once and then given new data.
/* global uPlot */
const REFRESH_MS = 3000;
const charts = new Map();

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (name === 'class') node.className = value;
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

const num = (value, digits = 0) =>
  value === null || value === undefined
    ? '–'
    : Number(value).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const rate = (value) => (value === null || value === undefined ? '–' : `${num(value, 1)}/s`);
const age = (seconds) =>
  seconds === null ? '–' : seconds < 90 ? `${seconds} s ago` : `${Math.round(seconds / 60)} min ago`;
const time = (iso) => (iso ? new Date(iso).toLocaleTimeString() : '–');

function figure(label, value, cls) {
  return el('div', {}, el('dt', {}, label), el('dd', cls ? { class: cls } : {}, value));
}

function table(headers, rows) {
  return el(
    'table',
    {},
    el('thead', {}, el('tr', {}, ...headers.map((h) => el('th', {}, h)))),
    el('tbody', {}, ...rows.map((r) => el('tr', {}, ...r.map((c) => el('td', {}, c))))),
  );
}

function empty(text) {
  return el('p', { class: 'empty' }, text);
}

function chartFor(server, host) {
  const data = [server.trend.t, server.trend.cpu, server.trend.sessions];
  let chart = charts.get(server.name);
  if (chart) {
    chart.setData(data);
    host.append(chart.root);
    return;
  }
  if (typeof uPlot !== 'function') return;
  chart = new uPlot(
    {
      width: 300,
      height: 110,
      legend: { show: true, live: false },
      cursor: { show: false },
      scales: { x: { time: true }, cpu: { range: [0, 100] }, n: { range: (_u, _min, max) => [0, Math.max(5, max)] } },
      axes: [
        { size: 24, font: '10px system-ui' },
        { scale: 'cpu', size: 38, font: '10px system-ui' },
        { scale: 'n', side: 1, size: 30, font: '10px system-ui', grid: { show: false } },
      ],
      series: [
        {},
        { label: 'CPU %', scale: 'cpu', stroke: '#1f5f8b', width: 1.5 },
        { label: 'sessions', scale: 'n', stroke: '#c2410c', width: 1.5 },
      ],
    },
    data,
    host,
  );
  charts.set(server.name, chart);
}

/** A link to the Alerts page (`#fingerprint` marks one alert there). */
const alertsLink = (text, hash, cls) =>
  el('a', { href: `/alerts${hash ? `#${hash}` : ''}`, ...(cls ? { class: cls } : {}) }, text);

/** One line of counts, the firing alerts by name, and the failing channels; each links to /alerts. */
function renderAlerts(report) {
  const box = document.getElementById('alerts');
  box.replaceChildren();
  if (report.empty.alerts) return box.append(empty(report.empty.alerts));
  const a = report.alerts;
  const severities = Object.keys(a.firing);
  const total = severities.reduce((sum, s) => sum + a.firing[s], 0);
  const counts = el('p', { class: 'alert-counts' });
  if (total === 0) counts.append(alertsLink('nothing firing', '', 'ok-text'));
  else {
    counts.append(
      alertsLink(`${num(total)} firing`, '', 'severity severity-' + severities.find((s) => a.firing[s] > 0)),
      ': ',
    );
    severities.forEach((s, i) =>
      counts.append(
        i > 0 ? ', ' : '',
        el('span', { class: a.firing[s] > 0 ? `severity severity-${s}` : 'count' }, `${num(a.firing[s])} ${s}`),
      ),
    );
  }
  counts.append(
    ' · ',
    alertsLink(`${num(a.pending)} pending`, '', a.pending > 0 ? 'severity-warning' : ''),
    ` · ${num(a.channels)} channel${a.channels === 1 ? '' : 's'}`,
  );
  box.append(counts);
  if (a.firingAlerts.length > 0) {
    const names = el('p', { class: 'alert-names' }, 'Firing: ');
    a.firingAlerts.forEach((f, i) =>
      names.append(
        i > 0 ? ', ' : '',
        alertsLink(
          `${f.rule}${f.server ? ` on ${f.server}` : ''}${f.about ? ` (${f.about})` : ''}`,
          f.fingerprint,
          `severity-${f.severity}`,
        ),
      ),
    );
    if (a.moreFiring > 0) names.append(' and ', alertsLink(`${num(a.moreFiring)} more`));
    box.append(names);
  }
  if (a.failingChannels.length > 0) {
    const failing = el(
      'p',
      { class: 'alert-channels stale' },
      `Channel${a.failingChannels.length === 1 ? '' : 's'} failing: `,
    );
    a.failingChannels.forEach((c, i) =>
      failing.append(
        i > 0 ? ', ' : '',
        alertsLink(c.name, '', 'stale'),
        ` (its last notification was not delivered; ${num(c.failed)} failed since start)`,
      ),
    );
    box.append(failing);
  }
}

function renderServers(report) {
  const box = document.getElementById('servers');
  box.replaceChildren();
  if (report.empty.servers) return box.append(empty(report.empty.servers));
  for (const s of report.servers) {
    const stale = s.lastPollAgeSeconds !== null && s.lastPollAgeSeconds * 1000 > 3 * report.pollingIntervalMs;
    const proxy = s.proxySessions.map((p) => `${p.virtualProxy} ${p.sessions}`).join(', ');
    const chart = el('div', { class: 'chart' });
    const card = el(
      'article',
      { class: 'card', 'data-server': s.name },
      el('h3', {}, s.name, el('span', { class: `state ${s.state}` }, s.state)),
      el('div', { class: 'desc' }, s.description || ' '),
      el(
        'dl',
        { class: 'figures' },
        figure('last poll', time(s.lastPollAt)),
        figure('age', age(s.lastPollAgeSeconds), stale ? 'stale' : ''),
        figure('CPU', s.cpu === null ? '–' : `${num(s.cpu, 1)} %`),
        figure('memory allocated', s.memAllocatedMb === null ? '–' : `${num(s.memAllocatedMb)} MB`),
        figure('sessions', num(s.sessions)),
        figure('users', num(s.users)),
        ...(proxy ? [figure('proxy sessions', proxy)] : []),
        ...(s.lastFailureAt ? [figure('last failure', time(s.lastFailureAt), 'stale')] : []),
      ),
      chart,
    );
    box.append(card);
    if (s.trend.t.length > 0) chartFor(s, chart);
    else chart.append(empty('no trend yet'));
  }
}

function renderListeners(report) {
  const box = document.getElementById('listeners');
  box.replaceChildren();
  if (report.empty.listeners) return box.append(empty(report.empty.listeners));
  const reasons = ['source', 'size', 'rate_limit', 'queue_full', 'kernel'];
  box.append(
    table(
      ['listener', 'datagrams/s', 'received', 'processed', 'failed', 'drops/s', ...reasons.map((r) => `dropped: ${r}`)],
      report.listeners.map((l) => [
        l.type,
        rate(l.datagramsPerSecond),
        num(l.received),
        num(l.processed),
        num(l.failed),
        rate(l.droppedPerSecond),
        ...reasons.map((r) => (r in l.dropped ? num(l.dropped[r]) : 'not counted by the OS')),
      ]),
    ),
  );
}

function renderDestinations(report) {
  const box = document.getElementById('destinations');
  box.replaceChildren();
  if (report.empty.destinations) return box.append(empty(report.empty.destinations));
  box.append(
    table(
      ['destination', 'queue', 'written by', 'queue depth', 'writes/s', 'written', 'failed', 'dead letters'],
      report.destinations.map((d) => [
        d.name,
        d.queue,
        d.place === 'cloud'
          ? d.unreachable
            ? 'cloud (forwarding; SQS unreachable, events wait)'
            : 'cloud (forwarding)'
          : 'this agent',
        `${num(d.pendingEvents)} / ${num(d.queueCapacity)}`,
        rate(d.writesPerSecond),
        num(d.written),
        num(d.failed),
        num(d.deadLettered),
      ]),
    ),
  );
}

function renderErrors(report) {
  const box = document.getElementById('errors');
  box.replaceChildren();
  const { byType, recent } = report.errors;
  if (byType.length > 0)
    box.append(
      table(
        ['error type', 'since start'],
        byType.map((e) => [e.type, num(e.sinceStart)]),
      ),
    );
  if (report.empty.errors) return box.append(empty(report.empty.errors));
  box.append(
    el('h3', {}, 'Last errors'),
    table(
      ['time', 'type', 'category', 'server', 'module'],
      recent.map((e) => [time(e.at), e.type, e.category, e.serverName, e.module ?? '']),
    ),
  );
}

async function refresh() {
  const summary = document.getElementById('summary');
  try {
    const response = await fetch('/status.json', { cache: 'no-store' });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const report = await response.json();
    summary.textContent = `svc ${report.mode} ${report.version}, up ${num(report.uptimeSeconds)} s; updated ${time(report.generatedAt)} (every ${REFRESH_MS / 1000} s)`;
    summary.classList.remove('stale');
    renderAlerts(report);
    renderServers(report);
    renderListeners(report);
    renderDestinations(report);
    renderErrors(report);
    // Counted for the browser tests (as history.js counts its renders).
    document.body.dataset.renders = String(Number(document.body.dataset.renders ?? 0) + 1);
  } catch (err) {
    summary.textContent = `cannot read /status.json (${err instanceof Error ? err.message : String(err)}); retrying`;
    summary.classList.add('stale');
  } finally {
    setTimeout(() => void refresh(), REFRESH_MS);
  }
}

document.addEventListener('DOMContentLoaded', () => void refresh());

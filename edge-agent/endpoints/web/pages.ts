/**
 * The HTML of the web view: the config page (the masked config as a collapsible JSON tree and as
 * YAML, rendered here on the server, so the page needs no script to show it), the status page's
 * frame (its script fills it from /status.json), the history pages' frames (their scripts fill them
 * from the read API, /api/v1/), the Alerts page's frame (alerts.js fills it from /api/v1/alerts) and
 * the 404 page. Every text taken from the config is escaped; no page
 * has an inline script or style (the Content-Security-Policy forbids them).
 */
import { isRecord } from '../../../shared/util/records.js';
import { SVC_VERSION } from '../../../shared/version.js';

/** Text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** The history pages: path, nav label, title, what the page answers, its sections and its script. */
export const HISTORY_PAGES = {
  servers: {
    label: 'Servers',
    intro: "Each server's CPU, memory, sessions, users, apps and cache over the range. Drag across a chart to zoom.",
    sections: [
      ['latest', 'Latest values'],
      ['charts', 'Over the range'],
    ],
  },
  logs: {
    label: 'Log events',
    intro: 'The log events the platform sent, newest first. Click a row to see the whole event.',
    sections: [
      ['counts', 'Counts over time'],
      ['events', 'Events'],
    ],
  },
  users: {
    label: 'Users',
    intro: 'Who was on when, sessions per virtual proxy, and the session starts and stops of a user.',
    sections: [
      ['sessions', 'Sessions per virtual proxy'],
      ['presence', 'Who was on when'],
      ['user-events', 'Session starts and stops'],
    ],
  },
  performance: {
    label: 'Performance',
    intro: 'The apps, objects and methods that cost the engine the most over the range, and for whom.',
    sections: [['top', 'Top']],
  },
  audit: {
    label: 'Audit',
    intro: 'Audit events per type, app, sheet and user over time, and the events themselves.',
    sections: [
      ['counts', 'Counts over time'],
      ['events', 'Events'],
    ],
  },
} as const satisfies Record<string, { label: string; intro: string; sections: readonly (readonly [string, string])[] }>;

/** The name of a history page, which is also its path (`/servers`) and its script (`/servers.js`). */
export type HistoryPageName = keyof typeof HISTORY_PAGES;

/** The history pages in the nav's order. */
export const HISTORY_PAGE_NAMES: readonly HistoryPageName[] = ['servers', 'logs', 'users', 'performance', 'audit'];

type Page = 'config' | 'status' | HistoryPageName | 'alerts' | 'none';

function layout(
  title: string,
  page: Page,
  body: string,
  scripts: readonly string[] = [],
  styles: readonly string[] = [],
): string {
  const nav = (href: string, label: string, self: boolean) =>
    `<a href="${href}"${self ? ' aria-current="page"' : ''}>${label}</a>`;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    '<link rel="icon" href="/logo.svg" type="image/svg+xml">',
    ...styles.map((href) => `<link rel="stylesheet" href="${href}">`),
    '<link rel="stylesheet" href="/style.css">',
    ...scripts.map((src) => `<script src="${src}" defer></script>`),
    '</head>',
    '<body>',
    '<header>',
    '<img src="/logo.svg" alt="" width="28" height="28">',
    `<span class="product">Svc <span class="version">${escapeHtml(SVC_VERSION)}</span></span>`,
    `<nav>${nav('/', 'Configuration', page === 'config')}${nav('/status', 'Status', page === 'status')}${HISTORY_PAGE_NAMES.map((name) => nav(`/${name}`, HISTORY_PAGES[name].label, page === name)).join('')}${nav('/alerts', 'Alerts', page === 'alerts')}</nav>`,
    '</header>',
    `<main>${body}</main>`,
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function leaf(value: unknown): string {
  if (value === null) return '<span class="v-null">null</span>';
  if (typeof value === 'string') return `<span class="v-string">${escapeHtml(JSON.stringify(value))}</span>`;
  if (typeof value === 'number') return `<span class="v-number">${escapeHtml(String(value))}</span>`;
  if (typeof value === 'boolean') return `<span class="v-boolean">${String(value)}</span>`;
  return `<span class="v-other">${escapeHtml(JSON.stringify(value) ?? '')}</span>`;
}

/** A JSON tree of `value`: objects and arrays are `<details>` (collapsible without a script); the root is open. */
export function jsonTree(key: string, value: unknown, depth = 0): string {
  const label = `<span class="key">${escapeHtml(key)}</span>`;
  const entries = Array.isArray(value)
    ? value.map((v, i): [string, unknown] => [String(i), v])
    : isRecord(value)
      ? Object.entries(value)
      : null;
  if (entries === null) return `<li class="leaf">${label}: ${leaf(value)}</li>`;
  const [open, close, noun] = Array.isArray(value)
    ? ['[', ']', entries.length === 1 ? 'item' : 'items']
    : ['{', '}', entries.length === 1 ? 'key' : 'keys'];
  if (entries.length === 0) return `<li class="leaf">${label}: <span class="v-empty">${open}${close}</span></li>`;
  const children = entries.map(([k, v]) => jsonTree(k, v, depth + 1)).join('');
  return `<li><details${depth === 0 ? ' open' : ''}><summary>${label} <span class="count">${open}${entries.length} ${noun}${close}</span></summary><ul>${children}</ul></details></li>`;
}

export interface ConfigPageInput {
  /** The masked config (the value of `Svc`). */
  masked: unknown;
  /** The same, as the YAML file `Download YAML` gives. */
  yaml: string;
  /** The config file's name (without its directory). */
  fileName: string;
  obfuscate: boolean;
}

export function configPage({ masked, yaml, fileName, obfuscate }: ConfigPageInput): string {
  const how = obfuscate
    ? 'Secrets, host names, topics and certificate paths are masked (platform-formats.md §10.7).'
    : 'Obfuscation is off (<code>Svc.configVisualisation.obfuscate: false</code>): host names, topics and paths are shown; secrets stay masked.';
  return layout(
    'Svc configuration',
    'config',
    [
      '<h1>Configuration</h1>',
      `<p class="meta">The configuration Svc runs with, from <code>${escapeHtml(fileName)}</code>, defaults filled in. ${how}</p>`,
      '<div class="actions">',
      '<a class="button" id="download" href="/config.yaml" download="svc-config.yaml">Download YAML</a>',
      '<button type="button" id="expand-all">Expand all</button>',
      '<button type="button" id="collapse-all">Collapse all</button>',
      '</div>',
      '<div class="columns">',
      `<section><h2>JSON tree</h2><ul class="tree" id="tree">${jsonTree('Svc', masked)}</ul></section>`,
      `<section><h2>YAML</h2><pre id="yaml">${escapeHtml(yaml)}</pre></section>`,
      '</div>',
    ].join('\n'),
    ['/config.js'],
  );
}

export function statusPage(): string {
  return layout(
    'Svc status',
    'status',
    [
      '<h1>Status</h1>',
      '<p class="meta" id="summary">Loading…</p>',
      '<section><h2>Alerts</h2><div id="alerts" class="card alerts-summary"></div></section>',
      '<section><h2>Monitored servers</h2><div id="servers" class="cards"></div></section>',
      '<section><h2>UDP listeners</h2><div id="listeners"></div></section>',
      '<section><h2>Destinations</h2><div id="destinations"></div></section>',
      '<section><h2>Recent errors</h2><div id="errors"></div></section>',
      '<p class="meta">What fires, and who was told: the <a href="/alerts">Alerts</a> page.</p>',
    ].join('\n'),
    ['/uPlot.iife.min.js', '/status.js'],
    ['/uPlot.min.css'],
  );
}

/** The parts of a page that history.js fills: the range bar, the filters and the line saying what is shown. */
const RANGE_AND_FILTERS = [
  '<div class="toolbar" id="range"></div>',
  '<form class="filters" id="filters"></form>',
  '<p class="meta" id="shown" role="status">Loading…</p>',
];
const ERROR_BOX = '<div class="error" id="error" role="alert" hidden></div>';
const DETAILS_DIALOG =
  '<dialog id="details"><button type="button" class="close">Close</button><h2></h2><dl class="pairs"></dl></dialog>';

/** A section whose body a page's script fills. */
function section(id: string, heading: string, ...before: string[]): string {
  return `<section id="${id}"><h2>${escapeHtml(heading)}</h2>${before.join('')}<div class="body"></div></section>`;
}

/**
 * The frame of a history page: the range bar and the filters (history.js makes them from the URL),
 * the line that says what is shown, the error box and the page's sections, which its script fills.
 */
export function historyPage(name: HistoryPageName): string {
  const { label, intro, sections } = HISTORY_PAGES[name];
  return layout(
    `Svc ${label.toLowerCase()}`,
    name,
    [
      `<h1>${escapeHtml(label)}</h1>`,
      `<p class="meta">${escapeHtml(intro)}</p>`,
      ...RANGE_AND_FILTERS,
      ERROR_BOX,
      ...sections.map(([id, heading]) => section(id, heading)),
      DETAILS_DIALOG,
    ].join('\n'),
    ['/uPlot.iife.min.js', '/history.js', `/${name}.js`],
    ['/uPlot.min.css'],
  );
}

/** One field of the silence form: a label and its input's attributes. */
function silenceField(label: string, attributes: string): string {
  return `<label><span>${label}</span><input ${attributes}></label>`;
}

/**
 * The frame of the Alerts page (docs/alerts.md): what fires now, the history (with the range bar and
 * the rule filter of history.js), the silences and the form that makes one, the rules and the
 * channels. alerts.js fills it from /api/v1/alerts and /api/v1/alerts/history. The form is here, not
 * made by the script, so that the page's refresh never touches what is typed in it.
 */
export function alertsPage(): string {
  const form = [
    '<form class="filters silence-form" id="silence-form" novalidate>',
    silenceField('rule', 'name="rule" list="rule-names" placeholder="any rule" size="18"'),
    '<datalist id="rule-names"></datalist>',
    silenceField('labels', 'name="matchers" placeholder="server=name, key=value" size="26"'),
    silenceField('for', 'name="duration" value="2h" placeholder="2h" size="5"'),
    silenceField('or until', 'name="endsAt" type="datetime-local"'),
    silenceField('comment', 'name="comment" maxlength="1000" size="24"'),
    silenceField('your name', 'name="createdBy" maxlength="200" size="12"'),
    '<span class="group"><button type="submit">Silence</button><button type="reset">Clear</button></span>',
    '<p class="form-message" id="silence-message" role="status" hidden></p>',
    '</form>',
  ].join('');
  return layout(
    'Svc alerts',
    'alerts',
    [
      '<h1>Alerts</h1>',
      '<p class="meta">What is firing now and what is pending, the history of each alert, the silences, the rules with their last evaluation and the channels. Updated every 10 seconds.</p>',
      '<div class="notice" id="disabled" role="status" hidden></div>',
      ERROR_BOX,
      section('active', 'Firing now'),
      section('history', 'History', ...RANGE_AND_FILTERS),
      section('silences', 'Silences', form),
      section('rules', 'Rules'),
      section('channels', 'Channels'),
      DETAILS_DIALOG,
    ].join('\n'),
    ['/history.js', '/alerts.js'],
  );
}

export function notFoundPage(path: string): string {
  return layout(
    'Not found',
    'none',
    `<h1>Not found</h1><p>Nothing is served at <code>${escapeHtml(path.length > 200 ? `${path.slice(0, 200)}…` : path)}</code>. The <a href="/">configuration</a> and the <a href="/status">status</a> are.</p>`,
  );
}

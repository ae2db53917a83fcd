/**
 * The HTML of the web view: the config page (the masked config as a collapsible JSON tree and as
 * YAML, rendered here on the server, so the page needs no script to show it), the status page's
 * frame (its script fills it from /status.json), the history pages' frames (their scripts fill them
 * from the read API, /api/v1/) and the 404 page. Every text taken from the config is escaped; no page
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

type Page = 'config' | 'status' | HistoryPageName | 'none';

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
    `<nav>${nav('/', 'Configuration', page === 'config')}${nav('/status', 'Status', page === 'status')}${HISTORY_PAGE_NAMES.map((name) => nav(`/${name}`, HISTORY_PAGES[name].label, page === name)).join('')}</nav>`,
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
      '<section><h2>Monitored servers</h2><div id="servers" class="cards"></div></section>',
      '<section><h2>UDP listeners</h2><div id="listeners"></div></section>',
      '<section><h2>Destinations</h2><div id="destinations"></div></section>',
      '<section><h2>Recent errors</h2><div id="errors"></div></section>',
    ].join('\n'),
    ['/uPlot.iife.min.js', '/status.js'],
    ['/uPlot.min.css'],
  );
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
      '<div class="toolbar" id="range"></div>',
      '<form class="filters" id="filters"></form>',
      '<p class="meta" id="shown" role="status">Loading…</p>',
      '<div class="error" id="error" role="alert" hidden></div>',
      ...sections.map(
        ([id, heading]) => `<section id="${id}"><h2>${escapeHtml(heading)}</h2><div class="body"></div></section>`,
      ),
      '<dialog id="details"><button type="button" class="close">Close</button><h2></h2><dl class="pairs"></dl></dialog>',
    ].join('\n'),
    ['/uPlot.iife.min.js', '/history.js', `/${name}.js`],
    ['/uPlot.min.css'],
  );
}

export function notFoundPage(path: string): string {
  return layout(
    'Not found',
    'none',
    `<h1>Not found</h1><p>Nothing is served at <code>${escapeHtml(path.length > 200 ? `${path.slice(0, 200)}…` : path)}</code>. The <a href="/">configuration</a> and the <a href="/status">status</a> are.</p>`,
  );
}

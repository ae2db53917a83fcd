/**
 * The HTML of the web view: the config page (the masked config as a collapsible JSON tree and as
 * YAML, rendered here on the server, so the page needs no script to show it), the status page's
 * frame (its script fills it from /status.json) and the 404 page. Every text taken from the config
 * is escaped; no page has an inline script or style (the Content-Security-Policy forbids them).
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

type Page = 'config' | 'status' | 'none';

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
    `<nav>${nav('/', 'Configuration', page === 'config')}${nav('/status', 'Status', page === 'status')}</nav>`,
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

export function notFoundPage(path: string): string {
  return layout(
    'Not found',
    'none',
    `<h1>Not found</h1><p>Nothing is served at <code>${escapeHtml(path.length > 200 ? `${path.slice(0, 200)}…` : path)}</code>. The <a href="/">configuration</a> and the <a href="/status">status</a> are.</p>`,
  );
}

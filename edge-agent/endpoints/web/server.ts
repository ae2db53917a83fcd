/**
 * The web view's HTTP server (platform-formats.md §10.7, and the status page, ours), on
 * `configVisualisation.host:port`:
 *
 * | path | answer |
 * |---|---|
 * | `/` | the config page: the masked config as a JSON tree and as YAML, "Download YAML" |
 * | `/config.yaml` | the masked config as a YAML file (`content-disposition: attachment`) |
 * | `/status` | the live status page |
 * | `/status.json` | what the status page shows (status.ts) |
 * | `/servers`, `/logs`, `/users`, `/performance`, `/audit` | the history pages (pages.ts HISTORY_PAGES), from the read API |
 * | `/alerts` | the Alerts page, from the read API's `alerts` endpoints |
 * | `/api/v1/…` | the read API of the store (api/router.ts, docs/api.md): JSON |
 * | `/logo.svg`, `/style.css`, `/config.js`, `/status.js`, `/history.js`, `/<history page>.js`, `/alerts.js`, `/uPlot.iife.min.js`, `/uPlot.min.css` | the pages' own assets, shipped with Svc |
 * | anything else | the 404 page |
 *
 * GET and HEAD only (others 405), but for POST on the alerts' silences below /api/v1/ (api/alerts.ts:
 * JSON from the web view's own pages, a body of at most 16 KiB that arrives within 10 s). Each client IP may make 300 requests a minute (a fixed window,
 * shared/ratelimit); more get 429, and the first refusal of an IP in a window is logged at WARN.
 * Every answer has a strict Content-Security-Policy (no origin but this one, no inline script or
 * style), `nosniff`, no framing and no referrer; the config and the status are never cached.
 * The masked config is made once at start: the config does not change while Svc runs.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import type { Log } from '../../../shared/logging/log.js';
import { MemoryRateLimiter } from '../../../shared/ratelimit/memory.js';
import { announcedLength, readBody } from '../../../shared/runtime/http-body.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { isSingleExecutable, readAsset } from '../../../shared/runtime/single-executable.js';
import { close, listen } from '../http-server.js';
import { MAX_POST_BYTES } from './api/alerts.js';
import { type ApiAnswer, isApiPath, type ReadApi } from './api/router.js';
import { alertsPage, configPage, HISTORY_PAGE_NAMES, historyPage, notFoundPage, statusPage } from './pages.js';
import type { StatusModel } from './status.js';

/** The longest a POST's body may take to arrive (408 after). */
const POST_BODY_TIMEOUT_MS = 10_000;

/** §10.7: requests a client IP may make per minute. */
export const REQUESTS_PER_MINUTE = 300;

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
} as const;

const NO_STORE = 'no-store';
const JSON_TYPE = 'application/json; charset=utf-8';

/** The folder of the pages' own files below the install directory (the Dockerfile copies it). */
export const ASSET_DIR = join('edge-agent', 'endpoints', 'web', 'assets');

/** The single executable's asset key of one of the pages' own files (its path below the package root). */
export function webAssetKey(name: string): string {
  return `edge-agent/endpoints/web/assets/${name}`;
}

/** The chart library's files the pages load, as `uplot/…` package paths (also the executable's asset keys). */
export const UPLOT_FILES = ['uplot/dist/uPlot.iife.min.js', 'uplot/dist/uPlot.min.css'] as const;

interface AssetSource {
  /** Under the install directory's ASSET_DIR, or a file of the uplot package. */
  file: { own: string } | { uplot: string };
  type: string;
}

const ASSETS: Readonly<Record<string, AssetSource>> = {
  '/logo.svg': { file: { own: 'logo.svg' }, type: 'image/svg+xml' },
  '/style.css': { file: { own: 'style.css' }, type: 'text/css; charset=utf-8' },
  '/config.js': { file: { own: 'config.js' }, type: 'text/javascript; charset=utf-8' },
  '/status.js': { file: { own: 'status.js' }, type: 'text/javascript; charset=utf-8' },
  '/history.js': { file: { own: 'history.js' }, type: 'text/javascript; charset=utf-8' },
  '/alerts.js': { file: { own: 'alerts.js' }, type: 'text/javascript; charset=utf-8' },
  ...Object.fromEntries(
    HISTORY_PAGE_NAMES.map((name) => [
      `/${name}.js`,
      { file: { own: `${name}.js` }, type: 'text/javascript; charset=utf-8' },
    ]),
  ),
  '/uPlot.iife.min.js': { file: { uplot: UPLOT_FILES[0] }, type: 'text/javascript; charset=utf-8' },
  '/uPlot.min.css': { file: { uplot: UPLOT_FILES[1] }, type: 'text/css; charset=utf-8' },
};

interface Body {
  body: Buffer;
  type: string;
  cache: string;
  extra?: Record<string, string>;
}

export interface WebViewOptions {
  host: string;
  /** 0 picks a free port (tests). */
  port: number;
  /** The masked config (the value of `Svc`): masking happens before anything reaches this server. */
  masked: unknown;
  obfuscate: boolean;
  /** The config file's path; the page shows its name only. */
  configFile: string;
  /** Svc's install directory (boot.ts INSTALL_DIR), where ASSET_DIR is. */
  installDir: string;
  status: StatusModel;
  /** The read API under /api/v1/ (api/router.ts). */
  api?: ReadApi;
  log: Log;
  /** For the rate limit's window (tests); Date.now by default. */
  now?: () => number;
}

export class WebView implements Component {
  readonly name: string;
  private server: Server | undefined;
  private boundPort = 0;
  private readonly limiter: MemoryRateLimiter;
  /** The IPs refused in the current window already logged (one WARN per IP and window). */
  private warned = new Map<string, number>();
  private pages = new Map<string, Body>();

  constructor(private readonly options: WebViewOptions) {
    this.name = `config view (http://${options.host}:${options.port}/)`;
    this.limiter = new MemoryRateLimiter({ limit: REQUESTS_PER_MINUTE, ...(options.now ? { now: options.now } : {}) });
  }

  get port(): number {
    return this.boundPort;
  }

  /** Reads the assets (a missing file stops the start, naming it), then listens. */
  async start(): Promise<void> {
    const { host, port, log, masked, obfuscate, configFile, installDir } = this.options;
    this.pages = await this.readAssets(installDir);
    const yaml = stringify({ Svc: masked }, { lineWidth: 0 });
    const html = (text: string): Body => ({
      body: Buffer.from(text),
      type: 'text/html; charset=utf-8',
      cache: NO_STORE,
    });
    this.pages.set('/', html(configPage({ masked, yaml, fileName: basename(configFile), obfuscate })));
    this.pages.set('/status', html(statusPage()));
    for (const name of HISTORY_PAGE_NAMES) this.pages.set(`/${name}`, html(historyPage(name)));
    this.pages.set('/alerts', html(alertsPage()));
    this.pages.set('/config.yaml', {
      body: Buffer.from(yaml),
      type: 'application/yaml; charset=utf-8',
      cache: NO_STORE,
      extra: { 'content-disposition': 'attachment; filename="svc-config.yaml"' },
    });

    this.options.status.open();
    const server = createServer((req, res) => void this.answer(req, res));
    try {
      this.boundPort = await listen(server, {
        host,
        port,
        what: 'Svc.configVisualisation.host, .port: the config view',
        log,
      });
    } catch (err) {
      this.options.status.close();
      throw err;
    }
    this.server = server;
    const base = `http://${host.includes(':') ? `[${host}]` : host}:${this.boundPort}`;
    log.info(
      { host, port: this.boundPort, obfuscate },
      `config view listening on ${base}/ (the live status page on ${base}/status)`,
    );
  }

  async stop(): Promise<void> {
    this.options.status.close();
    this.options.api?.close();
    const server = this.server;
    this.server = undefined;
    // An open page polls over a kept-alive connection; close() does not wait for it.
    if (server) await close(server);
  }

  /**
   * The pages' own files and the chart library's: from the install directory (and the uplot package),
   * or, in the single executable, from its assets (keyed by the same paths, scripts/release/executables.mjs).
   */
  private async readAssets(installDir: string): Promise<Map<string, Body>> {
    const packaged = isSingleExecutable();
    const require = createRequire(import.meta.url);
    const out = new Map<string, Body>();
    for (const [path, { file, type }] of Object.entries(ASSETS)) {
      const key = 'own' in file ? webAssetKey(file.own) : file.uplot;
      const onDisk = () => ('own' in file ? join(installDir, ASSET_DIR, file.own) : require.resolve(file.uplot));
      const location = packaged ? key : onDisk();
      let body: Buffer;
      try {
        body = packaged ? readAsset(location) : await readFile(location);
      } catch (err) {
        throw new Error(
          `the config view cannot read its file ${location} (is Svc installed completely?): ${err instanceof Error ? err.message : String(err)}`,
          { cause: err },
        );
      }
      out.set(path, { body, type, cache: 'max-age=300' });
    }
    return out;
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ip = clientIp(req);
    const decision = await this.limiter.consume(ip);
    if (!decision.allowed) {
      this.warnOnce(ip, decision.resetAt);
      return send(res, req, 429, {
        body: Buffer.from('too many requests: at most 300 a minute from one address\n'),
        type: 'text/plain; charset=utf-8',
        cache: NO_STORE,
        extra: { 'retry-after': String(decision.retryAfterSeconds) },
      });
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const api = this.options.api;
    if (api && isApiPath(path)) {
      const url = req.url ?? '/';
      if (req.method === 'POST' && api.takesPost(url)) return this.answerPost(api, req, res, url);
      return sendApi(res, req, api.answer(req.method ?? 'GET', url));
    }
    const known = path === '/status.json' || this.pages.has(path);
    if (known && req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, req, 405, {
        body: Buffer.from('method not allowed\n'),
        type: 'text/plain; charset=utf-8',
        cache: NO_STORE,
        extra: { allow: 'GET, HEAD' },
      });
    }
    if (path === '/status.json') {
      let body: string;
      try {
        body = JSON.stringify(this.options.status.report());
      } catch (err) {
        this.options.log.error({ err }, 'config view: the status could not be read; answered 500');
        return send(res, req, 500, {
          body: Buffer.from('internal error\n'),
          type: 'text/plain; charset=utf-8',
          cache: NO_STORE,
        });
      }
      return send(res, req, 200, { body: Buffer.from(body), type: 'application/json; charset=utf-8', cache: NO_STORE });
    }
    const page = this.pages.get(path);
    if (page) return send(res, req, 200, page);
    return send(res, req, 404, {
      body: Buffer.from(notFoundPage(path)),
      type: 'text/html; charset=utf-8',
      cache: NO_STORE,
    });
  }

  /** A POST of the API: its headers checked before its body is read, the body read up to MAX_POST_BYTES. */
  private async answerPost(api: ReadApi, req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
    const refusal = api.postRefusal(req.headers);
    if (refusal) return sendApi(res, req, { ...refusal, headers: { connection: 'close' } });
    const announced = announcedLength(req);
    const read =
      announced !== null && announced > MAX_POST_BYTES
        ? ({ kind: 'too-large' } as const)
        : await readBody(req, MAX_POST_BYTES, POST_BODY_TIMEOUT_MS);
    // A client that broke off gets no answer.
    if (read.kind === 'gone') return;
    if (read.kind !== 'body') {
      // The rest of the body is not read: the connection ends with the answer.
      res.once('finish', () => req.destroy());
      const [status, error, message] =
        read.kind === 'too-large'
          ? [413, 'payload_too_large', `the body is larger than ${MAX_POST_BYTES} bytes`]
          : [408, 'request_timeout', `the body did not arrive within ${POST_BODY_TIMEOUT_MS} ms`];
      return sendApi(res, req, { status, body: JSON.stringify({ error, message }), headers: { connection: 'close' } });
    }
    return sendApi(res, req, api.post(url, read.body.toString('utf8')));
  }

  private warnOnce(ip: string, resetAt: number): void {
    if (this.warned.get(ip) === resetAt) return;
    // Entries of earlier windows go: the map holds only IPs refused in the current one.
    for (const [known, at] of this.warned) if (at !== resetAt) this.warned.delete(known);
    this.warned.set(ip, resetAt);
    this.options.log.warn(
      { clientIp: ip, limit: REQUESTS_PER_MINUTE },
      `config view: ${ip} made more than ${REQUESTS_PER_MINUTE} requests this minute; answering 429 until the minute ends`,
    );
  }
}

/** The peer's address; an IPv4 client of a dual-stack socket without its `::ffff:` prefix. */
function clientIp(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** An answer of the read API, as JSON that is never cached. */
function sendApi(res: ServerResponse, req: IncomingMessage, { status, body, headers }: ApiAnswer): void {
  send(res, req, status, {
    body: Buffer.from(body),
    type: JSON_TYPE,
    cache: NO_STORE,
    ...(headers ? { extra: headers } : {}),
  });
}

function send(res: ServerResponse, req: IncomingMessage, status: number, { body, type, cache, extra }: Body): void {
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    'content-type': type,
    'content-length': body.length,
    'cache-control': cache,
    ...extra,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}

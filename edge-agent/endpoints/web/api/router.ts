/**
 * The read API under `/api/v1/` of the web view (docs/api.md): finds the endpoint of a path, parses
 * its parameters, runs its query on the store and answers JSON, with no secret of the config in it.
 *
 * - GET and HEAD only (others 405), but for POST on the alerts' silences (alerts.ts: JSON from the web
 *   view's own pages only, at most MAX_POST_BYTES); `cache-control: no-store` and the web view's headers (server.ts).
 * - A bad or unknown parameter: 400 with an ApiError naming it. An unknown path: 404. A server the
 *   store does not know (`servers/{name}/health`): 404 naming it. With `Svc.store.enable` false,
 *   everything below /api/v1/ is 404 saying the store is off (the alert engine needs the store too).
 * - A query that throws: 500 with no internal text, the error logged at ERROR.
 * - Masking: every value of a config secret (shared/config/secrets.ts secretValues) found in an answer
 *   (an event's message, its raw fields, …) is replaced by the config view's mask.
 */
import { MASK } from '../../../../shared/config/mask.js';
import type { Log } from '../../../../shared/logging/log.js';
import type { ApiError } from '../../../../shared/store/api-types.js';
import { BadCursorError } from '../../../../shared/store/queries/common.js';
import type { StoreReader } from '../../../../shared/store/reader.js';
import {
  ALERT_ENDPOINTS,
  ALERT_POSTS,
  type AlertsSettings,
  alertsPost,
  postHeadersProblem,
  postTarget,
} from './alerts.js';
import { AUDIT_ENDPOINTS } from './audit.js';
import type { Endpoint } from './endpoint.js';
import { LOG_EVENT_ENDPOINTS } from './log-events.js';
import { openApiDocument } from './openapi.js';
import { BadParameterError, QueryParameters } from './params.js';
import { PERFORMANCE_ENDPOINTS } from './performance.js';
import { SERVER_ENDPOINTS } from './servers.js';
import { SESSION_ENDPOINTS } from './sessions.js';

/** Where the API is on the web view. */
export const API_PREFIX = '/api/v1/';

/** Whether a request path is the API's (anything below /api/, so an unknown version is a JSON 404 too). */
export function isApiPath(path: string): boolean {
  return path === '/api' || path.startsWith('/api/');
}

/** Every endpoint of the API, in the order of the OpenAPI document. */
export const ENDPOINTS: readonly Endpoint[] = [
  ...SERVER_ENDPOINTS,
  ...LOG_EVENT_ENDPOINTS,
  ...SESSION_ENDPOINTS,
  ...PERFORMANCE_ENDPOINTS,
  ...AUDIT_ENDPOINTS,
  ...ALERT_ENDPOINTS,
];

/** The API's OpenAPI 3.1 document (served, and kept in docs/api/openapi.json). */
export function apiDocument(): object {
  return openApiDocument(ENDPOINTS, ALERT_POSTS);
}

/** The document as kept in docs/api/openapi.json (docs-cli.ts; a test checks the file is current). */
export function apiDocumentText(): string {
  return `${JSON.stringify(apiDocument(), null, 2)}\n`;
}

/** An answer of the API, for the web view to send. */
export interface ApiAnswer {
  status: number;
  /** JSON. */
  body: string;
  headers?: Record<string, string>;
}

export interface ReadApiOptions {
  /** The store's reader; undefined when `Svc.store.enable` is false. */
  reader: StoreReader | undefined;
  /** `Svc.store.retentionDays`: a range may be at most one day longer. */
  retentionDays: number;
  /** The config's secret values (secretValues), never shown. */
  secrets: readonly string[];
  /** The alert engine and what the alerts' endpoints need of the config. */
  alerts: AlertsSettings;
  log: Log;
  /** The default `to` (tests); Date.now by default. */
  now?: () => number;
}

const json = (status: number, value: unknown, headers?: Record<string, string>): ApiAnswer => ({
  status,
  body: JSON.stringify(value),
  ...(headers ? { headers } : {}),
});
const problem = (status: number, error: ApiError, headers?: Record<string, string>): ApiAnswer =>
  json(status, error, headers);

const ALERTS_OFF = problem(404, {
  error: 'not_found',
  message: 'alerts are off (Svc.alerts.enable, with the store on): there are no silences to change',
});

/** The read API: answers a request below API_PREFIX. */
export class ReadApi {
  private document: string | undefined;

  constructor(private readonly options: ReadApiOptions) {}

  /** Whether `url` (path and query) takes POST: the server then reads its body (at most MAX_POST_BYTES) for `post`. */
  takesPost(url: string): boolean {
    return postTarget(restOf(new URL(url, 'http://api.invalid').pathname) ?? '') !== undefined;
  }

  /**
   * Why a POST to `url` is refused before its body is read (403 for a cross-site request, 404 while
   * alerts are off), or null.
   */
  postRefusal(headers: Readonly<Record<string, string | string[] | undefined>>): ApiAnswer | null {
    const why = postHeadersProblem(headers);
    if (why !== null) return problem(403, { error: 'forbidden', message: why });
    return this.options.reader && this.options.alerts.observed() ? null : ALERTS_OFF;
  }

  /** The answer to a POST to `url` whose headers postRefusal accepted, with its body (text). */
  post(url: string, body: string): ApiAnswer {
    const target = postTarget(restOf(new URL(url, 'http://api.invalid').pathname) ?? '');
    const engine = this.options.alerts.observed();
    if (!target) return problem(404, { error: 'not_found', message: `no endpoint ${url.split('?')[0]} takes POST` });
    if (!this.options.reader || !engine) return ALERTS_OFF;
    try {
      const outcome = alertsPost(
        target,
        body,
        engine,
        this.options.alerts.knownRules,
        (this.options.now ?? Date.now)(),
      );
      if ('value' in outcome)
        return { status: outcome.status, body: maskSecrets(JSON.stringify(outcome.value), this.options.secrets) };
      const error = outcome.status === 400 ? 'bad_request' : 'not_found';
      return problem(outcome.status, {
        error,
        message: maskSecrets(outcome.message, this.options.secrets),
        ...(outcome.parameter === undefined ? {} : { parameter: outcome.parameter }),
      });
    } catch (err) {
      this.options.log.error({ err, url }, `read API: POST ${url} failed; answered 500`);
      return problem(500, { error: 'internal', message: "the change failed; the reason is in Svc's log" });
    }
  }

  /** The answer to `method url` (url: the request's path and query, starting with API_PREFIX or `/api/`). */
  answer(method: string, url: string): ApiAnswer {
    const posts = this.takesPost(url);
    if ((method !== 'GET' && method !== 'HEAD') || posts) {
      return problem(
        405,
        {
          error: 'method_not_allowed',
          message: posts ? 'this path takes POST only' : 'the API is read-only: GET or HEAD',
        },
        { allow: posts ? 'POST' : 'GET, HEAD' },
      );
    }
    const parsed = new URL(url, 'http://api.invalid');
    if (!this.options.reader) {
      return problem(404, {
        error: 'not_found',
        message: 'the store is off (Svc.store.enable: false): there is no history to read',
      });
    }
    const rest = restOf(parsed.pathname);
    if (rest === 'openapi.json') {
      this.document ??= JSON.stringify(apiDocument());
      return { status: 200, body: this.document };
    }
    const match = rest === undefined ? undefined : matchEndpoint(rest);
    if (!match) {
      return problem(404, {
        error: 'not_found',
        message: `no endpoint ${parsed.pathname} (the endpoints are listed in ${API_PREFIX}openapi.json)`,
      });
    }
    return this.run(match.endpoint, match.path, parsed.searchParams, this.options.reader);
  }

  private run(
    endpoint: Endpoint,
    path: Record<string, string>,
    search: URLSearchParams,
    reader: StoreReader,
  ): ApiAnswer {
    try {
      const query = new QueryParameters(search, endpoint.parameters);
      const now = (this.options.now ?? Date.now)();
      const range = query.range(now, this.options.retentionDays + 1);
      const alerts = {
        observed: this.options.alerts.observed(),
        evaluationIntervalMs: this.options.alerts.evaluationIntervalMs,
      };
      const result = reader.read((db) => endpoint.run({ db, query, range, path, alerts, now }));
      if (typeof result === 'string') return problem(404, { error: 'not_found', message: result });
      return { status: 200, body: maskSecrets(JSON.stringify(result), this.options.secrets) };
    } catch (err) {
      if (err instanceof BadParameterError) {
        return problem(400, {
          error: 'bad_request',
          message: maskSecrets(err.message, this.options.secrets),
          parameter: err.parameter,
        });
      }
      if (err instanceof BadCursorError)
        return problem(400, { error: 'bad_request', message: err.message, parameter: 'cursor' });
      this.options.log.error(
        { err, endpoint: endpoint.path },
        `read API: the query of ${API_PREFIX}${endpoint.path} failed; answered 500`,
      );
      return problem(500, { error: 'internal', message: "the query failed; the reason is in Svc's log" });
    }
  }

  /** Closes the store's connections (with the web view). */
  close(): void {
    this.options.reader?.close();
  }
}

/** The path below API_PREFIX, or undefined for a path outside it. */
function restOf(pathname: string): string | undefined {
  return pathname.startsWith(API_PREFIX) ? pathname.slice(API_PREFIX.length) : undefined;
}

/** The endpoint of a path below the prefix, with its path parameters; undefined when none (or a part is not valid UTF-8). */
function matchEndpoint(rest: string): { endpoint: Endpoint; path: Record<string, string> } | undefined {
  const parts = rest.split('/');
  for (const endpoint of ENDPOINTS) {
    const template = endpoint.path.split('/');
    if (template.length !== parts.length) continue;
    const path: Record<string, string> = {};
    const matches = template.every((segment, index) => {
      const part = parts[index] ?? '';
      if (!segment.startsWith('{')) return segment === part;
      try {
        path[segment.slice(1, -1)] = decodeURIComponent(part);
      } catch {
        return false;
      }
      return part !== '';
    });
    if (matches) return { endpoint, path };
  }
  return undefined;
}

/** `text` (JSON or plain) with every secret value replaced by the mask, as written and as JSON-escaped. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let masked = text;
  for (const secret of secrets) {
    masked = masked.replaceAll(secret, MASK);
    const escaped = JSON.stringify(secret).slice(1, -1);
    if (escaped !== secret) masked = masked.replaceAll(escaped, MASK);
  }
  return masked;
}

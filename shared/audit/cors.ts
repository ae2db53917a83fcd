/**
 * CORS for the audit API: the headers every answer carries (audit-event-api.md, docs/audit-api.md
 * "CORS"), the same as `@middy/http-cors` gave with Svc's options, without its per-request work
 * (a `structuredClone` of the answer's headers and a scan of their names per request). The header
 * objects are built once per configuration, one per listed origin and one for every other request;
 * an answer gets them copied in, in the order middy wrote them.
 */

export const CORS_ALLOW_METHODS = 'GET, POST, OPTIONS';
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, X-Audit-Client-Version';
export const CORS_EXPOSE_HEADERS = 'retry-after, x-ratelimit-limit, x-ratelimit-remaining, x-ratelimit-reset';
export const CORS_MAX_AGE_SECONDS = 3600;

export type CorsHeaders = Readonly<Record<string, string>>;

/**
 * The CORS headers for a request's `Origin`, from the allowed origins (`Svc.auditEvents.cors.allowedOrigins`).
 * - `Access-Control-Allow-Origin` echoes the Origin only when it is listed, exactly (a Map, so an
 *   Origin named like an Object.prototype member, e.g. "constructor", is not "listed").
 * - `Vary: Origin` when the answer depends on the Origin: more than one origin listed, an entry
 *   with a `*` (such an entry matches only itself here), or the Origin echoed (a cache must not give
 *   that answer to a page of another origin). The rule of @middy/http-cors 7.
 * - Allow-Methods, Allow-Headers, Expose-Headers and Max-Age always, preflight or not.
 */
export function corsHeadersFor(allowedOrigins: readonly string[]): (origin: string | undefined) => CorsHeaders {
  const any = allowedOrigins.includes('*');
  const many = allowedOrigins.length > 1 || allowedOrigins.some((o) => o !== '*' && o.includes('*'));
  const build = (allowOrigin: string): CorsHeaders => {
    const headers: Record<string, string> = {
      'Access-Control-Allow-Headers': CORS_ALLOW_HEADERS,
      'Access-Control-Allow-Methods': CORS_ALLOW_METHODS,
    };
    if (allowOrigin !== '') headers['Access-Control-Allow-Origin'] = allowOrigin;
    const echoed = allowOrigin !== '' && allowOrigin !== '*';
    if (many || (any && allowOrigin !== '*') || echoed) headers['Vary'] = 'Origin';
    headers['Access-Control-Expose-Headers'] = CORS_EXPOSE_HEADERS;
    headers['Access-Control-Max-Age'] = String(CORS_MAX_AGE_SECONDS);
    return Object.freeze(headers);
  };
  const unlisted = build('');
  const listed = new Map<string, CorsHeaders>();
  for (const origin of allowedOrigins) if (origin !== '') listed.set(origin, build(origin));
  return (origin) => (origin === undefined ? unlisted : (listed.get(origin) ?? unlisted));
}

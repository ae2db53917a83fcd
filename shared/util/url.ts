/** URLs as Svc reports them (logs, error metadata). */

/** scheme + host + path: the query, fragment and any credentials removed (§10.9 `request_url`). */
export function withoutQuery(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url.replace(/[?#].*$/, '');
  }
}

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

/**
 * A URL fit for a log line when it may carry secrets: credentials and the query (a token is often
 * passed there) are shown as `[REDACTED]`, the fragment dropped; scheme, host and path stay.
 */
export function maskedUrl(url: string): string {
  try {
    const u = new URL(url);
    const credentials = u.username !== '' || u.password !== '' ? '[REDACTED]@' : '';
    return `${u.protocol}//${credentials}${u.host}${u.pathname}${u.search === '' ? '' : '?[REDACTED]'}`;
  } catch {
    return '[unparsable URL]';
  }
}

/**
 * The HTTP transport of the webhook, Slack and Teams channels: a JSON POST with global fetch, which
 * goes through the corporate proxy when one is installed (shared/runtime/proxy.ts). Their URLs are
 * secrets (Slack's and Teams' carry their key in the path or query): an error or log line shows the
 * scheme and host only (maskUrl), and the fetch error's own text, which may quote the URL, is
 * replaced by its code.
 */
import { ChannelError, type ChannelType } from './port.js';

/** How long one POST may take, reply included. */
const DEFAULT_TIMEOUT_MS = 10_000;

/** `https://hooks.slack.com/…`: what may be shown of a secret URL. */
export function maskUrl(url: string): string {
  const parsed = URL.parse(url);
  return parsed === null ? 'an unparsable URL' : `${parsed.protocol}//${parsed.host}/…`;
}

/** A `Retry-After` header (seconds, or an HTTP date) in milliseconds from now; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null || header.trim() === '') return undefined;
  const trimmed = header.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1_000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** The network error code under a fetch failure (`ECONNREFUSED`, …), or its name (`TimeoutError`). */
function failureCode(err: unknown): string {
  if (err instanceof Error) {
    const cause: unknown = err.cause;
    if (typeof cause === 'object' && cause !== null) {
      const code: unknown = Reflect.get(cause, 'code');
      if (typeof code === 'string') return code;
    }
    return err.name === 'TimeoutError' ? 'ETIMEDOUT' : err.name;
  }
  return 'unknown';
}

/** Statuses worth another try: the receiver is busy, overloaded or briefly broken. */
function retryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** The identity of a channel in its error messages. */
export interface ChannelIdentity {
  name: string;
  type: ChannelType;
}

/** POSTs `body` as JSON to `url`; resolves on a 2xx, else rejects with a ChannelError that shows no secret. */
export async function postJson(
  channel: ChannelIdentity,
  url: string,
  body: unknown,
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<void> {
  const where = `${channel.type} channel "${channel.name}" (${maskUrl(url)})`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const code = failureCode(err);
    throw new ChannelError(`${where}: the request failed (${code})`, { code, retryable: true });
  }
  // The body is not needed; reading it frees the connection for the next request.
  await response.arrayBuffer().catch(() => undefined);
  if (response.ok) return;
  const retryAfter = retryAfterMs(response.headers.get('retry-after'));
  throw new ChannelError(`${where}: the receiver answered HTTP ${response.status}`, {
    status: response.status,
    retryable: retryableStatus(response.status),
    ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }),
  });
}

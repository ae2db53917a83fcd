/**
 * The heartbeat (platform-formats.md §10.2): `GET heartbeat.remoteURL` once at start, then at every
 * occurrence of `heartbeat.frequency` (a text schedule, §10.1). The answer is only logged: DEBUG on
 * success (a 2xx after redirects), ERROR on failure, naming the URL with its credentials and query
 * masked and saying what went wrong. Timeout 10 s (Svc choice), never retried: the next beat is the
 * retry. Not tracked by the error tracker (§10.9 has no heartbeat error type).
 *
 * Credentials in the URL (`https://user:pass@host/…`) are sent as HTTP Basic authentication: the
 * runtime's fetch refuses a URL that carries them.
 */
import type { Log } from '../../shared/logging/log.js';
import { ScheduledTask } from '../../shared/runtime/schedule.js';
import { maskedUrl } from '../../shared/util/url.js';

/** §10.2 (Svc choice): the longest a heartbeat request may take. */
export const HEARTBEAT_TIMEOUT_MS = 10_000;

export interface HeartbeatOptions {
  url: string;
  /** The text schedule (`heartbeat.frequency`). */
  frequency: string;
  log: Log;
  /** Default HEARTBEAT_TIMEOUT_MS; tests shorten it so a slow server is cut within a test's time. */
  timeoutMs?: number;
}

/** The request of a heartbeat: the URL without credentials, and those as a Basic header. */
function request(url: string): { target: string; headers: Record<string, string> } {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return { target: u.href, headers: {} };
  const basic = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`, 'utf8').toString(
    'base64',
  );
  u.username = '';
  u.password = '';
  return { target: u.href, headers: { authorization: `Basic ${basic}` } };
}

/** What went wrong with a request that got no answer, in words. */
function failure(err: unknown, timeoutMs: number): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError'))
    return `no answer within ${timeoutMs} ms (timeout)`;
  const cause: unknown = err instanceof Error ? err.cause : undefined;
  const code = cause instanceof Error && 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  const message = cause instanceof Error ? cause.message : err instanceof Error ? err.message : String(err);
  return code !== undefined && !message.includes(code) ? `${code}: ${message}` : message;
}

/** Sends one heartbeat and logs the outcome; never rejects. Resolves true on success. */
export async function beat(options: HeartbeatOptions): Promise<boolean> {
  const { log } = options;
  const timeoutMs = options.timeoutMs ?? HEARTBEAT_TIMEOUT_MS;
  const shown = maskedUrl(options.url);
  const started = Date.now();
  try {
    const { target, headers } = request(options.url);
    const res = await fetch(target, { method: 'GET', headers, signal: AbortSignal.timeout(timeoutMs) });
    await res.body?.cancel().catch(() => undefined);
    const ms = Date.now() - started;
    if (res.ok) {
      log.debug({ url: shown, status: res.status, ms }, `heartbeat sent to ${shown}: HTTP ${res.status}`);
      return true;
    }
    log.error({ url: shown, status: res.status, ms }, `heartbeat to ${shown} failed: HTTP ${res.status}`);
  } catch (err) {
    const reason = failure(err, timeoutMs);
    log.error({ url: shown, reason, ms: Date.now() - started }, `heartbeat to ${shown} failed: ${reason}`);
  }
  return false;
}

/** The heartbeat as a component: at start, then per schedule; `stop` ends the timer. */
export function heartbeatTask(options: HeartbeatOptions): ScheduledTask {
  const task = new ScheduledTask({
    name: 'heartbeat',
    schedule: options.frequency,
    task: async () => {
      await beat(options);
    },
    onSkip: (skipped) =>
      options.log.warn(
        { skipped },
        `heartbeat: the previous one is still waiting for ${maskedUrl(options.url)}; this one is skipped`,
      ),
  });
  return task;
}

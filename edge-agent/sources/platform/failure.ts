/**
 * What every poller does with a failed poll (platform-formats.md §4 "Failure", §5.1, §5.2, §10.9):
 * one log line that names the server and what went wrong, and one tracked error of the poller's
 * type with the server's name. The request errors of http.ts carry the request's URL and timeout;
 * the poll's context (`host`, `virtualProxy`) is set on the error here and given to the tracker,
 * whose sink (the `svc_errors` point of §6.10) takes its tags from the tracked error's context.
 */
import { categorise, type ErrorTracker, type ErrorType } from '../../../shared/errors/tracker.js';
import type { Log } from '../../../shared/logging/log.js';
import { HttpStatusError, PlatformRequestError, RequestCancelledError } from './http.js';

/** §10.9: the context of a poll's error (`{host}`, `{host, virtualProxy}`). */
export interface PollContext {
  host: string;
  virtualProxy?: string;
}

export interface PollFailure {
  type: Extract<ErrorType, 'HEALTH_API' | 'PROXY_API' | 'APP_NAMES_EXTRACT'>;
  err: unknown;
  serverName: string;
  context: PollContext;
  /** The sentence's subject: `health poll of node1`. */
  what: string;
  /** ERROR, or WARN where a failure is expected (the app list at start, §5.2). */
  level?: 'error' | 'warn';
  /** Added to the log line (e.g. what happens next). */
  consequence?: string;
}

/**
 * Logs and tracks one failed poll. A poll cancelled because Svc is stopping is no failure of the
 * platform: one DEBUG line, nothing tracked. Returns whether it was a failure (the sink is told).
 */
export function reportPollFailure(failure: PollFailure, log: Log, errors: ErrorTracker): boolean {
  const { type, err, serverName, context, what } = failure;
  if (err instanceof RequestCancelledError) {
    log.debug({ server: serverName, ...context }, `${what} cancelled: Svc is stopping`);
    return false;
  }
  const known = err instanceof PlatformRequestError;
  if (known) {
    err.host = context.host;
    if (context.virtualProxy !== undefined) err.virtualProxy = context.virtualProxy;
  }
  const category = categorise(type, err);
  const message = err instanceof Error ? err.message : String(err);
  const fields = {
    server: serverName,
    ...context,
    category,
    ...(known ? { url: err.url, error: message } : { err }),
    ...(err instanceof HttpStatusError && err.bodyPreview !== '' ? { body: err.bodyPreview } : {}),
  };
  const where = known ? ` (${err.url})` : '';
  log[failure.level ?? 'error'](
    fields,
    `${what} failed${where}: ${message} [${category}]${failure.consequence ? `; ${failure.consequence}` : ''}`,
  );
  errors.track(type, err, { serverName, ...context });
  return true;
}

/**
 * The session poller (platform-formats.md §5.1): per server with `userSessions.enable`, per virtual
 * proxy, `GET https://<userSessions.host>/qps<vp>/session?Xrfkey=<key>` over mutual TLS, at start and
 * then every `Svc.userSessions.pollingInterval` (when `Svc.userSessions.enableSessionExtract`).
 * The answer must be an array of sessions; excluded users (§0.5, `Svc.userSessions.excludeUser`)
 * are removed before anything is counted or listed, and the rest becomes a SessionSample for the
 * PollSink. A failure is logged (ERROR), tracked as `PROXY_API` and reported to the sink.
 */
import { Type } from '@sinclair/typebox';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { Log } from '../../../shared/logging/log.js';
import {
  type ProxySession,
  ProxySessionSchema,
  type ServerTags,
  type SessionSample,
} from '../../../shared/platform/polled.js';
import { exclusionMatcher } from '../common/exclude-user.js';
import { sanitiseField } from '../common/sanitise.js';
import { reportPollFailure } from './failure.js';
import { type MonitoredServer, serverTags } from './health.js';
import { getJson, type Header, SESSION_TIMEOUT_MS, xrfkey } from './http.js';
import { PollGroup } from './schedule.js';
import type { PollSink } from './sink.js';
import type { ClientTls } from './tls.js';
import { bodyCheck } from './validate.js';

/** Largest session list accepted (Svc choice): about 50,000 sessions. */
export const SESSION_MAX_BODY_BYTES = 16 * 1_048_576;
/** §0.1 for a session's texts (Svc choice, as the user fields of UDP events, §1.2). */
export const SESSION_TEXT_MAX = 100;

/** §5.1: `/qps<vp>/session`, where vp is '' for `/`, else the prefix without a trailing `/`. */
export function sessionPath(virtualProxy: string): string {
  const vp = virtualProxy === '/' ? '' : virtualProxy.replace(/\/+$/, '');
  return `/qps${vp}/session`;
}

/** §5.1 headers of a request whose Xrfkey is `key` (the same key goes in the query). */
export function sessionHeaders(key: string): Header[] {
  return [
    ['X-Qlik-Xrfkey', key],
    ['Cache-Control', 'no-cache'],
    ['Content-Type', 'application/json'],
  ];
}

/** §5.1 session tags: server tags + the virtual proxy as configured + the session host with its port. */
export function sessionTags(server: MonitoredServer, virtualProxy: string): ServerTags {
  return {
    ...serverTags(server),
    user_session_virtual_proxy: virtualProxy,
    user_session_host: server.userSessions.host,
  };
}

/**
 * The sample of one successful poll: the sessions of users not excluded (their texts cleaned,
 * §0.1, and only the fields Svc keeps), and their distinct `DIR\id` in first-seen order.
 */
export function sessionSample(
  server: MonitoredServer,
  virtualProxy: string,
  sessions: readonly ProxySession[],
  excluded: (directory: string, userId: string) => boolean,
): SessionSample {
  const kept: ProxySession[] = [];
  const users = new Set<string>();
  for (const session of sessions) {
    if (excluded(session.UserDirectory, session.UserId)) continue;
    const clean: ProxySession = {
      UserDirectory: sanitiseField(session.UserDirectory, SESSION_TEXT_MAX),
      UserId: sanitiseField(session.UserId, SESSION_TEXT_MAX),
      ...(session.Attributes !== undefined ? { Attributes: session.Attributes } : {}),
      SessionId: sanitiseField(session.SessionId, SESSION_TEXT_MAX),
    };
    kept.push(clean);
    users.add(`${clean.UserDirectory}\\${clean.UserId}`);
  }
  return {
    serverName: server.serverName,
    tags: sessionTags(server, virtualProxy),
    virtualProxy,
    sessions: kept,
    userIdList: [...users].join(','),
  };
}

/** Every item must be a session: a count from a partly understood answer would be wrong (Svc choice). */
const checkSessions = bodyCheck(Type.Array(ProxySessionSchema), 'a list of sessions');

export interface SessionPollerDeps {
  settings: SvcConfig['userSessions'];
  servers: readonly MonitoredServer[];
  tls: ClientTls;
  sink: PollSink;
  errors: ErrorTracker;
  log: Log;
  /** Default SESSION_TIMEOUT_MS (§5.1); tests shorten it. */
  timeoutMs?: number;
}

/** One session poll of one server and virtual proxy, its outcome handed to the sink. Never rejects; `signal` cancels it. */
export async function pollSessions(
  server: MonitoredServer,
  virtualProxy: string,
  deps: SessionPollerDeps & { excluded: (directory: string, userId: string) => boolean },
  signal?: AbortSignal,
): Promise<void> {
  const timeoutMs = deps.timeoutMs ?? SESSION_TIMEOUT_MS;
  const key = xrfkey();
  let sample: SessionSample;
  let receivedAtMs: number;
  try {
    const url = new URL(`https://${server.userSessions.host}${sessionPath(virtualProxy)}`);
    url.searchParams.set('Xrfkey', key);
    const response = await getJson({
      url,
      headers: sessionHeaders(key),
      tls: deps.tls,
      timeoutMs,
      maxBodyBytes: SESSION_MAX_BODY_BYTES,
      ...(signal ? { signal } : {}),
    });
    receivedAtMs = response.receivedAtMs;
    sample = sessionSample(server, virtualProxy, checkSessions(response, timeoutMs), deps.excluded);
  } catch (err) {
    const failed = reportPollFailure(
      {
        type: 'PROXY_API',
        err,
        serverName: server.serverName,
        context: { host: server.userSessions.host, virtualProxy },
        what: `session poll of ${server.serverName} virtual proxy ${virtualProxy}`,
      },
      deps.log,
      deps.errors,
    );
    if (failed) deps.sink.sessionsFailed(server.serverName, sessionTags(server, virtualProxy));
    return;
  }
  deps.log.debug(
    { server: server.serverName, virtualProxy, sessions: sample.sessions.length },
    `session poll of ${server.serverName} virtual proxy ${virtualProxy}: ${sample.sessions.length} session(s)`,
  );
  deps.sink.sessions(sample, receivedAtMs);
}

/** The servers × virtual proxies the session poller polls: servers with `userSessions.enable`, each of their virtual proxies. */
export function sessionTargets(
  servers: readonly MonitoredServer[],
): { server: MonitoredServer; virtualProxy: string }[] {
  return servers
    .filter((server) => server.userSessions.enable)
    .flatMap((server) => server.userSessions.virtualProxies.map(({ virtualProxy }) => ({ server, virtualProxy })));
}

/** The session poller: one schedule per server × virtual proxy, every `settings.pollingInterval` ms. */
export function sessionPoller(deps: SessionPollerDeps): PollGroup {
  const excluded = exclusionMatcher(deps.settings.excludeUser);
  const targets = sessionTargets(deps.servers);
  const { pollingInterval } = deps.settings;
  return new PollGroup({
    name: `session poller (${targets.length} server × virtual prox${targets.length === 1 ? 'y' : 'ies'}, every ${pollingInterval} ms)`,
    what: 'session poll',
    intervalMs: pollingInterval,
    targets: targets.map(({ server, virtualProxy }) => ({
      label: `${server.serverName} ${virtualProxy}`,
      poll: (signal) => pollSessions(server, virtualProxy, { ...deps, excluded }, signal),
    })),
    log: deps.log,
  });
}

/**
 * The health poller (platform-formats.md §4): `GET https://<servers[].host>/engine/healthcheck` over
 * mutual TLS for every server of `Svc.serversToMonitor.servers`, in parallel, at start and then every
 * `pollingInterval`. A 200 answer whose body passes HealthBodySchema becomes a HealthSample with §4's
 * derived values for the PollSink; anything else is logged (ERROR), tracked as `HEALTH_API` and
 * reported to the sink as a failure, and nothing is written for that server. The others go on.
 */
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { Log } from '../../../shared/logging/log.js';
import type { AppNameList, AppNameLookup } from '../../../shared/platform/app-names.js';
import {
  type DocNames,
  type HealthBody,
  HealthBodySchema,
  type HealthSample,
  type ServerTags,
} from '../../../shared/platform/polled.js';
import { sanitiseField } from '../common/sanitise.js';
import { tsToInstantMs } from '../common/validators.js';
import { reportPollFailure } from './failure.js';
import { getJson, HEALTH_MAX_REDIRECTS, HEALTH_TIMEOUT_MS, type Header } from './http.js';
import { PollGroup } from './schedule.js';
import type { PollSink } from './sink.js';
import type { ClientTls } from './tls.js';
import { bodyCheck } from './validate.js';

export type MonitoredServer = SvcConfig['serversToMonitor']['servers'][number];

/** §4 request path. */
export const HEALTH_PATH = '/engine/healthcheck';
/** §4 fixed headers; `servers[].headers` follow and may replace them. */
export const HEALTH_HEADERS: readonly Header[] = [
  ['Cache-Control', 'no-cache'],
  ['Content-Type', 'application/json'],
];
/** Largest health body accepted (Svc choice): a real one is a few KB, plus 50 bytes per loaded app. */
export const HEALTH_MAX_BODY_BYTES = 4 * 1_048_576;
/** §0.1 for texts of the health body (Svc choice): `version`, `started` and the doc ids. */
export const HEALTH_TEXT_MAX = 100;

/** §4 server tags: host (before the first ':'), server_name, server_description, then serverTags in their order. */
export function serverTags(server: MonitoredServer): ServerTags {
  return {
    host: server.host.split(':')[0] ?? server.host,
    server_name: server.serverName,
    server_description: server.serverDescription,
    ...server.serverTags,
  };
}

/** The app list as the health poller reads it (the app-name poller's AppNameList). */
export type AppNames = Pick<AppNameList, 'nameOf' | 'loaded'>;

const pad2 = (n: number) => String(n).padStart(2, '0');

/** §4 `uptime` at `nowMs`: `<d> days, <h>h <mm>m <ss>s`; `''` if `started` is no valid ISO timestamp or in the future. */
export function uptimeText(started: string, nowMs: number): string {
  const startMs = tsToInstantMs(started);
  if (startMs === null || startMs > nowMs) return '';
  const seconds = Math.floor((nowMs - startMs) / 1000);
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  return `${days} days, ${hours}h ${pad2(minutes)}m ${pad2(seconds % 60)}s`;
}

/** §4 doc names of one doc list: `SessionApp…` ids apart, the others by their app-list name (else the id); both sorted. */
export function docNames(ids: readonly string[], appNames: AppNameLookup): DocNames {
  const sessionApps: string[] = [];
  const names: string[] = [];
  for (const id of ids) {
    if (id.startsWith('SessionApp')) sessionApps.push(id);
    else names.push(appNames.nameOf(id) ?? id);
  }
  return { names: names.sort(), sessionApps: sessionApps.sort() };
}

/** The body with its texts cleaned (§0.1): what every output then shows. */
function sanitised(body: HealthBody): HealthBody {
  const ids = (list: readonly string[]) => list.map((id) => sanitiseField(id, HEALTH_TEXT_MAX));
  const { apps } = body;
  return {
    ...body,
    version: sanitiseField(body.version, HEALTH_TEXT_MAX),
    started: sanitiseField(body.started, HEALTH_TEXT_MAX),
    apps: {
      ...apps,
      active_docs: ids(apps.active_docs),
      loaded_docs: ids(apps.loaded_docs),
      in_memory_docs: ids(apps.in_memory_docs),
    },
  };
}

/**
 * The sample of one successful poll: the fields of the body Svc uses (others are dropped), the
 * uptime at the response's arrival, and doc names when an app list is loaded (`appNames` given).
 */
export function healthSample(
  server: MonitoredServer,
  body: HealthBody,
  receivedAtMs: number,
  appNames: AppNames | null,
): HealthSample {
  const { version, started, mem, apps, cpu, session, users, cache, saturated } = sanitised(body);
  const kept: HealthBody = {
    version,
    started,
    mem: { committed: mem.committed, allocated: mem.allocated, free: mem.free },
    apps: {
      active_docs: apps.active_docs,
      in_memory_docs: apps.in_memory_docs,
      loaded_docs: apps.loaded_docs,
      calls: apps.calls,
      selections: apps.selections,
    },
    cpu: { total: cpu.total },
    session: { active: session.active, total: session.total },
    users: { active: users.active, total: users.total },
    cache: {
      hits: cache.hits,
      lookups: cache.lookups,
      added: cache.added,
      replaced: cache.replaced,
      bytes_added: cache.bytes_added,
    },
    saturated,
  };
  return {
    serverName: server.serverName,
    tags: serverTags(server),
    body: kept,
    uptime: uptimeText(started, receivedAtMs),
    ...(appNames?.loaded
      ? {
          docNames: {
            active: docNames(apps.active_docs, appNames),
            loaded: docNames(apps.loaded_docs, appNames),
            inMemory: docNames(apps.in_memory_docs, appNames),
          },
        }
      : {}),
  };
}

const checkHealthBody = bodyCheck(HealthBodySchema, 'a health report');

export interface HealthPollerDeps {
  settings: SvcConfig['serversToMonitor'];
  tls: ClientTls;
  /** The app list for doc names; null when app names are not extracted (`appNames.enableAppNameExtract` off). */
  appNames: AppNames | null;
  sink: PollSink;
  errors: ErrorTracker;
  log: Log;
  /** Default HEALTH_TIMEOUT_MS (§4); tests shorten it. */
  timeoutMs?: number;
}

/** One health poll of one server, its outcome handed to the sink. Never rejects; `signal` cancels it (Svc stops). */
export async function pollHealth(server: MonitoredServer, deps: HealthPollerDeps, signal?: AbortSignal): Promise<void> {
  const timeoutMs = deps.timeoutMs ?? HEALTH_TIMEOUT_MS;
  let sample: HealthSample;
  let receivedAtMs: number;
  try {
    const response = await getJson({
      url: new URL(`https://${server.host}${HEALTH_PATH}`),
      headers: HEALTH_HEADERS,
      extraHeaders: server.headers,
      tls: deps.tls,
      timeoutMs,
      maxRedirects: HEALTH_MAX_REDIRECTS,
      maxBodyBytes: HEALTH_MAX_BODY_BYTES,
      ...(signal ? { signal } : {}),
    });
    receivedAtMs = response.receivedAtMs;
    sample = healthSample(server, checkHealthBody(response, timeoutMs), receivedAtMs, deps.appNames);
  } catch (err) {
    const failed = reportPollFailure(
      {
        type: 'HEALTH_API',
        err,
        serverName: server.serverName,
        context: { host: server.host },
        what: `health poll of ${server.serverName}`,
      },
      deps.log,
      deps.errors,
    );
    if (failed) deps.sink.healthFailed(server.serverName, serverTags(server));
    return;
  }
  deps.log.debug({ server: server.serverName, host: server.host }, `health poll of ${server.serverName} succeeded`);
  deps.sink.health(sample, receivedAtMs);
}

/** The health poller: one schedule per server of `settings.servers`, every `settings.pollingInterval` ms. */
export function healthPoller(deps: HealthPollerDeps): PollGroup {
  const { servers, pollingInterval } = deps.settings;
  return new PollGroup({
    name: `health poller (${servers.length} server${servers.length === 1 ? '' : 's'}, every ${pollingInterval} ms)`,
    what: 'health poll',
    intervalMs: pollingInterval,
    targets: servers.map((server) => ({
      label: server.serverName,
      poll: (signal) => pollHealth(server, deps, signal),
    })),
    log: deps.log,
  });
}

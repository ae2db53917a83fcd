/**
 * The app-name poller (platform-formats.md §5.2): `GET https://<appNames.hostIP>:4242/qrs/app` over
 * mutual TLS, at start and then every `Svc.appNames.extractInterval`. Its list gives user events their
 * `appName` (§1.4), engine-performance events their `app_name` for the filter's app-name rules (§2.4)
 * and health samples their doc names (§4).
 *
 * The shared AppNameList is replaced only after a complete success: the answer arrived, is a JSON
 * array, and every item is an app with an id and a name. Otherwise the failure is tracked as
 * `APP_NAMES_EXTRACT` and the list of the last success stays.
 *
 * At start (Svc choice): the poller's start waits for the first poll, at most APP_LIST_START_WAIT_MS,
 * before the components after it (the health and session pollers, the UDP listeners) start. A
 * platform that answers within a second so gives even the first events and health samples their
 * names; one that does not answer delays the start by those seconds only. A first poll that fails is
 * a WARN (Svc runs without names until a poll succeeds), later failures are ERRORs.
 */
import { isIP } from 'node:net';
import { Type } from '@sinclair/typebox';
import type { SvcConfig } from '../../../shared/config/schema.js';
import type { ErrorTracker } from '../../../shared/errors/tracker.js';
import type { Log } from '../../../shared/logging/log.js';
import { AppNameList } from '../../../shared/platform/app-names.js';
import type { Component } from '../../../shared/runtime/lifecycle.js';
import { sanitiseField } from '../common/sanitise.js';
import { reportPollFailure } from './failure.js';
import { APP_LIST_TIMEOUT_MS, getJson, type Header, xrfkey } from './http.js';
import { PollGroup } from './schedule.js';
import type { ClientTls } from './tls.js';
import { bodyCheck } from './validate.js';

/** §5.2: the repository service's port and path. */
export const APP_LIST_PORT = 4242;

/**
 * `appNames.hostIP` as host and port: the port is 4242 (§5.2) unless the value names one
 * (`host:port`, Svc choice, for a repository behind another port, or a simulator).
 */
export function appListAddress(hostIP: string): { host: string; port: number } {
  // A bare IPv6 address has colons of its own; with a port it is written [address]:port.
  const m = isIP(hostIP) === 0 ? (/^\[([^\]]+)\]:(\d{1,5})$/.exec(hostIP) ?? /^([^:]+):(\d{1,5})$/.exec(hostIP)) : null;
  return m ? { host: m[1] ?? hostIP, port: Number(m[2]) } : { host: hostIP, port: APP_LIST_PORT };
}
export const APP_LIST_PATH = '/qrs/app';
/** Longest the start waits for the first app list (Svc choice). */
export const APP_LIST_START_WAIT_MS = 5_000;
/** Largest app list accepted (Svc choice): about 100,000 apps. */
export const APP_LIST_MAX_BODY_BYTES = 64 * 1_048_576;
/** §0.1 for an app's texts (Svc choice). */
export const APP_NAME_MAX = 500;
export const APP_DESCRIPTION_MAX = 1000;

/** §5.2 headers of a request whose Xrfkey is `key` (the same key goes in the query). */
export function appListHeaders(key: string): Header[] {
  return [
    ['X-Qlik-Xrfkey', key],
    ['X-Qlik-User', 'UserDirectory=Internal; UserId=sa_repository'],
    ['Content-Type', 'application/json'],
  ];
}

/** What Svc keeps of an app (§5.2). */
export interface AppInfo {
  id: string;
  name: string;
  description: string;
}

const UUID = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
/** An app of the repository's answer: the fields Svc keeps (others are ignored); the repository may leave out the description. */
const AppItemSchema = Type.Object({
  id: Type.String({ pattern: UUID }),
  name: Type.String(),
  description: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
const checkApps = bodyCheck(Type.Array(AppItemSchema), 'a list of apps');

export interface AppListPollerDeps {
  settings: SvcConfig['appNames'];
  tls: ClientTls;
  errors: ErrorTracker;
  log: Log;
  /** Default APP_LIST_TIMEOUT_MS (§5.2); tests shorten it. */
  timeoutMs?: number;
  /** Default APP_LIST_START_WAIT_MS. */
  startWaitMs?: number;
}

export class AppListPoller implements Component {
  readonly name: string;
  /** The lookup every consumer holds; replaced in place after each complete success. */
  readonly list = new AppNameList();
  private appsKept: readonly AppInfo[] = [];
  /** `host:port` of the repository service polled. */
  readonly address: string;
  private readonly group: PollGroup;
  private polls = 0;
  private readonly firstPoll: Promise<void>;
  private firstPollDone: () => void = () => undefined;

  constructor(private readonly deps: AppListPollerDeps) {
    const { hostIP, extractInterval } = deps.settings;
    const { host, port } = appListAddress(hostIP);
    this.address = `${host}:${port}`;
    this.name = `app-name poller (${this.address}, every ${extractInterval} ms)`;
    this.firstPoll = new Promise((resolve) => (this.firstPollDone = resolve));
    this.group = new PollGroup({
      name: this.name,
      what: 'app list poll',
      intervalMs: extractInterval,
      targets: [{ label: hostIP, poll: (signal) => this.poll(signal) }],
      log: deps.log,
    });
  }

  /** The apps of the last complete success (empty before one). */
  get apps(): readonly AppInfo[] {
    return this.appsKept;
  }

  async start(): Promise<void> {
    await this.group.start();
    const waitMs = this.deps.startWaitMs ?? APP_LIST_START_WAIT_MS;
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      this.firstPoll.then(() => 'done' as const),
      new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), waitMs))),
    ]);
    clearTimeout(timer);
    if (waited === 'late')
      this.deps.log.warn(
        { hostIP: this.deps.settings.hostIP, waitedMs: waitMs },
        `the app list of ${this.deps.settings.hostIP} has not arrived within ${waitMs} ms; Svc starts without app names and adds them when it arrives`,
      );
  }

  async stop(): Promise<void> {
    await this.group.stop();
  }

  /** One poll: the list replaced after a complete success, else the failure reported. Never rejects; `signal` cancels it. */
  async poll(signal?: AbortSignal): Promise<void> {
    const { hostIP, extractInterval } = this.deps.settings;
    const first = this.polls === 0;
    this.polls += 1;
    const timeoutMs = this.deps.timeoutMs ?? APP_LIST_TIMEOUT_MS;
    const key = xrfkey();
    const { host, port } = appListAddress(hostIP);
    try {
      const url = new URL(`https://${host}:${port}${APP_LIST_PATH}`);
      url.searchParams.set('xrfkey', key);
      const response = await getJson({
        url,
        headers: appListHeaders(key),
        tls: this.deps.tls,
        timeoutMs,
        maxBodyBytes: APP_LIST_MAX_BODY_BYTES,
        family: 4,
        ...(signal ? { signal } : {}),
      });
      const apps = checkApps(response, timeoutMs).map((app) => ({
        id: app.id.toLowerCase(),
        name: sanitiseField(app.name, APP_NAME_MAX),
        description: sanitiseField(app.description ?? '', APP_DESCRIPTION_MAX),
      }));
      const before = this.list.loaded ? this.list.size : null;
      this.list.replace(apps);
      this.appsKept = apps;
      const level = before === null ? 'info' : 'debug';
      this.deps.log[level]({ hostIP, apps: apps.length }, `app list of ${hostIP} loaded: ${apps.length} app(s)`);
    } catch (err) {
      reportPollFailure(
        {
          type: 'APP_NAMES_EXTRACT',
          err,
          serverName: host,
          context: { host },
          what: `app list poll of ${hostIP}`,
          level: first ? 'warn' : 'error',
          consequence: this.list.loaded
            ? 'the list of the last successful poll is kept'
            : `app names are unknown until a poll succeeds (the next in ${extractInterval} ms)`,
        },
        this.deps.log,
        this.deps.errors,
      );
    } finally {
      if (first) this.firstPollDone();
    }
  }
}

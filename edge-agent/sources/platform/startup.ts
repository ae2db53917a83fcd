/**
 * The start-up rules of the platform pollers (platform-formats.md §4, §5.1, §5.2), checked by
 * `svc validate-config` and before `svc local` / `svc edge` start anything: a problem is a config
 * error naming the key (exit 1, no stack). Only what a poller that is on needs is checked:
 * - the certificate files (tls.ts);
 * - `appNames.hostIP` is an IPv4 address or resolves to one (§5.2); whether `:4242` answers is not
 *   checked here (an unreachable repository is only a WARN at start, app-list.ts);
 * - `servers[].headers` can be sent as HTTP headers, and each virtual proxy is a URL path segment.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { RuleFinding } from '../../../shared/config/errors.js';
import { ConfigError, type ConfigIssue, quote } from '../../../shared/config/errors.js';
import type { SvcConfig } from '../../../shared/config/schema.js';
import { displayPath } from '../../../shared/config/walk.js';
import { appListAddress } from './app-list.js';
import { headerProblem } from './http.js';
import { sessionTargets } from './sessions.js';
import { type ClientTls, loadClientTls } from './tls.js';

/** Which pollers a config runs. */
export interface PollersOn {
  /** §4: some server is listed. */
  health: boolean;
  /** §5.1: extraction is on and some server has `userSessions.enable` with a virtual proxy. */
  sessions: boolean;
  /** §5.2 */
  appNames: boolean;
}

export function pollersOn(config: SvcConfig): PollersOn {
  const servers = config.serversToMonitor.servers;
  return {
    health: servers.length > 0,
    sessions: config.userSessions.enableSessionExtract && sessionTargets(servers).length > 0,
    appNames: config.appNames.enableAppNameExtract,
  };
}

/** A server the pollers of one kind poll: what counts its failed polls from 0 at the start (the metrics endpoint, the alert facts). */
export interface PolledServer {
  kind: 'health' | 'sessions';
  serverName: string;
}

/** Every server each poller of the config polls, once per kind. */
export function polledServers(config: SvcConfig): PolledServer[] {
  const on = pollersOn(config);
  const servers = config.serversToMonitor.servers;
  return [
    ...(on.health ? servers.map((server) => ({ kind: 'health' as const, serverName: server.serverName })) : []),
    ...(on.sessions
      ? [...new Set(sessionTargets(servers).map(({ server }) => server.serverName))].map((serverName) => ({
          kind: 'sessions' as const,
          serverName,
        }))
      : []),
  ];
}

export function anyPollerOn(config: SvcConfig): boolean {
  const on = pollersOn(config);
  return on.health || on.sessions || on.appNames;
}

/** What the pollers are built with once the checks passed. */
export interface PlatformAccess {
  /** null when no poller is on. */
  tls: ClientTls | null;
}

export type AccessCheck =
  | { ok: true; access: PlatformAccess; warnings: RuleFinding[] }
  | { ok: false; problems: RuleFinding[]; warnings: RuleFinding[] };

/** Longest the check waits for `appNames.hostIP` to resolve. */
export const HOST_LOOKUP_TIMEOUT_MS = 10_000;

/** A virtual proxy prefix as the platform allows it: `/`, or `/` and one path segment (a trailing `/` is dropped, §5.1). */
const VIRTUAL_PROXY = /^\/([A-Za-z0-9._~-]+\/?)?$/;

export interface AccessCheckOptions {
  /** Where relative certificate paths start (default the working directory). */
  cwd?: string;
  now?: number;
  /** Default HOST_LOOKUP_TIMEOUT_MS. */
  lookupTimeoutMs?: number;
  /** Resolves a host name to an IPv4 address; default node:dns `lookup` with family 4. */
  lookup?: (host: string) => Promise<unknown>;
}

/** Runs every start-up rule of the pollers that are on; collects all problems. */
export async function checkPlatformAccess(config: SvcConfig, options: AccessCheckOptions = {}): Promise<AccessCheck> {
  const on = pollersOn(config);
  if (!on.health && !on.sessions && !on.appNames) return { ok: true, access: { tls: null }, warnings: [] };
  const problems: RuleFinding[] = [];
  const error = (path: RuleFinding['path'], message: string) => problems.push({ severity: 'error', path, message });

  const users = [
    on.health && 'the health poller',
    on.sessions && 'the session poller',
    on.appNames && 'the app-name poller',
  ].filter((u): u is string => typeof u === 'string');
  const who = `${users.length > 1 ? `${users.slice(0, -1).join(', ')} and ${users[users.length - 1] ?? ''}` : (users[0] ?? '')} present${users.length > 1 ? '' : 's'} it`;
  const tls = loadClientTls(config.cert, config.serversToMonitor.rejectUnauthorized, who, {
    ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
    ...(options.now !== undefined ? { now: options.now } : {}),
  });
  if (!tls.ok) problems.push(...tls.problems);

  const servers = config.serversToMonitor.servers;
  if (on.health) {
    servers.forEach((server, i) => {
      for (const [name, value] of Object.entries(server.headers)) {
        const problem = headerProblem(name, value);
        if (problem !== undefined)
          error(['serversToMonitor', 'servers', i, 'headers'], `header ${quote(name)} ${problem}`);
      }
    });
  }
  if (on.sessions) {
    servers.forEach((server, i) => {
      if (!server.userSessions.enable) return;
      server.userSessions.virtualProxies.forEach(({ virtualProxy }, j) => {
        if (!VIRTUAL_PROXY.test(virtualProxy))
          error(
            ['serversToMonitor', 'servers', i, 'userSessions', 'virtualProxies', j, 'virtualProxy'],
            `${quote(virtualProxy)} is not a virtual proxy prefix: write / or / followed by one name of letters, digits, ".", "_", "~" or "-"`,
          );
      });
    });
  }
  if (on.appNames) {
    const problem = await ipv4Problem(
      appListAddress(config.appNames.hostIP).host,
      options.lookupTimeoutMs ?? HOST_LOOKUP_TIMEOUT_MS,
      options.lookup ?? ((host) => lookup(host, { family: 4 })),
    );
    if (problem !== undefined) error(['appNames', 'hostIP'], problem);
  }

  if (problems.length > 0 || !tls.ok) return { ok: false, problems, warnings: tls.warnings };
  return { ok: true, access: { tls: tls.tls }, warnings: tls.warnings };
}

/** §5.2: why `host` is not an IPv4 address and does not resolve to one, or undefined when it is or does. */
async function ipv4Problem(
  host: string,
  timeoutMs: number,
  resolve4: (host: string) => Promise<unknown>,
): Promise<string | undefined> {
  const kind = isIP(host);
  if (kind === 4) return undefined;
  if (kind === 6)
    return `${quote(host)} is an IPv6 address; the app list is fetched over IPv4: give an IPv4 address or a name that resolves to one`;
  let timer: NodeJS.Timeout | undefined;
  try {
    const result = await Promise.race([
      resolve4(host).then(() => 'resolved' as const),
      new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs))),
    ]);
    return result === 'late' ? `${quote(host)} did not resolve to an IPv4 address within ${timeoutMs} ms` : undefined;
  } catch (err) {
    const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : 'lookup failed';
    return `${quote(host)} is not an IPv4 address and does not resolve to one (${code})`;
  } finally {
    clearTimeout(timer);
  }
}

/** The problems as the config error the CLI prints (`file Svc.key: problem`, exit 1). */
export function accessConfigError(file: string, problems: readonly RuleFinding[]): ConfigError {
  return new ConfigError(
    problems.map(
      (p): ConfigIssue => ({ file, line: 0, column: 0, path: displayPath(['Svc', ...p.path]), message: p.message }),
    ),
  );
}

/** A warning as `svc validate-config` prints it and start-up logs it: `Svc.key: message`. */
export function accessWarning(finding: RuleFinding): string {
  return `${displayPath(['Svc', ...finding.path])}: ${finding.message}`;
}

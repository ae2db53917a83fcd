/**
 * The failure switches of the platform simulator: what can be made to fail (a simulated server by
 * name, the app list, or all of them) and how (`http-500`, `timeout`, `bad-body`, `cert-reject`).
 */

/** How a target can be made to fail (`ok` = answers normally). */
export const FAILURE_MODES = ['http-500', 'timeout', 'bad-body', 'cert-reject'] as const;
/** One way a target can fail, as `fail()`, the control endpoint and `--fail` name it. */
export type FailureMode = (typeof FAILURE_MODES)[number];
/** A target's current mode: normal or one of the failures. */
export type TargetMode = 'ok' | FailureMode;

/** Narrows a mode read from a command line, a URL or a program's options to a FailureMode. */
export const isFailureMode = (mode: string): mode is FailureMode => FAILURE_MODES.some((known) => known === mode);

/** The end of the message that refuses a mode, shared by the options, `fail()` and the control endpoint. */
export const notAFailureMode = (mode: string): string =>
  `${JSON.stringify(mode)} is not one of ${FAILURE_MODES.join(', ')}`;

/** The failure target that names the app-list API. */
export const APP_LIST_TARGET = 'apps';
/** The failure target that names every server and the app list. */
export const ALL_TARGETS = 'all';

/** Server names of a simulator with `count` servers (`node1`…, zero-padded to one width). */
export function serverNames(count: number): string[] {
  const width = String(count).length;
  return Array.from({ length: count }, (_, index) => `node${String(index + 1).padStart(width, '0')}`);
}

/** What a failure target of a simulator with `servers` servers (at least 1) may be, for messages. */
export function targetHelp(servers: number): string {
  const names = serverNames(servers);
  const list = names.length <= 3 ? names.join(', ') : `${names[0] ?? ''} … ${names.at(-1) ?? ''}`;
  return `is not a server name (${list}), "${APP_LIST_TARGET}" or "${ALL_TARGETS}"`;
}

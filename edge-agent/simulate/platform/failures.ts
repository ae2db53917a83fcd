/**
 * The failure switches of the platform simulator: what can be made to fail (a simulated server by
 * name, the app list, or all of them), how (`http-500`, `timeout`, `bad-body`, `cert-reject`), and
 * the switchboard that holds each target's mode and closes its open connections when the mode
 * changes, so the next request meets the new mode from its TLS handshake on.
 */
import type net from 'node:net';

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

/**
 * Every target's mode and the connections open to it. The listeners ask it which mode a new
 * connection meets and hand it the connection to track; the simulator switches modes through it.
 */
export class TargetSwitches {
  /** In the order status() shows them: the servers, then the app list. */
  private readonly modes: Map<string, TargetMode>;
  private readonly sockets: Map<string, Set<net.Socket>>;

  constructor(private readonly servers: readonly string[]) {
    const targets = [...servers, APP_LIST_TARGET];
    this.modes = new Map(targets.map((target) => [target, 'ok']));
    this.sockets = new Map(targets.map((target) => [target, new Set()]));
  }

  /** The mode of a server name or `apps`; undefined for any other name. */
  mode(target: string): TargetMode | undefined {
    return this.modes.get(target);
  }

  /** The mode of a known target; a RangeError names the valid ones. */
  knownMode(target: string): TargetMode {
    const mode = this.modes.get(target);
    if (mode === undefined) throw this.unknown(target);
    return mode;
  }

  /** Switches a target (or every one, for `all`) and closes the connections of each that changed. */
  set(target: string, mode: TargetMode): void {
    for (const each of this.targetsOf(target)) {
      if (this.modes.get(each) === mode) continue;
      this.modes.set(each, mode);
      for (const socket of this.sockets.get(each) ?? []) socket.destroy();
    }
  }

  /** Remembers a connection to a target until it closes, so a switch can close it. */
  track(target: string, socket: net.Socket): void {
    const open = this.sockets.get(target);
    open?.add(socket);
    socket.once('close', () => open?.delete(socket));
  }

  /** Closes every connection to every target (held `timeout` requests included). */
  closeConnections(): void {
    for (const open of this.sockets.values()) for (const socket of open) socket.destroy();
  }

  /** Every target's mode, as status() reports it. */
  snapshot(): Record<string, TargetMode> {
    return Object.fromEntries(this.modes);
  }

  private targetsOf(target: string): string[] {
    if (target === ALL_TARGETS) return [...this.modes.keys()];
    if (!this.modes.has(target)) throw this.unknown(target);
    return [target];
  }

  private unknown(target: string): RangeError {
    return new RangeError(`failure target ${JSON.stringify(target)} ${targetHelp(this.servers.length)}`);
  }
}

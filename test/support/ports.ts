/**
 * Test-support helpers for real servers started by the test suites:
 * free loopback ports, plus a small "managed child process" wrapper shared by
 * `influxd.ts` and `mosquitto.ts` (spawn, output tail, graceful stop, and a
 * process-wide registry that kills every still-running child when the test
 * process exits so no server is ever leaked).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { accessSync, constants as fsConstants, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const LOOPBACK = '127.0.0.1';

/**
 * Test servers listen below the kernel's ephemeral range (Linux: 32768–60999), where the OS never
 * puts the local end of an outgoing connection: a server restarted on its port (an outage test)
 * cannot find it taken by some process's client socket in the meantime.
 */
const TEST_PORTS = { min: 20_000, max: 32_767 } as const;
const PROBES = 200;

const randomTestPort = (): number => TEST_PORTS.min + Math.floor(Math.random() * (TEST_PORTS.max - TEST_PORTS.min + 1));

/** Whether `port` can be bound on 127.0.0.1 right now (TCP or UDP); binds and closes at once. */
function bindable(port: number, udp: boolean): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    if (udp) {
      const socket = dgram.createSocket('udp4');
      socket.unref();
      socket.once('error', () => resolve(false));
      socket.bind(port, LOOPBACK, () => socket.close(() => resolve(true)));
      return;
    }
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ host: LOOPBACK, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

async function freeTestPort(udp: boolean): Promise<number> {
  for (let i = 0; i < PROBES; i++) {
    const port = randomTestPort();
    if (await bindable(port, udp)) return port;
  }
  throw new Error(
    `no free ${udp ? 'UDP' : 'TCP'} port on ${LOOPBACK} between ${TEST_PORTS.min} and ${TEST_PORTS.max} after ${PROBES} tries`,
  );
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return freeTestPort(false);
}

/** A UDP port on 127.0.0.1 that was free a moment ago. */
export function freeUdpPort(): Promise<number> {
  return freeTestPort(true);
}

/** `count` distinct free TCP ports (all probed while the others are still unknown to the OS, so no duplicates). */
export async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** Resolves true once a TCP connection to host:port succeeds, false on refusal/timeout. */
export function canConnect(port: number, host = LOOPBACK, timeoutMs = 1_000): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean): void => {
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Finds an executable by name on PATH plus extra directories (e.g. /usr/sbin, often missing from non-root PATHs). */
export function findExecutable(name: string, extraDirs: readonly string[] = []): string {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), ...extraDirs].filter((d) => d !== '');
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // not here, keep looking
    }
  }
  throw new Error(`executable '${name}' not found on PATH or in ${extraDirs.join(', ') || '(no extra dirs)'}`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `condition` holds, checking every 20 ms; throws naming `what` after `timeoutMs`. */
export async function until(what: string, condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

// ---------------------------------------------------------------------------------------------
// Managed child processes
// ---------------------------------------------------------------------------------------------

const liveChildren = new Set<ChildProcess>();
const tempDirs = new Set<string>();
let cleanupInstalled = false;

/** Registers a temp dir to be removed if the test process exits without the owning helper's stop(). */
export function registerTempDir(dir: string): void {
  installCleanup();
  tempDirs.add(dir);
}

export function unregisterTempDir(dir: string): void {
  tempDirs.delete(dir);
}

function removeTempDirsSync(): void {
  for (const dir of tempDirs) {
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
    } catch {
      // best effort at exit
    }
  }
  tempDirs.clear();
}

/** SIGKILL (after SIGCONT, in case it was paused: SIGKILL works either way, this is hygiene); false when it is already gone. */
function killNow(child: ChildProcess): boolean {
  try {
    child.kill('SIGCONT');
    return child.kill('SIGKILL');
  } catch {
    return false;
  }
}

function killAllChildrenSync(): void {
  for (const child of liveChildren) killNow(child);
  liveChildren.clear();
}

/**
 * Puts a child process a test started on the list of those stopped when the test file ends
 * (`stopLeftChildren`, a setup file's afterAll) or its worker exits: a test that fails before its
 * own stop still leaves nothing running. Returns the child.
 */
export function trackChild<C extends ChildProcess>(child: C): C {
  installCleanup();
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  return child;
}

/** SIGKILLs every tracked child still running and waits for each to exit (test/support/setup.ts). */
export async function stopLeftChildren(): Promise<number> {
  const left = [...liveChildren].filter((child) => child.exitCode === null && child.signalCode === null);
  await Promise.all(
    left.map(
      (child) =>
        new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          if (!killNow(child)) resolve();
        }),
    ),
  );
  return left.length;
}

function installCleanup(): void {
  if (cleanupInstalled) return;
  cleanupInstalled = true;
  // 'exit' covers normal exit, process.exit() and fatal uncaught exceptions. Only synchronous work is possible here.
  process.on('exit', () => {
    killAllChildrenSync();
    removeTempDirsSync();
  });
  // Signals do not emit 'exit' by default. Kill the children, and if nobody else handles the signal,
  // re-raise it so the default behaviour (terminate) still happens.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const handler = (): void => {
      killAllChildrenSync();
      removeTempDirsSync();
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, handler);
        process.kill(process.pid, signal);
      }
    };
    process.on(signal, handler);
  }
}

export interface ManagedProcess {
  readonly child: ChildProcess;
  readonly pid: number | undefined;
  /** Resolves (never rejects) when the process has exited and its output has been drained. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True until the 'exit' event has been seen. */
  isRunning(): boolean;
  /** Last lines of combined stdout+stderr (most recent last). */
  outputTail(lines?: number): string;
  /** SIGTERM (after SIGCONT, in case it is paused), wait, SIGKILL after `killAfterMs`. Idempotent. */
  stop(killAfterMs?: number): Promise<void>;
  /** SIGKILL and wait for exit (simulates a crash). Idempotent. */
  kill(): Promise<void>;
}

const MAX_OUTPUT_LINES = 200;

/** Spawns `command args` with piped output captured into a ring buffer and registers it for cleanup on exit. */
export function spawnManaged(command: string, args: readonly string[], cwd?: string): ManagedProcess {
  installCleanup();
  const child = spawn(command, [...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  let partial = '';
  const onData = (chunk: Buffer): void => {
    const text = partial + chunk.toString('utf8');
    const lines = text.split('\n');
    partial = lines.pop() ?? '';
    output.push(...lines);
    if (output.length > MAX_OUTPUT_LINES) output.splice(0, output.length - MAX_OUTPUT_LINES);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);

  let running = true;
  trackChild(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('error', (err) => {
      // spawn failure (ENOENT, EACCES): no 'exit' event follows
      output.push(`spawn error: ${err.message}`);
      if (child.pid === undefined) {
        running = false;
        liveChildren.delete(child);
        resolve({ code: null, signal: null });
      }
    });
    child.once('exit', () => {
      running = false;
      liveChildren.delete(child);
    });
    // 'close' comes after 'exit' once stdout/stderr are drained, so the output tail is complete.
    child.once('close', (code, signal) => {
      running = false;
      liveChildren.delete(child);
      resolve({ code, signal });
    });
  });

  const outputTail = (lines = 30): string => {
    const all = partial === '' ? output : [...output, partial];
    return all.slice(-lines).join('\n');
  };

  const stop = async (killAfterMs = 5_000): Promise<void> => {
    if (!running) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      if (running) child.kill('SIGKILL');
    }, killAfterMs);
    try {
      await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  const kill = async (): Promise<void> => {
    if (!running) return;
    child.kill('SIGKILL');
    await exited;
  };

  return {
    child,
    pid: child.pid,
    exited,
    isRunning: () => running,
    outputTail,
    stop,
    kill,
  };
}

/**
 * Polls `probe` until it returns true. Fails fast if the process exits, and fails with a clear error
 * (including the process output tail) after `timeoutMs`.
 */
export async function waitUntilReady(
  proc: ManagedProcess,
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs: number,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void proc.exited.then((info) => {
    exitInfo = info;
  });
  for (;;) {
    if (exitInfo !== undefined || !proc.isRunning()) {
      const info = exitInfo ?? (await proc.exited);
      throw new Error(
        `${what} exited before becoming ready (code=${String(info.code)}, signal=${String(info.signal)}).\n` +
          `--- last output ---\n${proc.outputTail()}`,
      );
    }
    if (await probe()) return;
    if (Date.now() >= deadline) {
      throw new Error(
        `${what} did not become ready within ${timeoutMs} ms.\n--- last output ---\n${proc.outputTail()}`,
      );
    }
    await sleep(intervalMs);
  }
}

/** True if the output looks like a bind conflict (port grabbed between freePort() and the server binding it). */
export function isAddressInUse(output: string): boolean {
  return /address already in use/i.test(output);
}

/**
 * A durable local queue in a child process (the built dist/ code): it opens a directory, sends the
 * given events, says "ready", and then holds the directory until it is killed. The crash and lock
 * tests kill it with SIGKILL, which no in-process stand-in can imitate: the operating system, not
 * Svc, then decides what is left behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { QueuedEvent } from '../../shared/queue/events.js';
import { REPO_ROOT } from './build.js';

export interface HolderGroup {
  name: string;
  batchSize?: number;
  batchWindowMs?: number;
  stableBatches?: boolean;
  /** Append the event ids of every delivered batch as one JSON line to this file. */
  recordTo?: string;
  /** SIGKILL the process after a batch was handed to the group and before its outcome is recorded. */
  crashBeforeSettle?: boolean;
  /**
   * SIGKILL the process as soon as the group's first outcome is recorded (the settle resolved),
   * long before the ack log's periodic sync.
   */
  crashAfterSettle?: boolean;
}

export interface HolderOptions {
  directory: string;
  groups?: HolderGroup[];
  /** Sent one `send` call each, in order, before "ready". */
  events?: QueuedEvent[];
  /** Wrap the command (e.g. `sh -c '… & exec sleep 60'` makes the holder a zombie when killed). */
  zombie?: boolean;
}

export interface Holder {
  child: ChildProcess;
  /** The holder's own PID (not the wrapper's). */
  pid: number;
  output: () => string;
  exited: Promise<number | null>;
}

const SCRIPT = `
import { appendFileSync } from 'node:fs';
const { LocalEventQueue } = await import(process.env.HOLDER_MODULE);
const options = JSON.parse(process.env.HOLDER_OPTIONS);
const say = (obj, msg) => process.stderr.write(msg + '\\n');
const log = { info: say, warn: say, error: say };
const crashing = new Set(options.groups.filter((g) => g.crashBeforeSettle).map((g) => g.name));
const groups = options.groups.map((g) => ({
  name: g.name,
  batchSize: g.batchSize ?? 10,
  batchWindowMs: g.batchWindowMs ?? 0,
  stableBatches: g.stableBatches ?? false,
  handler: async (event) => {
    if (g.recordTo) {
      const ids = event.Records.flatMap((r) => JSON.parse(r.body).events.map((e) => e.id));
      appendFileSync(g.recordTo, JSON.stringify(ids) + '\\n');
    }
    if (g.crashAfterSettle) {
      // The handler has returned; its outcome is recorded in a few event-loop turns: the kill follows
      // the first turn that sees it counted.
      const poll = () => (queue.stats()[g.name].delivered > 0 ? process.kill(process.pid, 'SIGKILL') : setImmediate(poll));
      setImmediate(poll);
    }
    if (!g.recordTo && !g.crashBeforeSettle && !g.crashAfterSettle) return new Promise(() => undefined); // holds every batch
    return { batchItemFailures: [] };
  },
}));
const queue = new LocalEventQueue({
  directory: options.directory, capacity: 1000000, maxReceiveCount: 5, groups, log,
  beforeSettle: (group) => { if (crashing.has(group)) process.kill(process.pid, 'SIGKILL'); },
});
await queue.start();
for (const event of options.events) await queue.send([event]);
process.stdout.write('ready ' + process.pid + '\\n');
setInterval(() => undefined, 1 << 30);
`;

/** Starts a holder process; see `startQueueHolder` to wait until it holds the directory. */
export function spawnQueueHolder(options: HolderOptions): {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
} {
  const env = {
    ...process.env,
    HOLDER_MODULE: pathToFileURL(join(REPO_ROOT, 'dist/shared/queue/local/index.js')).href,
    HOLDER_OPTIONS: JSON.stringify({
      directory: options.directory,
      groups: options.groups ?? [],
      events: options.events ?? [],
    }),
  };
  const node = [process.execPath, '--input-type=module', '-e', SCRIPT];
  // As a zombie: the holder's parent becomes `sleep`, which never reaps it.
  const child = options.zombie
    ? spawn('sh', ['-c', `"$0" "$@" & exec sleep 120`, ...node], { env })
    : spawn(node[0] ?? process.execPath, node.slice(1), { env });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, output: () => out, exited };
}

/** Starts a holder and waits until it holds the directory (and has sent its events). */
export async function startQueueHolder(options: HolderOptions): Promise<Holder> {
  const { child, output, exited } = spawnQueueHolder(options);
  const started = Date.now();
  for (;;) {
    const pid = /ready (\d+)/.exec(output())?.[1];
    if (pid) return { child, pid: Number(pid), output, exited };
    if (child.exitCode !== null || child.signalCode !== null || Date.now() - started > 20_000)
      throw new Error(`the queue holder did not start:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

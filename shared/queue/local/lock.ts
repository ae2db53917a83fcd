/**
 * One process per queue directory, held by a lock that the operating system releases when its
 * holder dies, however it dies (`kill -9`, a crash, a zombie that is never reaped). The lock is a
 * listening local socket whose name is derived from the directory:
 *
 *   Linux     an abstract Unix socket (`\0svc-queue-lock-<device>-<inode>`): no file, so nothing stale
 *             is left behind; the kernel frees the name when the last descriptor closes, which
 *             happens when the process exits, before it is a zombie.
 *   Windows   a named pipe (`\\.\pipe\svc-queue-lock-<hash of the resolved path>`), freed the same way.
 *   others    a Unix socket file `lock.sock` in the directory; a file nobody listens on is stale and
 *             is replaced.
 *
 * Why not a PID file: `kill(pid, 0)` is true for a zombie and for any unrelated process that got
 * the same PID (after a reboot, or in a container whose init does not reap), so a crashed holder
 * could block every restart. Why not an OS file lock (flock/LockFileEx): Node has no API for it,
 * and the npm packages that add one are native addons that need a compiler on Windows.
 *
 * A contender that finds the name taken connects to it: a live holder answers with its PID, and
 * the contender is refused with that PID in the message. The PID is also written to `lock` in the
 * directory, for people; it decides nothing.
 *
 * Limit: on Linux the abstract namespace belongs to a network namespace, so two containers with
 * separate network namespaces that mount the same queue volume do not see each other's lock. Give
 * every Svc its own queue directory (docs/operations.md).
 */
import { createHash } from 'node:crypto';
import { realpathSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { writeFileSynced } from '../../util/files.js';

/** The queue directory is held by another live process. */
export class QueueLockedError extends Error {
  override readonly name = 'QueueLockedError';
  constructor(
    readonly directory: string,
    readonly holderPid: number | null,
  ) {
    super(
      holderPid === null
        ? `the queue directory ${directory} is in use by another process that does not answer (is another Svc, or \`svc dlq replay\`, running on it?)`
        : `the queue directory ${directory} is in use by process ${holderPid} (another Svc, or \`svc dlq replay\`; stop it first)`,
    );
  }
}

export const LOCK_INFO_FILE = 'lock';
const SOCKET_FILE = 'lock.sock';
/** How long a contender waits for the holder's answer. */
const ANSWER_TIMEOUT_MS = 1000;
/** A holder that accepts but does not answer may be dying (`kill -9` just sent): try again for this long. */
const DYING_GRACE_MS = 3000;

/** The platform's name for the lock of `directory` (exported for tests). */
export function lockAddress(directory: string, platform: NodeJS.Platform = process.platform): string {
  if (platform === 'win32') {
    const hash = createHash('sha256').update(realpathSync.native(directory).toLowerCase()).digest('hex').slice(0, 40);
    return `\\\\.\\pipe\\svc-queue-lock-${hash}`;
  }
  if (platform === 'linux') {
    // Device and inode name the directory itself, whatever path (symlink, bind mount) leads to it.
    const { dev, ino } = statSync(directory, { bigint: true });
    return `\0svc-queue-lock-${dev}-${ino}`;
  }
  return join(directory, SOCKET_FILE);
}

function errorCode(err: unknown): string | undefined {
  return err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
}

function listen(address: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.end(`${JSON.stringify({ pid: process.pid })}\n`);
    });
    server.once('error', reject);
    server.listen({ path: address, exclusive: true }, () => {
      server.removeListener('error', reject);
      server.unref(); // the lock never keeps the process alive on its own
      resolve(server);
    });
  });
}

type Probe = { state: 'live'; pid: number | null } | { state: 'silent' } | { state: 'gone' };

/** Asks whoever listens on `address` for its PID. */
function probe(address: string): Promise<Probe> {
  return new Promise((resolve) => {
    let text = '';
    let connected = false;
    const socket = connect({ path: address });
    const finish = (result: Probe) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(connected ? { state: 'silent' } : { state: 'gone' }), ANSWER_TIMEOUT_MS);
    socket.on('connect', () => (connected = true));
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    socket.on('end', () => {
      const pid = /"pid":(\d+)/.exec(text)?.[1];
      finish(
        pid === undefined ? (connected ? { state: 'silent' } : { state: 'gone' }) : { state: 'live', pid: Number(pid) },
      );
    });
    socket.on('error', () => finish({ state: 'gone' }));
  });
}

/** A held lock; `release()` frees it (exit frees it too). */
export class QueueLock {
  private constructor(
    private readonly directory: string,
    private server: Server | undefined,
  ) {}

  /**
   * Takes the lock of `directory` or throws QueueLockedError naming the live holder. (`platform`
   * lets the tests run the socket-file variant on Linux.)
   */
  static async acquire(directory: string, platform: NodeJS.Platform = process.platform): Promise<QueueLock> {
    const address = lockAddress(directory, platform);
    const giveUpAt = Date.now() + DYING_GRACE_MS;
    for (;;) {
      try {
        const server = await listen(address);
        writeFileSynced(join(directory, LOCK_INFO_FILE), `${process.pid}\n`);
        return new QueueLock(directory, server);
      } catch (err) {
        if (errorCode(err) !== 'EADDRINUSE') throw err;
      }
      const found = await probe(address);
      if (found.state === 'live') throw new QueueLockedError(directory, found.pid);
      if (found.state === 'gone' && address.endsWith(SOCKET_FILE)) {
        // A socket file nobody listens on: its holder died. (Abstract names and pipes vanish by themselves.)
        try {
          unlinkSync(address);
        } catch {
          // Someone else removed it first; the next listen decides.
        }
      }
      if (Date.now() >= giveUpAt) throw new QueueLockedError(directory, null);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  }

  async release(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(join(this.directory, LOCK_INFO_FILE), { force: true });
  }
}

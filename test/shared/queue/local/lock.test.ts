/**
 * The queue directory's lock: a crashed holder never blocks a start (killed, a zombie, or a PID that
 * now belongs to another program), and a live holder is never taken over. Holders are real child
 * processes killed with SIGKILL.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { LOCK_INFO_FILE, lockAddress, QueueLock, QueueLockedError } from '../../../../shared/queue/local/lock.js';
import { auditQueued } from '../../../support/audit.js';
import { REPO_ROOT } from '../../../support/build.js';
import { silentLog } from '../../../support/log.js';
import { trackChild } from '../../../support/ports.js';
import { type Holder, startQueueHolder } from '../../../support/queue-holder.js';

const silent = silentLog;
const dir = () => mkdtempSync(join(tmpdir(), 'queue-lock-'));
const holders: Holder[] = [];

afterEach(() => {
  for (const h of holders.splice(0)) {
    h.child.kill('SIGKILL');
    try {
      process.kill(h.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

async function hold(directory: string, options: { zombie?: boolean; events?: number } = {}): Promise<Holder> {
  const holder = await startQueueHolder({
    directory,
    groups: [{ name: 'g' }],
    events: Array.from({ length: options.events ?? 0 }, () => auditQueued()),
    ...(options.zombie ? { zombie: true } : {}),
  });
  holders.push(holder);
  return holder;
}

function processState(pid: number): string | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) S ..." — the state letter follows the command name.
    return /\) (\S)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
  } catch {
    return undefined;
  }
}

describe('queue directory lock', () => {
  it('refuses a second live process and names the holder, then lets go when the holder stops', async () => {
    const directory = dir();
    const holder = await hold(directory);
    const refused = Journal.open(directory, ['g'], silent);
    await expect(refused).rejects.toThrow(QueueLockedError);
    await expect(refused).rejects.toThrow(`in use by process ${holder.pid}`);
    expect(readFileSync(join(directory, LOCK_INFO_FILE), 'utf8').trim()).toBe(String(holder.pid));

    // In-process too: a second queue on a directory this process holds is refused.
    holder.child.kill('SIGKILL');
    await holder.exited;
    const first = new LocalEventQueue({ directory, capacity: 10, maxReceiveCount: 3, groups: [], log: silent });
    await first.start();
    await expect(
      new LocalEventQueue({ directory, capacity: 10, maxReceiveCount: 3, groups: [], log: silent }).start(),
    ).rejects.toThrow(`in use by process ${process.pid}`);
    await first.stop();
    expect(existsSync(join(directory, LOCK_INFO_FILE))).toBe(false);
    const again = await Journal.open(directory, ['g'], silent);
    await again.close();
  });

  it('starts at once after kill -9 of the holder, every time, with every event it had queued', async () => {
    const directory = dir();
    for (let round = 1; round <= 5; round++) {
      const holder = await hold(directory, { events: 1 });
      holder.child.kill('SIGKILL');
      // No wait for the exit: the restart follows the kill immediately (a service manager's restart).
      const journal = await Journal.open(directory, ['g'], silent);
      expect(journal.groups.get('g')?.pending.size).toBe(round);
      await journal.close();
      await holder.exited;
    }
  });

  it.runIf(process.platform === 'linux')(
    'is not held by a zombie: a killed holder that its parent never reaps',
    async () => {
      const directory = dir();
      const holder = await hold(directory, { zombie: true, events: 2 });
      process.kill(holder.pid, 'SIGKILL');
      await expect.poll(() => processState(holder.pid), { timeout: 5000 }).toBe('Z');
      // kill(pid, 0) still succeeds for a zombie: the old PID-file lock refused to start here.
      expect(() => process.kill(holder.pid, 0)).not.toThrow();
      const journal = await Journal.open(directory, ['g'], silent);
      expect(journal.groups.get('g')?.pending.size).toBe(2);
      await journal.close();
    },
  );

  it('is not held by a lock file naming a live process that is not Svc (a reused PID)', async () => {
    const directory = dir();
    const unrelated = spawn('sleep', ['30']);
    trackChild(unrelated);
    try {
      writeFileSync(join(directory, LOCK_INFO_FILE), `${unrelated.pid ?? 1}\n`);
      const journal = await Journal.open(directory, ['g'], silent);
      await journal.close();
      writeFileSync(join(directory, LOCK_INFO_FILE), '1\n'); // init: always alive
      const again = await Journal.open(directory, ['g'], silent);
      await again.close();
    } finally {
      unrelated.kill('SIGKILL');
    }
  });

  it('refuses `svc dlq replay` while Svc holds the queue, naming the holder', async () => {
    const cwd = dir();
    const directory = join(cwd, 'queue');
    writeFileSync(join(cwd, 'svc.yaml'), `Svc:\n  localQueue:\n    directory: queue\n`);
    const holder = await hold(directory);
    const run = spawnSync(join(REPO_ROOT, 'node_modules/.bin/svc'), ['dlq', 'replay', '--config', 'svc.yaml'], {
      cwd,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '' },
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`in use by process ${holder.pid}`);
  });

  it('names the lock after the directory itself on Linux, after its resolved path on Windows', () => {
    const a = dir();
    expect(lockAddress(a, 'linux')).toMatch(/^\0svc-queue-lock-\d+-\d+$/);
    expect(lockAddress(a, 'linux')).not.toBe(lockAddress(dir(), 'linux'));
    expect(lockAddress(a, 'win32')).toMatch(/^\\\\\.\\pipe\\svc-queue-lock-[0-9a-f]{40}$/);
    expect(lockAddress(a, 'darwin')).toBe(join(a, 'lock.sock'));
  });

  it('with a socket file (other POSIX systems): refuses a live holder, takes over the file a killed holder left', async () => {
    const directory = dir();
    const socketFile = join(directory, 'lock.sock');
    // A holder in another process, with the socket-file variant, killed so that its file stays.
    const script = `const { QueueLock } = await import(${JSON.stringify(pathToFileURL(join(REPO_ROOT, 'dist/shared/queue/local/lock.js')).href)});
await QueueLock.acquire(${JSON.stringify(directory)}, 'darwin'); process.stdout.write('held'); setInterval(() => {}, 1 << 30);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script]);
    trackChild(child);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await expect.poll(() => out, { timeout: 10_000 }).toBe('held');
    await expect(QueueLock.acquire(directory, 'darwin')).rejects.toThrow(`in use by process ${child.pid}`);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    expect(existsSync(socketFile)).toBe(true);
    const lock = await QueueLock.acquire(directory, 'darwin');
    await lock.release();
  });
});

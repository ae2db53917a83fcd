/**
 * The acknowledgement logs, one per consumer group: its leases and delivery outcomes, written as
 * each delivery ends WITHOUT a sync of their own and fdatasynced at most once per ACK_SYNC_MS, and
 * at close (index.ts, "Syncs", says why that is enough).
 */
import type { Log } from '../../logging/log.js';
import { AppendLog, type Chunk, GroupCommit } from './append-log.js';
import { ackLogPath } from './records.js';

/**
 * The ack logs' sync interval: a written but unsynced lease or outcome is on disk at most this long
 * after it was written (bar a failing disk), the redelivery window after a power loss
 * (docs/operations.md "What a crash or a power loss costs").
 */
export const ACK_SYNC_MS = 1000;

/** The ack logs of a journal's groups, and their periodic sync. */
export class AckLogs {
  private readonly commits = new Map<string, GroupCommit>();
  private readonly logs = new Map<string, AppendLog>();
  /** Ack logs written to since their last sync. */
  private readonly unsynced = new Set<AppendLog>();
  private syncTimer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  /** Ack writes so far, and how many of them the last finished sync covered (see synced). */
  private writes = 0;
  private writesSynced = 0;
  private syncWaiters: { upTo: number; resolve: () => void }[] = [];
  /** fdatasyncs of ack logs done so far (the periodic ones and close's). */
  syncs = 0;

  private constructor(private readonly log: Log) {}

  /** Opens (or creates) the ack log of each group in `dir`. */
  static async open(dir: string, groupNames: readonly string[], log: Log): Promise<AckLogs> {
    const acks = new AckLogs(log);
    for (const name of groupNames) {
      // Not O_DSYNC: written per delivery, synced per ACK_SYNC_MS.
      acks.logs.set(name, await AppendLog.open(ackLogPath(dir, name)));
      acks.commits.set(name, new GroupCommit((data) => acks.write(name, data)));
    }
    return acks;
  }

  /** Whether `group` has an ack log here. */
  has(group: string): boolean {
    return this.commits.has(group);
  }

  /** Appends framed lines to the ack log of `group`; resolves once written (not synced). */
  add(group: string, lines: Chunk): Promise<void> {
    const commit = this.commits.get(group);
    if (!commit) throw new Error(`unknown consumer group ${group}`);
    return commit.add(lines);
  }

  /**
   * Writes ack lines without a sync: resolved once written, so a process crash keeps them; the file
   * is synced by the next periodic sync. A failed write is rolled back and rejects as before
   * (QueueStorageError: a full disk is a failed write, not a failed sync, on tmpfs and ext4 alike).
   */
  private async write(group: string, data: Chunk[]): Promise<void> {
    const log = this.logs.get(group);
    if (!log) throw new Error(`unknown consumer group ${group}`);
    await log.append(data, { sync: false });
    this.writes += 1;
    this.unsynced.add(log);
    // Unref'd: a pending sync never keeps the process alive (close syncs; a crash keeps the page cache).
    this.syncTimer ??= setTimeout(() => void this.sync(), ACK_SYNC_MS).unref();
  }

  /** fdatasyncs every ack log written to since its last sync; one sync at a time. */
  private sync(): Promise<void> {
    this.syncing ??= this.runSync().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async runSync(): Promise<void> {
    if (this.syncTimer !== undefined) clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    const upTo = this.writes;
    const logs = [...this.unsynced];
    this.unsynced.clear();
    for (const log of logs) {
      try {
        await log.sync();
        this.syncs += 1;
      } catch (err) {
        // Linux may drop the failed pages' error state after reporting it, so a retry can "succeed"
        // without the data: say it loudly. The lines stay written for this process; at worst a power
        // loss now redelivers their messages.
        const code = err instanceof Error && 'code' in err && typeof err.code === 'string' ? err.code : String(err);
        this.log.error(
          { file: log.path, err },
          `cannot sync the acknowledgement log ${log.path} (${code}); after a power loss its recent messages may be delivered again, which the destinations tolerate`,
        );
      }
    }
    this.writesSynced = upTo;
    const waiters = this.syncWaiters;
    this.syncWaiters = waiters.filter((w) => w.upTo > upTo);
    for (const w of waiters) if (w.upTo <= upTo) w.resolve();
  }

  /**
   * Resolves once every ack line written before the call went through a sync (the periodic one: this
   * does not start one; a failed sync is logged and counts as done).
   */
  synced(): Promise<void> {
    const upTo = this.writes;
    if (this.writesSynced >= upTo) return Promise.resolve();
    return new Promise((resolve) => {
      this.syncWaiters.push({ upTo, resolve });
    });
  }

  /** Waits for the writes under way, then syncs whatever the last periodic sync did not take: a clean stop redelivers nothing. */
  async flush(): Promise<void> {
    for (const commit of this.commits.values()) await commit.idle();
    await this.syncing;
    await this.sync();
  }

  /** Closes the logs (after `flush`). */
  async close(): Promise<void> {
    for (const log of this.logs.values()) await log.close();
  }
}

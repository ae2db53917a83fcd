/**
 * The journal's files as append logs: every record framed with its length and checksum, damage found
 * around good records, O_DSYNC writes, unsynced appends written at once, and a full filesystem
 * rolled back (a real tmpfs).
 */
import { pbkdf2 } from 'node:crypto';
import {
  closeSync,
  constants as fsConstants,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodePacked } from '../../../../shared/queue/codec.js';
import { AppendLog, frame, frameBytes, frameText, scanRecords } from '../../../../shared/queue/local/append-log.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { QueueStorageError } from '../../../../shared/queue/port.js';
import { auditQueued } from '../../../support/audit.js';
import { dir, segmentOf } from '../../../support/local-queue.js';
import { recordingLog } from '../../../support/log.js';
import { mountTmpfs, type Tmpfs } from '../../../support/tmpfs.js';

const capture = recordingLog;

describe('framed records', () => {
  it('frames a record as length, crc32 and payload, and reads it back', () => {
    expect(frame('a 12')).toMatch(/^4 [0-9a-f]{8} a 12\n$/);
    const text = frame('{"x":"é"}') + frame('second');
    expect(scanRecords(Buffer.from(text))).toEqual({
      payloads: ['{"x":"é"}', 'second'],
      damaged: [],
      completeBytes: Buffer.byteLength(text),
      totalBytes: Buffer.byteLength(text),
    });
  });

  it('frames a payload given as a text head and a byte body exactly as the whole text', () => {
    for (const body of ['{"x":"é"}', '', '{"e":"😀\\u0000;"}']) {
      expect(Buffer.concat(frameBytes('m 12 3 ', Buffer.from(body)))).toEqual(Buffer.from(frame(`m 12 3 ${body}`)));
    }
  });

  it('frames a text head and body into one buffer exactly as the whole text, and says where the body is in it', () => {
    for (const body of ['{"x":"é"}', '', '{"e":"😀\\u0000;"}', 'y'.repeat(70_000)]) {
      const { data, bodyAt } = frameText('m 12 3 ', body);
      expect(data).toEqual(Buffer.from(frame(`m 12 3 ${body}`)));
      expect(data.subarray(bodyAt, data.length - 1).toString('utf8')).toBe(body);
    }
  });

  it('frames a body given as UTF-8 parts exactly as the same body given as text', () => {
    const bodies: string[][] = [['{"x":"é"}'], [], ['{"e":"😀', '\\u0000;"}', ''], ['y'.repeat(70_000), 'z']];
    for (const parts of bodies) {
      const { data, bodyAt } = frameText(
        'm 12 3 ',
        parts.map((p) => Buffer.from(p)),
      );
      expect(data).toEqual(frameText('m 12 3 ', parts.join('')).data);
      expect(data.subarray(bodyAt, data.length - 1).toString('utf8')).toBe(parts.join(''));
    }
  });

  it('finds a flipped byte, a wrong length and a line glued onto half a record as damage, and keeps the records around them', () => {
    const good = [frame('one'), frame('two'), frame('three'), frame('four')];
    const flipped = good[1]?.replace('two', 'twx') ?? '';
    const text = good[0] + flipped + good[2]?.slice(0, 7) + good[3] + frame('five');
    const scan = scanRecords(Buffer.from(text));
    expect(scan.payloads).toEqual(['one', 'five']);
    // The flipped record and the half record glued to the next one: adjacent lines, one region.
    expect(scan.damaged).toEqual([
      {
        offset: Buffer.byteLength(good[0] ?? ''),
        bytes: Buffer.byteLength(flipped + (good[2]?.slice(0, 7) ?? '') + good[3]),
      },
    ]);
  });
});

/** Jobs that hold every thread of libuv's pool for a while (key derivations); resolves when they are done. */
function occupyThreadPool(): Promise<void> {
  const threads = Number(process.env.UV_THREADPOOL_SIZE) || 4;
  return Promise.all(
    Array.from(
      { length: threads * 2 },
      () =>
        new Promise<void>((resolve, reject) =>
          pbkdf2('p', 's', 200_000, 32, 'sha256', (err) => (err ? reject(err) : resolve())),
        ),
    ),
  ).then(() => undefined);
}

describe('AppendLog opened with O_DSYNC', () => {
  /** The open flags of this process's descriptor of `path` (/proc/self/fdinfo). */
  function flagsOf(path: string): number {
    for (const fd of readdirSync('/proc/self/fd')) {
      let target = '';
      try {
        target = readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        continue;
      }
      if (target !== path) continue;
      const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags !== undefined) return parseInt(flags, 8);
    }
    throw new Error(`no descriptor of ${path}`);
  }

  it('writes through O_DSYNC when asked (each write durable when it returns, no separate fdatasync), and the journal asks for it for its segments only', async () => {
    const directory = dir();
    const plain = await AppendLog.open(join(directory, 'plain.log'));
    const synced = await AppendLog.open(join(directory, 'dsync.log'), { dsync: true });
    expect(flagsOf(join(directory, 'plain.log')) & fsConstants.O_DSYNC).toBe(0);
    expect(flagsOf(join(directory, 'dsync.log')) & fsConstants.O_DSYNC).toBe(fsConstants.O_DSYNC);
    await synced.append(frame('one'));
    await synced.append([frame('two'), Buffer.from(frame('three'))]);
    // Buffers only: one writev, in order; more than one writev takes (IOV_MAX): one copy.
    const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => `r${from + i}`);
    await synced.append(many(0, 3).map((p) => Buffer.from(frame(p))));
    await synced.append(many(3, 1500).map((p) => Buffer.from(frame(p))));
    expect(scanRecords(readFileSync(join(directory, 'dsync.log'))).payloads).toEqual([
      'one',
      'two',
      'three',
      ...many(0, 1503),
    ]);
    expect(synced.size).toBe(statSync(join(directory, 'dsync.log')).size);
    await plain.close();
    await synced.close();

    const journalDir = dir();
    const journal = await Journal.open(journalDir, ['g'], capture().log);
    const e = auditQueued();
    await journal.append(encodePacked([e]), 1);
    const files = readdirSync(journalDir).filter((f) => f.startsWith('segment-') || f.startsWith('acks-'));
    expect(files.length).toBe(2);
    // The segment carries the 202's promise; the ack log is synced periodically instead (local/index.ts, "Syncs").
    expect(flagsOf(segmentOf(journalDir)) & fsConstants.O_DSYNC).toBe(fsConstants.O_DSYNC);
    expect(flagsOf(join(journalDir, 'acks-g.log')) & fsConstants.O_DSYNC).toBe(0);
    await journal.close();
  });

  it('counts its synced message writes, the records and the bytes they carried: appends made together share one write, and those made while it is in flight the next', async () => {
    const directory = dir();
    const journal = await Journal.open(directory, ['g'], capture().log);
    await journal.append(encodePacked([auditQueued()]), 1);
    expect(journal.segmentWrites).toEqual({ writes: 1, records: 1, bytes: statSync(segmentOf(directory)).size });
    // Five made in one turn (as the event batcher's round makes its messages): one write.
    await Promise.all(Array.from({ length: 5 }, () => journal.append(encodePacked([auditQueued()]), 1)));
    expect(journal.segmentWrites).toEqual({ writes: 2, records: 6, bytes: statSync(segmentOf(directory)).size });
    // Two while that write runs: the next one.
    const first = journal.append(encodePacked([auditQueued()]), 1);
    await new Promise<void>((resolve) => setImmediate(resolve));
    await Promise.all([
      first,
      journal.append(encodePacked([auditQueued()]), 1),
      journal.append(encodePacked([auditQueued()]), 1),
    ]);
    expect(journal.segmentWrites).toEqual({ writes: 4, records: 9, bytes: statSync(segmentOf(directory)).size });
    await journal.close();
  });

  it('writes an unsynced append (an ack line) before append returns, not later from the thread pool', async () => {
    const directory = dir();
    const path = join(directory, 'acks.log');
    const log = await AppendLog.open(path);
    // Every thread of libuv's pool busy meanwhile, so a write handed to the pool cannot have happened
    // by the time this thread reads the file (a deterministic check, not a race).
    const busy = occupyThreadPool();
    const pending = log.append(frame('a 1'), { sync: false });
    // Read before awaiting anything: the bytes are already in the file.
    expect(scanRecords(readFileSync(path)).payloads).toEqual(['a 1']);
    await pending;
    const both = log.append([Buffer.from(frame('a 2')), Buffer.from(frame('f 3'))], { sync: false });
    expect(scanRecords(readFileSync(path)).payloads).toEqual(['a 1', 'a 2', 'f 3']);
    await both;
    expect(log.size).toBe(statSync(path).size);
    await log.append(frame('a 4'));
    expect(scanRecords(readFileSync(path)).payloads).toEqual(['a 1', 'a 2', 'f 3', 'a 4']);

    // The journal's settle: the outcome line is in the ack log as soon as settle is called.
    const journalDir = dir();
    const journal = await Journal.open(journalDir, ['g'], capture().log);
    const record = await journal.append(encodePacked([auditQueued()]), 1);
    const busyAgain = occupyThreadPool();
    const settled = journal.settle('g', [record.seq], [], []);
    expect(scanRecords(readFileSync(join(journalDir, 'acks-g.log'))).payloads).toEqual([`a ${record.seq}`]);
    await settled;
    await Promise.all([busy, busyAgain]);
    await journal.close();
    await log.close();
  });
});

/**
 * A real small filesystem, mounted by the test (root only): the kernel's own ENOSPC and short
 * writes, which no stand-in reproduces faithfully.
 */
describe('AppendLog on a full filesystem (tmpfs)', () => {
  let fs: Tmpfs;
  beforeAll(() => {
    fs = mountTmpfs('64k', 'the full-filesystem journal tests');
  });
  afterAll(() => fs.unmount());

  it.for([
    [false, true],
    [true, true],
    // Unsynced: written on the calling thread (writeSync/writevSync), rolled back the same way.
    [false, false],
  ] as const)(
    'rolls a short or failed write back to the last whole record, refuses with QueueStorageError, and goes on once there is room (O_DSYNC %s, synced %s)',
    async ([dsync, sync], { skip }) => {
      if (fs.reason) skip(fs.reason);
      const mount = fs.path;
      const path = join(mount, 'log');
      rmSync(path, { force: true });
      const log = await AppendLog.open(path, { dsync });
      await log.append(frame('first'));
      const good = statSync(path).size;
      // Leave less room than the next record needs (64 KiB: the log's page, 48 KiB of filler, 12 KiB
      // free): the kernel writes part of it, then answers ENOSPC.
      const filler = join(mount, 'filler');
      writeFileSync(filler, Buffer.alloc(48 * 1024));
      const big = frame('x'.repeat(16 * 1024));
      await expect(log.append(big, { sync })).rejects.toThrow(QueueStorageError);
      await expect(log.append(big, { sync })).rejects.toThrow(/ENOSPC/);
      expect(statSync(path).size).toBe(good);
      // The same as buffers (one writev): written in part, then rolled back.
      await expect(log.append([Buffer.from(frame('y'.repeat(8 * 1024))), Buffer.from(big)], { sync })).rejects.toThrow(
        /ENOSPC/,
      );
      expect(statSync(path).size).toBe(good);
      expect(log.size).toBe(good);

      rmSync(filler);
      await log.append(frame('after'));
      await log.close();
      const scan = scanRecords(readFileSync(path));
      expect(scan.payloads).toEqual(['first', 'after']);
      expect(scan.damaged).toEqual([]);
      expect(scan.completeBytes).toBe(scan.totalBytes);
    },
  );
  it('an outcome that cannot be written (ENOSPC) is not recorded: the fault is reported, and the message is delivered again and acknowledged once there is room', async ({
    skip,
  }) => {
    if (fs.reason) skip(fs.reason);
    const directory = join(fs.path, 'outcome-queue');
    rmSync(directory, { recursive: true, force: true });
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const deliveries: string[][] = [];
    const handler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
      deliveries.push(event.Records.map((r) => r.messageId));
      await gate;
      return { batchItemFailures: [] };
    };
    const { lines, log } = capture();
    const queue = new LocalEventQueue({
      directory,
      capacity: 100,
      maxReceiveCount: 5,
      log,
      groups: [{ name: 'g', handler, batchSize: 10, batchWindowMs: 0 }],
    });
    await queue.start();
    await queue.send([auditQueued()]);
    await expect.poll(() => deliveries.length).toBe(1);
    // The message is on disk and handed over; now the filesystem fills up, to the last page.
    const filler = join(fs.path, 'outcome-filler');
    const fd = openSync(filler, 'w');
    try {
      for (;;) writeSync(fd, Buffer.alloc(4096));
    } catch (err) {
      expect(err).toMatchObject({ code: 'ENOSPC' });
    } finally {
      closeSync(fd);
    }
    release();
    await expect.poll(() => queue.storageFault).toMatchObject({ log: 'outcomes', code: 'ENOSPC' });
    expect(lines.some((l) => l.level === 'error' && /cannot record the outcome of a delivery/.test(l.msg))).toBe(true);
    expect(queue.stats()['g']).toMatchObject({ pending: 1, delivered: 0 });
    expect(scanRecords(readFileSync(join(directory, 'acks-g.log'))).payloads).toEqual([]);

    rmSync(filler);
    await expect.poll(() => queue.stats()['g']?.delivered, { timeout: 15_000 }).toBe(1);
    expect(deliveries).toEqual([['1'], ['1']]);
    expect(queue.storageFault).toBeNull();
    expect(scanRecords(readFileSync(join(directory, 'acks-g.log'))).payloads).toEqual(['a 1']);
    await queue.stop();
  });
});

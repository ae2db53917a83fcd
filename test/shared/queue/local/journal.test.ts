/**
 * The journal's files on disk: every record framed with its length and checksum, a torn tail cut,
 * damage in the middle reported and skipped with the records after it recovered, the format of
 * older versions still read, a full filesystem rolled back (a real tmpfs), and a batch that a crash
 * left unsettled delivered again exactly as it was.
 */

import { pbkdf2 } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  constants as fsConstants,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gcFunction } from '../../../../edge-agent/runtime/settle.js';
import { decodeMessage, encodePacked } from '../../../../shared/queue/codec.js';
import { AppendLog, frame, frameBytes, frameText, scanRecords } from '../../../../shared/queue/local/append-log.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { QueueStorageError } from '../../../../shared/queue/port.js';
import { auditQueued } from '../../../support/audit.js';
import { recordingLog } from '../../../support/log.js';
import { spawnQueueHolder, startQueueHolder } from '../../../support/queue-holder.js';
import { mountTmpfs, type Tmpfs } from '../../../support/tmpfs.js';

const dir = () => mkdtempSync(join(tmpdir(), 'journal-'));

const capture = recordingLog;

function segmentOf(directory: string): string {
  const name = readdirSync(directory).find((f) => f.startsWith('segment-'));
  if (!name) throw new Error('no segment');
  return join(directory, name);
}

function idsIn(journal: Journal, group = 'g'): string[] {
  return [...(journal.groups.get(group)?.pending.values() ?? [])].flatMap(({ record }) => {
    const decoded = decodeMessage(record.body);
    return decoded.ok && 'events' in decoded.message ? decoded.message.events.map((e) => e.id) : [];
  });
}

/** A queue in a child process that sends `events` and is then killed with SIGKILL. */
async function crashAfterQueueing(directory: string, count: number) {
  const events = Array.from({ length: count }, () => auditQueued());
  const holder = await startQueueHolder({ directory, groups: [{ name: 'g' }], events });
  holder.child.kill('SIGKILL');
  await holder.exited;
  return events.map((e) => e.id);
}

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

describe('Journal on disk', () => {
  it('cuts a torn last record (a write a crash interrupted) and delivers everything before it', async () => {
    const directory = dir();
    const ids = await crashAfterQueueing(directory, 2);
    const segment = segmentOf(directory);
    const size = statSync(segment).size;
    appendFileSync(segment, frame(JSON.stringify({ s: 99, n: 1, b: 'x' })).slice(0, 20));
    const { lines, log } = capture();
    const journal = await Journal.open(directory, ['g'], log);
    expect(idsIn(journal)).toEqual(ids);
    expect(journal.damage).toEqual({ records: 0, bytes: 0, ackLines: 0 });
    expect(lines.filter((l) => l.level !== 'info')).toEqual([]);
    expect(statSync(segment).size).toBe(size);
    await journal.close();
  });

  it('reports a damaged record in the middle loudly with its offset, keeps a copy, and recovers the records after it', async () => {
    const directory = dir();
    const ids = await crashAfterQueueing(directory, 3);
    const segment = segmentOf(directory);
    const data = readFileSync(segment);
    const second = data.indexOf(0x0a) + 1;
    const flip = second + 40;
    data[flip] = (data[flip] ?? 0) ^ 0x01;
    writeFileSync(segment, data);

    const { lines, log } = capture();
    const journal = await Journal.open(directory, ['g'], log);
    expect(idsIn(journal)).toEqual([ids[0], ids[2]]);
    expect(journal.damage.records).toBe(1);
    const report = lines.find((l) => l.level === 'error');
    expect(report?.msg).toContain(`1 damaged record(s) at byte ${second}`);
    expect(report?.msg).toContain('NOT delivered');
    expect(report?.obj).toMatchObject({ file: segment, offset: second });
    const copies = readdirSync(join(directory, 'damaged'));
    expect(copies).toEqual([`${segment.split('/').pop()}.${second}.bin`]);
    expect(readFileSync(join(directory, 'damaged', copies[0] ?? '')).length).toBe(
      data.indexOf(0x0a, second) + 1 - second,
    );
    await journal.close();
  });

  it('holds the events of its most recent appends for the consumers in this process (about 8 MiB of bodies), not of older ones, and never of records read from disk', async () => {
    const directory = dir();
    const journal = await Journal.open(directory, ['g'], capture().log);
    // Events of about 1 MiB each (a long payload), one message each.
    const big = 'x'.repeat(1024 * 1024);
    const events = Array.from({ length: 12 }, () => auditQueued({ payload: { context: { note: big } } }));
    const records = [];
    for (const e of events) records.push(await journal.append(encodePacked([e]), 1, undefined, [e]));
    const held = records.map((r) => r.decoded !== undefined);
    // The newest ones are held (the very objects), the oldest were let go of.
    expect(held.slice(-7)).toEqual(Array(7).fill(true));
    expect(held.slice(0, 3)).toEqual([false, false, false]);
    expect(records.at(-1)?.decoded?.[0]).toBe(events.at(-1));
    // Let go of or not, every body is what was appended.
    expect(records.map((r) => decodeMessage(r.body))).toEqual(
      events.map((e) => ({ ok: true, message: { v: 1, events: [e] } })),
    );
    // A small body holds its events too (bytes of its own, not the shared pool's).
    const small = auditQueued();
    expect((await journal.append(encodePacked([small]), 1, undefined, [small])).decoded?.[0]).toBe(small);
    await journal.close();
    const again = await Journal.open(directory, ['g'], capture().log);
    expect([...(again.groups.get('g')?.pending.values() ?? [])].map((p) => p.record.decoded)).toEqual(
      Array(13).fill(undefined),
    );
    expect(idsIn(again)).toEqual([...events, small].map((e) => e.id));
    await again.close();
  });

  it('lets go of the events it held for a record once every group has settled it (acknowledged or dead), not before', async () => {
    const directory = dir();
    const journal = await Journal.open(directory, ['a', 'b'], capture().log);
    const [x, y, z] = [auditQueued(), auditQueued(), auditQueued()];
    const [rx, ry, rz] = [
      await journal.append(encodePacked([x]), 1, undefined, [x]),
      await journal.append(encodePacked([y]), 1, undefined, [y]),
      await journal.append(encodePacked([z]), 1, undefined, [z]),
    ];
    // Group a is done with all three (x acknowledged, y dead, z failed and so still pending).
    await journal.settle('a', [rx.seq], [rz.seq], [ry.seq]);
    // Group b still has each pending: held for it.
    expect([rx, ry, rz].map((r) => r.decoded?.[0])).toEqual([x, y, z]);
    await journal.settle('b', [rx.seq, ry.seq, rz.seq], [], []);
    // x and y are settled everywhere: let go of; z is still pending for a (its retry takes it from the tail).
    expect([rx, ry, rz].map((r) => r.decoded?.[0])).toEqual([undefined, undefined, z]);
    // The bodies are still what was appended (they are read from the bytes).
    expect([rx, ry].map((r) => decodeMessage(r.body))).toEqual(
      [x, y].map((e) => ({ ok: true, message: { v: 1, events: [e] } })),
    );
    await journal.close();
  });

  it('keeps no record in memory once every group settled it, so the records of a consumer that keeps up die young (not held in the tail until 8 MiB of later appends push them out)', async () => {
    const gc = gcFunction();
    if (typeof gc !== 'function') throw new Error('no gc function in this runtime');
    const journal = await Journal.open(dir(), ['a', 'b'], capture().log);
    // Only weak references here: whatever keeps a record alive is the journal's.
    const appendWeakly = async () => {
      const e = auditQueued();
      const record = await journal.append(encodePacked([e]), 1, undefined, [e]);
      return { seq: record.seq, ref: new WeakRef(record) };
    };
    const appended = [await appendWeakly(), await appendWeakly(), await appendWeakly()];
    const seqs = appended.map((r) => r.seq);
    await journal.settle('a', seqs, [], []);
    await journal.settle('b', seqs.slice(0, 2), [], []);
    // A WeakRef holds its target until the end of the job that made or read it.
    await new Promise((resolve) => setImmediate(resolve));
    Reflect.apply(gc, undefined, []);
    // Settled everywhere: gone. Still pending for b: kept, with its events.
    expect(appended.map((r) => r.ref.deref() === undefined)).toEqual([true, true, false]);
    expect(appended[2]?.ref.deref()?.decoded).toHaveLength(1);
    await journal.close();
  });

  it('keeps its in-memory tail short whatever is settled when: a consumer that keeps up leaves it empty, and one record pending for long does not make it grow past its bound', async () => {
    const journal = await Journal.open(dir(), ['a', 'b'], capture().log);
    const body = encodePacked([]);
    const appendMany = (n: number) =>
      Promise.all(Array.from({ length: n }, () => journal.append(body, 0, undefined, [])));
    // Settled as they come, in both groups: nothing stays held.
    for (let i = 0; i < 3; i++) {
      const seqs = (await appendMany(1500)).map((r) => r.seq);
      await journal.settle('a', seqs, [], []);
      await journal.settle('b', seqs, [], []);
    }
    expect(journal.tailSlots).toBe(0);
    // One record stays pending for b while 70,000 later ones are settled everywhere.
    const [stuck] = await appendMany(1);
    await journal.settle('a', [stuck?.seq ?? 0], [], []);
    for (let i = 0; i < 35; i++) {
      const seqs = (await appendMany(2000)).map((r) => r.seq);
      await journal.settle('a', seqs, [], []);
      await journal.settle('b', seqs, [], []);
      expect(journal.tailSlots).toBeLessThanOrEqual(65_536);
    }
    // Pushed out of the tail (its events let go of), still pending and readable.
    expect(stuck?.decoded).toBeUndefined();
    expect(journal.groups.get('b')?.pending.has(stuck?.seq ?? 0)).toBe(true);
    expect(stuck?.body).toBe(body);
    await journal.close();
  });

  it('reads a queue written before records were framed (Svc 15.0.0), and appends framed records after it', async () => {
    const directory = dir();
    const [a, b, c] = [auditQueued(), auditQueued(), auditQueued()];
    mkdirSync(directory, { recursive: true });
    writeFileSync(
      join(directory, 'segment-000000000001.log'),
      [a, b, c].map((e, i) => `${JSON.stringify({ s: i + 1, n: 1, b: encodePacked([e]) })}\n`).join(''),
    );
    writeFileSync(join(directory, 'acks-g.log'), 'a 2\nf 3\n');
    const first = await Journal.open(directory, ['g'], capture().log);
    expect(idsIn(first)).toEqual([a.id, c.id]);
    expect(first.groups.get('g')?.pending.get(3)?.failures).toBe(1);
    const d = auditQueued();
    await first.append(encodePacked([d]), 1);
    await first.close();
    const second = await Journal.open(directory, ['g'], capture().log);
    expect(idsIn(second)).toEqual([a.id, c.id, d.id]);
    expect(second.damage).toEqual({ records: 0, bytes: 0, ackLines: 0 });
    await second.close();
  });

  it('writes a message body raw after a short head, reads back the framed JSON records of Svc 15.0.0 beside it, and keeps the JSON form for a body with a newline or a group-only record', async () => {
    const directory = dir();
    const [a, b] = [auditQueued(), auditQueued()];
    mkdirSync(directory, { recursive: true });
    // Framed JSON records, as this Svc wrote them before the raw form.
    writeFileSync(
      join(directory, 'segment-000000000001.log'),
      frame(JSON.stringify({ s: 1, n: 1, b: encodePacked([a]) })),
    );
    const journal = await Journal.open(directory, ['g', 'h'], capture().log);
    const bodyB = encodePacked([b]);
    await journal.append(bodyB, 1);
    await journal.append('line one\nline two', 2);
    await journal.append('{"only":"h"}', 3, ['h']);
    await journal.close();
    const written = readdirSync(directory)
      .filter((f) => f.startsWith('segment-'))
      .sort();
    const payloads = scanRecords(readFileSync(join(directory, written[written.length - 1] ?? ''))).payloads;
    expect(payloads).toEqual([
      `m 2 1 ${bodyB}`,
      JSON.stringify({ s: 3, n: 2, b: 'line one\nline two' }),
      JSON.stringify({ s: 4, g: ['h'], n: 3, b: '{"only":"h"}' }),
    ]);
    const again = await Journal.open(directory, ['g', 'h'], capture().log);
    const bodies = (group: string) =>
      [...(again.groups.get(group)?.pending.values() ?? [])].map(({ record }) => [
        record.seq,
        record.events,
        record.body,
      ]);
    expect(bodies('g')).toEqual([
      [1, 1, encodePacked([a])],
      [2, 1, bodyB],
      [3, 2, 'line one\nline two'],
    ]);
    expect(bodies('h')).toEqual([
      [1, 1, encodePacked([a])],
      [2, 1, bodyB],
      [3, 2, 'line one\nline two'],
      [4, 3, '{"only":"h"}'],
    ]);
    expect(again.damage).toEqual({ records: 0, bytes: 0, ackLines: 0 });
    await again.close();
  });

  it('hands out a large body (kept as bytes while pending) exactly as appended, before and after a restart', async () => {
    const directory = dir();
    const events = Array.from({ length: 20 }, () => auditQueued());
    const body = encodePacked(events);
    expect(body.length).toBeGreaterThan(4096);
    const journal = await Journal.open(directory, ['g'], capture().log);
    const record = await journal.append(body, 20);
    expect(journal.groups.get('g')?.pending.get(record.seq)?.record.body).toBe(body);
    expect(idsIn(journal)).toEqual(events.map((e) => e.id));
    await journal.close();
    const again = await Journal.open(directory, ['g'], capture().log);
    expect(again.groups.get('g')?.pending.get(record.seq)?.record.body).toBe(body);
    await again.close();
  });

  it('keeps an acknowledgement across any number of restarts while its segment is kept for other messages', async () => {
    const directory = dir();
    const events = [auditQueued(), auditQueued(), auditQueued()];
    const journal = await Journal.open(directory, ['g'], capture().log);
    const records = [];
    for (const e of events) records.push(await journal.append(encodePacked([e]), 1));
    await journal.settle('g', [records[1]?.seq ?? 0], [], []);
    await journal.close();
    for (let restart = 1; restart <= 3; restart++) {
      const again = await Journal.open(directory, ['g'], capture().log);
      expect(idsIn(again)).toEqual([events[0]?.id, events[2]?.id]);
      await again.close();
    }
  });

  it('shows every record it finds at open, delivered or not, before it deletes the delivered ones', async () => {
    const directory = dir();
    const events = [auditQueued(), auditQueued()];
    const first = await Journal.open(directory, ['g'], capture().log);
    const records = [];
    for (const e of events) records.push(await first.append(encodePacked([e]), 1));
    await first.settle(
      'g',
      records.map((r) => r?.seq ?? 0),
      [],
      [],
    );
    await first.close();
    const seen: string[] = [];
    const second = await Journal.open(directory, ['g'], capture().log, (found) => {
      for (const r of found) {
        const decoded = decodeMessage(r.body);
        if (decoded.ok && 'events' in decoded.message) seen.push(...decoded.message.events.map((e) => e.id));
      }
    });
    expect(seen).toEqual(events.map((e) => e.id));
    // The fully delivered segment is gone once the journal is open.
    expect(readdirSync(directory).filter((f) => f.startsWith('segment-'))).toEqual([]);
    await second.close();
  });

  it('starts numbering at 1 again once every segment is gone, and no acknowledgement of the old numbers applies to the new messages', async () => {
    const directory = dir();
    const old = [auditQueued(), auditQueued()];
    const first = await Journal.open(directory, ['g'], capture().log);
    const settled = [];
    for (const e of old) settled.push((await first.append(encodePacked([e]), 1)).seq);
    await first.settle('g', settled, [], []);
    await first.close();
    // Every message delivered: the next open deletes the segments (and rewrites the ack log).
    await (await Journal.open(directory, ['g'], capture().log)).close();
    expect(readdirSync(directory).filter((f) => f.startsWith('segment-'))).toEqual([]);
    const fresh = [auditQueued(), auditQueued(), auditQueued()];
    const third = await Journal.open(directory, ['g'], capture().log);
    const seqs = [];
    for (const e of fresh) seqs.push((await third.append(encodePacked([e]), 1)).seq);
    expect(seqs).toEqual([1, 2, 3]);
    await third.close();
    const fourth = await Journal.open(directory, ['g'], capture().log);
    expect(idsIn(fourth)).toEqual(fresh.map((e) => e.id));
    await fourth.close();
  });

  it('delivers a batch that a crash left between its write and its acknowledgement again first, exactly as it was', async () => {
    const directory = dir();
    const record = join(dir(), 'batches.jsonl');
    const events = [auditQueued(), auditQueued()];
    // The child delivers [e1, e2] as one batch (batch size 2), records it, and dies before settling.
    const crashed = spawnQueueHolder({
      directory,
      events,
      groups: [
        {
          name: 'files',
          batchSize: 2,
          batchWindowMs: 60_000,
          stableBatches: true,
          recordTo: record,
          crashBeforeSettle: true,
        },
      ],
    });
    await crashed.exited;
    expect(
      readFileSync(record, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as string[]),
    ).toEqual([events.map((e) => e.id)]);

    // Restarted with room for three per batch; a third event arrives at once. Regrouped, the first
    // batch would be [e1, e2, e3]: a file destination would then write e1 and e2 a second time.
    const batches: string[][] = [];
    const handler = (e: SQSEvent): Promise<SQSBatchResponse> => {
      batches.push(
        e.Records.flatMap((r) => {
          const decoded = decodeMessage(r.body);
          return decoded.ok && 'events' in decoded.message ? decoded.message.events.map((x) => x.id) : [];
        }),
      );
      return Promise.resolve({ batchItemFailures: [] });
    };
    const queue = new LocalEventQueue({
      directory,
      capacity: 100,
      maxReceiveCount: 5,
      log: capture().log,
      groups: [{ name: 'files', handler, batchSize: 3, batchWindowMs: 200, stableBatches: true }],
    });
    await queue.start();
    const third = auditQueued();
    await queue.send([third]);
    await expect.poll(() => batches.flat().length, { timeout: 5000 }).toBe(3);
    expect(batches).toEqual([events.map((e) => e.id), [third.id]]);
    await queue.stop();
  });
});

/**
 * A real small filesystem, mounted by the test (root only): the kernel's own ENOSPC and short
 * writes, which no stand-in reproduces faithfully.
 */
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
    // The segment carries the 202's promise; the ack log is synced periodically instead (journal.ts).
    expect(flagsOf(segmentOf(journalDir)) & fsConstants.O_DSYNC).toBe(fsConstants.O_DSYNC);
    expect(flagsOf(join(journalDir, 'acks-g.log')) & fsConstants.O_DSYNC).toBe(0);
    await journal.close();
  });

  it('counts its synced message writes, the records and the bytes they carried: appends made together share one write, and those made while it is in flight the next', async () => {
    const directory = dir();
    const journal = await Journal.open(directory, ['g'], capture().log);
    await journal.append(encodePacked([auditQueued()]), 1);
    expect(journal.segmentWrites).toEqual({ writes: 1, records: 1, bytes: statSync(segmentOf(directory)).size });
    // Five made in one turn (as the UDP spool's round makes its messages): one write.
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

describe('the ack logs, written per delivery and synced periodically', () => {
  it('resolves a settle or a lease once written, before any sync; syncs each written ack log in the periodic sync; and syncs at close', async () => {
    const directory = dir();
    const journal = await Journal.open(directory, ['g', 'h'], capture().log);
    const records = [];
    for (let i = 0; i < 3; i++) records.push(await journal.append(encodePacked([auditQueued()]), 1));
    const [one, two, three] = records.map((r) => r.seq);
    if (one === undefined || two === undefined || three === undefined) throw new Error('no records');
    await journal.lease('g', [one, two]);
    await journal.settle('g', [one], [two], []);
    await journal.settle('h', [one, two], [], []);
    // Written (readable, so a crash keeps them) and not yet synced: no sync ran on the way.
    expect(scanRecords(readFileSync(join(directory, 'acks-g.log'))).payloads).toEqual([
      `l ${one} ${two}`,
      `a ${one}`,
      `f ${two}`,
    ]);
    expect(journal.ackSyncs).toBe(0);
    await journal.acksSynced();
    // One sync per written log, however many lines it took since the last.
    expect(journal.ackSyncs).toBe(2);
    await journal.acksSynced();
    expect(journal.ackSyncs).toBe(2);
    await journal.settle('g', [three], [], []);
    await journal.acksSynced();
    expect(journal.ackSyncs).toBe(3);
    // A stop syncs what the periodic sync has not taken yet, without waiting for it.
    await journal.settle('h', [three], [], []);
    expect(journal.ackSyncs).toBe(3);
    await journal.close();
    expect(journal.ackSyncs).toBe(4);
    const reopened = await Journal.open(directory, ['g', 'h'], capture().log);
    expect([...(reopened.groups.get('g')?.pending.keys() ?? [])]).toEqual([two]);
    expect(reopened.groups.get('g')?.pending.get(two ?? 0)?.failures).toBe(1);
    expect(reopened.groups.get('h')?.pending.size).toBe(0);
    await reopened.close();
  });
});

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

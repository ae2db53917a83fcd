/**
 * What opening the journal reads back: a torn tail cut, damage in the middle reported and skipped
 * with the records after it recovered, the format of older versions still read, acknowledgements
 * kept across restarts, and a batch that a crash left unsettled delivered again exactly as it was.
 */
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { decodeMessage, encodePacked } from '../../../../shared/queue/codec.js';
import { frame } from '../../../../shared/queue/local/append-log.js';
import { LocalEventQueue } from '../../../../shared/queue/local/index.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { auditQueued } from '../../../support/audit.js';
import { dir, idsIn, segmentOf } from '../../../support/local-queue.js';
import { recordingLog } from '../../../support/log.js';
import { spawnQueueHolder, startQueueHolder } from '../../../support/queue-holder.js';

const capture = recordingLog;

/** A queue in a child process that sends `events` and is then killed with SIGKILL. */
async function crashAfterQueueing(directory: string, count: number) {
  const events = Array.from({ length: count }, () => auditQueued());
  const holder = await startQueueHolder({ directory, groups: [{ name: 'g' }], events });
  holder.child.kill('SIGKILL');
  await holder.exited;
  return events.map((e) => e.id);
}

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

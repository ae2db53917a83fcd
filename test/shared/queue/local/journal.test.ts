/** The journal's appends: the record forms on disk, bodies kept as bytes, and the numbering of messages. */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodePacked } from '../../../../shared/queue/codec.js';
import { frame, scanRecords } from '../../../../shared/queue/local/append-log.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { auditQueued } from '../../../support/audit.js';
import { dir, idsIn } from '../../../support/local-queue.js';
import { recordingLog } from '../../../support/log.js';

const capture = recordingLog;

describe('Journal on disk', () => {
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
});

/** The journal's in-memory tail: the events of its recent appends, held for this process's consumers, and let go of in time. */
import { describe, expect, it } from 'vitest';
import { gcFunction } from '../../../../edge-agent/runtime/settle.js';
import { decodeMessage, encodePacked } from '../../../../shared/queue/codec.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { auditQueued } from '../../../support/audit.js';
import { dir, idsIn } from '../../../support/local-queue.js';
import { recordingLog } from '../../../support/log.js';

const capture = recordingLog;

describe('Journal on disk', () => {
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
});

/** The acknowledgement logs: written per delivery, synced periodically and at close. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodePacked } from '../../../../shared/queue/codec.js';
import { scanRecords } from '../../../../shared/queue/local/append-log.js';
import { Journal } from '../../../../shared/queue/local/journal.js';
import { auditQueued } from '../../../support/audit.js';
import { dir } from '../../../support/local-queue.js';
import { recordingLog } from '../../../support/log.js';

const capture = recordingLog;

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

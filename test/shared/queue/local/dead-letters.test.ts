/** Dead letters: a message out of attempts leaves the queue for a file, and `svc dlq replay` puts it back. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEAD_LETTER_DIR, replayDeadLetters } from '../../../../shared/queue/local/index.js';
import { dir, event, queue, recorder } from '../../../support/local-queue.js';
import { silentLog } from '../../../support/log.js';

const silent = silentLog;

describe('LocalEventQueue', () => {
  it('moves a message to the dead-letter folder after maxReceiveCount attempts, and replays it', async () => {
    const directory = dir();
    let failing = true;
    const r = recorder((e) => (failing ? e.Records.map((x) => x.messageId) : []));
    const q = queue(directory, [{ name: 'tsdb', handler: r.handler, batchSize: 10, batchWindowMs: 0 }]);
    await q.start();
    const e = event();
    await q.send([e]);
    await expect.poll(() => q.stats()['tsdb']?.deadLettered).toBe(1);
    expect(r.batches).toHaveLength(3);
    await q.stop();
    const dlq = join(directory, DEAD_LETTER_DIR, 'tsdb');
    const files = readdirSync(dlq);
    expect(files).toHaveLength(1);
    const letter = JSON.parse(readFileSync(join(dlq, files[0] ?? ''), 'utf8')) as {
      attempts: number;
      group: string;
      reason: string;
    };
    expect(letter).toMatchObject({ attempts: 3, group: 'tsdb', reason: 'the handler reported the message as failed' });

    expect(await replayDeadLetters(directory, silent)).toEqual([{ group: 'tsdb', messages: 1, events: 1 }]);
    expect(readdirSync(dlq)).toEqual([]);
    failing = false;
    const again = queue(directory, [{ name: 'tsdb', handler: r.handler, batchSize: 10, batchWindowMs: 0 }]);
    await again.start();
    await expect.poll(() => r.seen).toEqual([e.id]);
    await again.stop();
  });
});

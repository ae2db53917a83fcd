/**
 * Nothing acknowledged is lost: events answered 202 by `svc local` survive `kill -9` and are written
 * after the restart. Real processes, real HTTP, files read back with an independent parquet reader.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../support/ports.js';
import {
  filesIn,
  parquetEventIds,
  postInRounds,
  startAuditLocal,
  startSvc,
  writeAuditLocalConfig,
} from '../../support/svc-process.js';

describe('svc local durability', () => {
  it('writes every event answered 202 after a kill -9 and a restart', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'svc-kill9-'));
    const port = await freePort();
    // A long batching window: at the kill every accepted event is still only in the queue.
    writeAuditLocalConfig(cwd, port, {
      type: 'parquet',
      parquet: { exportDirectory: 'out/parquet', writeFrequency: 60_000, maxBatchSize: 100_000 },
    });
    const first = await startAuditLocal(cwd, port);
    const accepted = await postInRounds(port, 10, 20);
    first.child.kill('SIGKILL');
    await first.exited;
    expect(accepted).toHaveLength(200);
    expect(filesIn(join(cwd, 'out/parquet'), '.parquet')).toEqual([]);

    // The restart finds the events on disk; a clean stop delivers them at once (batching window or not).
    const second = startSvc(cwd);
    await expect.poll(second.output, { timeout: 15_000 }).toContain('recovered 200 undelivered event(s)');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const ids = await parquetEventIds(join(cwd, 'out/parquet'));
    expect(ids.sort()).toEqual(accepted.sort());
  });
});

/**
 * A full disk loses nothing that was acknowledged: `svc local` with its queue on a real, small
 * filesystem (a tmpfs the test mounts; root only, skipped with the reason otherwise). Filled up, the
 * API answers 503 with retry-after and keeps nothing of the refused events; freed, it accepts
 * again; killed with -9 and restarted, it delivers every event it answered 202, once.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envelope } from '../../support/audit.js';
import { freePort } from '../../support/ports.js';
import { parquetEventIds, postAuditEvent, startAuditLocal, writeAuditLocalConfig } from '../../support/svc-process.js';
import { mountTmpfs, type Tmpfs } from '../../support/tmpfs.js';

const cwd = mkdtempSync(join(tmpdir(), 'svc-full-disk-'));
const queueDir = join(cwd, 'queue');
let fs: Tmpfs;

beforeAll(() => {
  fs = mountTmpfs('1m', 'the full-disk test of svc local', queueDir);
});
afterAll(() => fs.unmount());

describe('svc local on a full disk', () => {
  it('answers 503 with retry-after while the queue cannot write, and delivers every event it answered 202 after kill -9', async ({
    skip,
  }) => {
    if (fs.reason) skip(fs.reason);
    const port = await freePort();
    writeAuditLocalConfig(cwd, port, {
      type: 'parquet',
      parquet: { exportDirectory: 'out/parquet', writeFrequency: 60_000, maxBatchSize: 100_000 },
    });
    const accepted: string[] = [];
    const refused: string[] = [];
    const post = async (id: string = randomUUID()) => {
      const res = await postAuditEvent(port, envelope({ eventId: id }));
      const json = (await res.json()) as Record<string, unknown>;
      if (res.status === 202) accepted.push(id);
      else {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('30');
        expect(json).toMatchObject({
          status: 'error',
          outcome: 'error',
          reason: 'The audit event queue cannot store the event now; retry in about 30 seconds',
        });
        refused.push(id);
      }
      return res.status;
    };

    const first = await startAuditLocal(cwd, port);
    for (let i = 0; i < 20; i++) await post();
    // Fill the filesystem up to the last few KiB, then keep posting until the queue refuses.
    const filler = join(queueDir, 'filler');
    const { bavail, bsize } = statfsSync(queueDir);
    writeFileSync(filler, Buffer.alloc(Math.max(0, bavail * bsize - 24 * 1024)));
    for (let i = 0; i < 200 && refused.length < 5; i++) await post();
    expect(refused.length).toBe(5);
    expect(first.output()).toContain('audit event queue cannot store events (disk): answering 503');

    // Room again: new events and the refused ones (the client's retries) are taken.
    rmSync(filler);
    for (let i = 0; i < 10; i++) expect(await post()).toBe(202);
    const retried = refused.slice(0, 2);
    for (const id of retried) expect(await post(id)).toBe(202);

    first.child.kill('SIGKILL');
    await first.exited;
    const second = await startAuditLocal(cwd, port);
    await expect
      .poll(second.output, { timeout: 10_000 })
      .toContain(`recovered ${accepted.length} undelivered event(s)`);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    expect(second.output()).not.toContain('damaged record');
    expect((await parquetEventIds(join(cwd, 'out/parquet'))).sort()).toEqual([...accepted].sort());
    // Nothing of a refused event was kept: only the retried ones arrived, once.
    for (const id of refused.slice(2)) expect(accepted).not.toContain(id);
  });
});

/**
 * maxBatchSize of the file writers counts rows, not queue messages: `svc local` packs the events of
 * concurrent requests into one queue message (group commit), and before a batch counted messages,
 * so a parquet file with maxBatchSize 1000 could hold 10,000 rows (and the process held all of
 * them at once: the memory peak under the audit load). Real process, real HTTP, files read back.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../support/ports.js';
import { decodeQvd } from '../../../support/qvd-reader.js';
import { filesIn, postInRounds, startAuditLocal, writeAuditLocalConfig } from '../../../support/svc-process.js';

const MAX = 5;

async function parquetRows(file: string): Promise<string[]> {
  const bytes = readFileSync(file);
  const rows = await parquetReadObjects({
    file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    columns: ['event_id'],
  });
  return rows.map((row) => String(row['event_id']));
}

describe('file writers: maxBatchSize rows per file', () => {
  it('closes parquet and table files at maxBatchSize rows when messages pack several events each', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'svc-max-batch-'));
    const port = await freePort();
    // A long window: a file is closed because it is full (or at the stop), never by time here.
    const fileWriter = (dir: string) => ({ exportDirectory: dir, writeFrequency: 60_000, maxBatchSize: MAX });
    writeAuditLocalConfig(cwd, port, {
      type: 'parquet, tablefile',
      parquet: fileWriter('out/parquet'),
      tablefile: fileWriter('out/tablefile'),
    });
    const svc = await startAuditLocal(cwd, port);
    // 25 at a time (under maxConnectionsPerClient): requests that arrive together share a queue message.
    const accepted = await postInRounds(port, 8, 25);
    expect(accepted).toHaveLength(200);
    // Full files are written without waiting for the 60 s window.
    await expect
      .poll(() => filesIn(join(cwd, 'out/parquet'), '.parquet').length, { timeout: 15_000 })
      .toBeGreaterThan(0);
    svc.child.kill('SIGTERM');
    expect(await svc.exited).toBe(0);

    const parquet = await Promise.all(filesIn(join(cwd, 'out/parquet'), '.parquet').map(parquetRows));
    const tablefile = filesIn(join(cwd, 'out/tablefile'), '.qvd').map((file) =>
      decodeQvd(readFileSync(file)).rows.map((row) => String(row['event_id'])),
    );
    for (const files of [parquet, tablefile]) {
      expect(Math.max(...files.map((rows) => rows.length))).toBeLessThanOrEqual(MAX);
      expect(files.flat().sort()).toEqual([...accepted].sort());
    }
  });
});

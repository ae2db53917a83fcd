/**
 * Nothing acknowledged is lost: events answered 202 by `svc local` survive `kill -9` and are written
 * after the restart. Real processes, real HTTP, files read back with an independent parquet reader.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { describe, expect, it } from 'vitest';
import { envelope } from '../../support/audit.js';
import { REPO_ROOT } from '../../support/build.js';
import { freePort } from '../../support/ports.js';

function startSvc(cwd: string): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(join(REPO_ROOT, 'node_modules/.bin/svc'), ['local', '--config', 'svc.yaml'], { cwd, env: { ...process.env, SVC_CONFIG: '' } });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  return { child, output: () => out, exited: new Promise((resolve) => child.on('exit', resolve)) };
}

function parquetFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.parquet')).map((f) => join(dir, f));
}

async function eventIdsIn(files: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const file of files) {
    const bytes = readFileSync(file);
    const rows = await parquetReadObjects({ file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), columns: ['event_id'] });
    for (const row of rows) ids.push(String(row['event_id']));
  }
  return ids;
}

describe('svc local durability', () => {
  it('writes every event answered 202 after a kill -9 and a restart', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'svc-kill9-'));
    const port = await freePort();
    writeFileSync(
      join(cwd, 'svc.yaml'),
      [
        'Svc:',
        '  localQueue:',
        '    directory: queue',
        '  auditEvents:',
        '    enable: true',
        `    port: ${port}`,
        '    rateLimit:',
        '      enable: false',
        '    destination:',
        '      enable: true',
        '      type: parquet',
        '      parquet:',
        '        exportDirectory: out/parquet',
        // A long batching window: at the kill every accepted event is still only in the queue.
        '        writeFrequency: 60000',
        '        maxBatchSize: 100000',
        '',
      ].join('\n'),
    );
    const first = startSvc(cwd);
    await expect.poll(first.output, { timeout: 15_000 }).toContain('audit API listening');
    const accepted: string[] = [];
    const post = async () => {
      const body = envelope();
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/audit-event`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (res.status === 202) accepted.push(String(body['eventId']));
    };
    for (let round = 0; round < 10; round++) await Promise.all(Array.from({ length: 20 }, post));
    first.child.kill('SIGKILL');
    await first.exited;
    expect(accepted).toHaveLength(200);
    expect(parquetFiles(join(cwd, 'out/parquet'))).toEqual([]);

    // The restart finds the events on disk; a clean stop delivers them at once (batching window or not).
    const second = startSvc(cwd);
    await expect.poll(second.output, { timeout: 15_000 }).toContain('recovered 200 undelivered event(s)');
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const ids = await eventIdsIn(parquetFiles(join(cwd, 'out/parquet')));
    expect(ids.sort()).toEqual(accepted.sort());
  });
});

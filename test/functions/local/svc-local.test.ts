/** `svc local` end to end: the real CLI process, the audit API over HTTP, files on disk. */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envelope } from '../../support/audit.js';
import { REPO_ROOT } from '../../support/build.js';
import { freePort, trackChild } from '../../support/ports.js';

describe('svc local', () => {
  it('serves the audit API, writes object data to disk, and shuts down cleanly', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-local-'));
    const port = await freePort();
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  auditEvents:',
        '    enable: true',
        `    port: ${port}`,
        '    destination:',
        '      enable: true',
        '      type: json',
        '      json:',
        '        objectdata:',
        '          enable: true',
        '          exportDirectory: out/json',
        '',
      ].join('\n'),
    );
    const child = spawn(join(REPO_ROOT, 'node_modules/.bin/svc'), ['local', '--config', 'svc.yaml'], {
      cwd: dir,
      env: { ...process.env, SVC_CONFIG: '' },
    });
    trackChild(child);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await expect.poll(() => out, { timeout: 15_000 }).toContain(`audit API listening on http://127.0.0.1:${port}`);
      expect(out).toContain('Svc.auditEvents.apiToken is not set');
      const body = envelope({ type: 'object.visibility.changed', payload: { event: { objectData: { qId: 'abc' } } } });
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/audit-event`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.status).toBe(202);
      const outDir = join(dir, 'out/json');
      await expect
        .poll(() => (existsSync(outDir) ? readdirSync(outDir) : []), { timeout: 10_000 })
        .toEqual([`${String(body['timestamp']).replace(/[-:.]/g, '')}_${String(body['eventId'])}.json`]);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toContain('stopped audit API');
    expect(out).toContain('shutdown complete');
  });
});

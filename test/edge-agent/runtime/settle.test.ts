/**
 * A few seconds after its start, a service runs one full garbage collection (edge-agent/runtime/settle.ts), so
 * its idle memory does not depend on whether V8 happened to shrink the young generation that start
 * grew. On the real built CLI: the collection is logged at debug, after the "running" line, and the
 * service goes on working (its audit API answers) with V8's flags as before.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePorts, LOOPBACK } from '../../support/ports.js';
import { logLines, startSvc } from '../../support/svc-process.js';

describe('the garbage collection after start', () => {
  it('svc local collects once after it is running, and keeps serving', async () => {
    const [port] = await freePorts(1);
    const dir = mkdtempSync(join(tmpdir(), 'svc-settle-'));
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  logLevel: debug',
        '  localQueue: {directory: queue}',
        `  auditEvents: {enable: true, host: ${LOOPBACK}, port: ${port}}`,
        '',
      ].join('\n'),
    );
    const svc = startSvc(dir, 'local');
    try {
      await expect.poll(svc.output, { timeout: 20_000 }).toMatch(/garbage collected after start/);
      const messages = logLines(svc.output()).map((l) => l.msg);
      const running = messages.findIndex((m) => /^svc local \S+ running/.test(m));
      const collected = messages.findIndex((m) => m.startsWith('garbage collected after start: heap '));
      expect(running).toBeGreaterThanOrEqual(0);
      expect(collected).toBeGreaterThan(running);
      expect(messages.filter((m) => m.startsWith('garbage collected after start'))).toHaveLength(1);
      // The process goes on: the audit API answers (a GET on its POST path is refused, not dropped).
      const res = await fetch(`http://${LOOPBACK}:${port}/`);
      expect(res.status).toBeGreaterThanOrEqual(400);
    } finally {
      svc.child.kill('SIGTERM');
    }
    expect(await svc.exited).toBe(0);
    // No warning from Node about the flag turned on and off.
    expect(svc.output()).not.toMatch(/Warning/);
  }, 30_000);
});

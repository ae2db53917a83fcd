/**
 * The container health endpoint in real processes: `svc edge` with a UDP listener answers 200 on
 * every interface; stopped with SIGSTOP for 1.5 s (its event loop stalls as under a long block),
 * it answers the probe that waited 503 naming the lag, then 200 again; a second `svc edge` whose
 * health port is taken stops with exit 1 and a message naming the key and the port; `svc local`
 * serves it too.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SVC_VERSION } from '../../../../shared/version.js';
import { freePort, freeUdpPort, LOOPBACK, sleep } from '../../../support/ports.js';
import { type SvcProcess, startSvc } from '../../../support/svc-process.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-health-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function edgeConfig(cwd: string, healthPort: number, udpPort: number): void {
  mkdirSync(cwd, { recursive: true });
  writeFileSync(
    join(cwd, 'svc.yaml'),
    [
      'Svc:',
      '  localQueue: { directory: queue }',
      `  containerHealthCheck: { enable: true, port: ${healthPort} }`,
      '  logEvents:',
      `    udpServerConfig: { serverHost: ${LOOPBACK}, portLogEvents: ${udpPort} }`,
      '    source: { proxy: { enable: true } }',
      '',
    ].join('\n'),
  );
}

async function health(port: number): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`http://${LOOPBACK}:${port}/health`);
  return { status: res.status, body: await res.json() };
}

/** Polls until 200: a process that a busy machine lagged more than 1 s rightly answers 503 for a few seconds. */
async function healthy(port: number): Promise<void> {
  await expect.poll(async () => (await health(port)).status, { timeout: 10_000, interval: 250 }).toBe(200);
  expect(await health(port)).toEqual({ status: 200, body: { statusCode: 200, status: 'ok' } });
}

async function stop(svc: SvcProcess): Promise<void> {
  svc.child.kill('SIGTERM');
  expect(await svc.exited).toBe(0);
}

describe('container health endpoint in svc edge and svc local', () => {
  it('svc edge: 200, 503 for an event loop stalled 1.5 s, 200 again; a taken port stops a second svc edge naming the key', async () => {
    const port = await freePort();
    const cwd = join(dir, 'edge');
    edgeConfig(cwd, port, await freeUdpPort());
    const svc = startSvc(cwd, 'edge');
    try {
      await expect.poll(svc.output, { timeout: 15_000 }).toContain(`svc edge ${SVC_VERSION} running`);
      expect(svc.output()).toContain(
        `container health endpoint listening on port ${port} (all interfaces): GET /health`,
      );
      expect(svc.output()).not.toContain('the container health endpoint is not built yet');
      await healthy(port);

      // A stopped process runs no timer and no request: what a 1.5 s busy loop does to its loop.
      svc.child.kill('SIGSTOP');
      const probe = health(port);
      await sleep(1500);
      svc.child.kill('SIGCONT');
      const stalled = await probe;
      expect(stalled.status).toBe(503);
      expect(stalled.body).toMatchObject({
        statusCode: 503,
        status: 'ko',
        reason: expect.stringMatching(/^event loop lag \d+ ms exceeds 1000 ms$/) as unknown,
      });
      await healthy(port);
      expect(svc.output()).toContain('container health: GET /health answers 503: event loop lag');

      const otherCwd = join(dir, 'edge-2');
      edgeConfig(otherCwd, port, await freeUdpPort());
      const second = startSvc(otherCwd, 'edge');
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(
        `Svc.containerHealthCheck.port: the container health endpoint cannot listen on port ${port} (all interfaces): listen EADDRINUSE`,
      );
      // The first one is untouched.
      await healthy(port);
    } finally {
      await stop(svc);
    }
  });

  it('svc local with only the audit API serves it too', async () => {
    const [port, apiPort] = [await freePort(), await freePort()];
    const cwd = join(dir, 'local');
    mkdirSync(cwd);
    writeFileSync(
      join(cwd, 'svc.yaml'),
      [
        'Svc:',
        '  localQueue: { directory: queue }',
        `  containerHealthCheck: { enable: true, port: ${port} }`,
        `  auditEvents: { enable: true, port: ${apiPort}, destination: { enable: true, type: json } }`,
        '',
      ].join('\n'),
    );
    const svc = startSvc(cwd, 'local');
    try {
      await expect.poll(svc.output, { timeout: 15_000 }).toContain(`svc local ${SVC_VERSION} running`);
      await healthy(port);
    } finally {
      await stop(svc);
    }
  });
});

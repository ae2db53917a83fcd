/**
 * `svc demo` as a real child process, on the shipped base config (config/demo.yaml) with its five
 * ports moved to free loopback ports, so a test runs the demo exactly as a newcomer does.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { REPO_ROOT } from './build.js';
import { freePort, freeUdpPort, LOOPBACK, sleep } from './ports.js';
import { type SvcProcess, startSvcCommand } from './svc-process.js';

export interface Demo extends SvcProcess {
  /** The working directory: the demo's data is under `data/demo` here. */
  cwd: string;
  metricsUrl: string;
  auditOrigin: string;
  ports: { audit: number; metrics: number; web: number; user: number; log: number };
  /** SIGTERM (when still running), then the exit code. */
  stop(): Promise<number | null>;
  /** Stops it and removes the working directory. */
  remove(): Promise<void>;
}

/** Starts `svc demo` with `args` and waits (bounded) until it says it is running. */
export async function startDemo(args: readonly string[] = []): Promise<Demo> {
  const cwd = mkdtempSync(join(tmpdir(), 'svc-demo-'));
  const ports = {
    audit: await freePort(),
    metrics: await freePort(),
    web: await freePort(),
    user: await freeUdpPort(),
    log: await freeUdpPort(),
  };
  const doc = parseDocument(readFileSync(join(REPO_ROOT, 'config/demo.yaml'), 'utf8'));
  doc.setIn(['Svc', 'auditEvents', 'port'], ports.audit);
  doc.setIn(['Svc', 'metricsEndpoint', 'port'], ports.metrics);
  doc.setIn(['Svc', 'configVisualisation', 'port'], ports.web);
  doc.setIn(['Svc', 'userEvents', 'udpServerConfig', 'portUserActivityEvents'], ports.user);
  doc.setIn(['Svc', 'logEvents', 'udpServerConfig', 'portLogEvents'], ports.log);
  writeFileSync(join(cwd, 'demo-base.yaml'), doc.toString());
  const svc = startSvcCommand(cwd, ['demo', '--config', 'demo-base.yaml', '--seed', '7', ...args]);
  const deadline = Date.now() + 30_000;
  while (!svc.output().includes('svc demo: running')) {
    const exited = await Promise.race([svc.exited, sleep(100).then(() => 'running' as const)]);
    if (exited !== 'running' || Date.now() > deadline) {
      svc.child.kill('SIGKILL');
      rmSync(cwd, { recursive: true, force: true });
      throw new Error(
        `svc demo did not start (${exited === 'running' ? 'no "running" line in 30 s' : `exit ${String(exited)}`}):\n${svc.output()}`,
      );
    }
  }
  const stop = async (): Promise<number | null> => {
    if (svc.child.exitCode === null && svc.child.signalCode === null) svc.child.kill('SIGTERM');
    return svc.exited;
  };
  return {
    ...svc,
    cwd,
    ports,
    metricsUrl: `http://${LOOPBACK}:${ports.metrics}/metrics`,
    auditOrigin: `http://${LOOPBACK}:${ports.audit}`,
    stop,
    async remove() {
      await stop();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
}

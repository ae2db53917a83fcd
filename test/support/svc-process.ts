/**
 * `svc` as a real child process (the built CLI), and readers of what its file destinations wrote:
 * for the end-to-end tests that kill, restart and fill up a running Svc.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parquetReadObjects } from 'hyparquet';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { SVC_VERSION } from '../../shared/version.js';
import { envelope } from './audit.js';
import { REPO_ROOT } from './build.js';
import { trackChild, until } from './ports.js';
import { decodeQvd } from './qvd-reader.js';

export const SVC_BIN = join(REPO_ROOT, 'node_modules/.bin/svc');

export interface SvcProcess {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts `svc <mode> --config svc.yaml` in `cwd` (SVC_CONFIG cleared; `env` added). */
export function startSvc(cwd: string, mode: 'local' | 'edge' = 'local', env: NodeJS.ProcessEnv = {}): SvcProcess {
  return startSvcCommand(cwd, [mode, '--config', 'svc.yaml'], env);
}

/**
 * Starts `svc <mode>` in `cwd` as startSvc does and resolves once it logged that it runs; throws with
 * its output when it exits first or does not run within 30 s.
 */
export async function startSvcRunning(cwd: string, mode: 'local' | 'edge' = 'local'): Promise<SvcProcess> {
  const started = startSvc(cwd, mode);
  const running = `svc ${mode} ${SVC_VERSION} running (`;
  await until('svc running', () => started.output().includes(running) || started.child.exitCode !== null, 30_000).catch(
    () => undefined,
  );
  if (!started.output().includes(running)) throw new Error(`svc ${mode} did not start:\n${started.output()}`);
  return started;
}

/** Starts `svc <args…>` in `cwd` (SVC_CONFIG cleared; `env` added), collecting stdout and stderr. */
export function startSvcCommand(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): SvcProcess {
  return startProgram(SVC_BIN, cwd, args, { ...process.env, SVC_CONFIG: '', ...env });
}

/**
 * Starts `file` with `args` in `cwd` with exactly the environment `env` (none of this process's),
 * collecting stdout and stderr: for the release's single executable in a clean environment.
 */
export function startProgram(file: string, cwd: string, args: readonly string[], env: NodeJS.ProcessEnv): SvcProcess {
  const child = spawn(file, [...args], { cwd, env });
  trackChild(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString()));
  return {
    child,
    output: () => out,
    exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve(signal === null ? code : null))),
  };
}

/**
 * Writes `cwd`/svc.yaml for a `svc local` with its queue in `queue/` and the audit API on `port`
 * (rate limit off: a test's bursts come from one address), writing to `destination` (the members
 * of auditEvents.destination besides `enable`); `sections`: more top-level sections (tsdbConfig …).
 * The connection limit per address is raised too: fetch keeps up to twice its concurrency in
 * connections (20 requests at once leave 40 open), and a POST it sends on an idle connection the
 * gateway closes at that moment (at the default limit of 32) fails in the client, which does not
 * retry a POST. The gateway's policing has tests of its own (test/functions/local/gateway/).
 */
export function writeAuditLocalConfig(
  cwd: string,
  port: number,
  destination: Record<string, unknown>,
  sections: Record<string, unknown> = {},
): void {
  const config = {
    Svc: {
      localQueue: { directory: 'queue' },
      ...sections,
      auditEvents: {
        enable: true,
        port,
        rateLimit: { enable: false },
        maxConnectionsPerClient: 1000,
        destination: { enable: true, ...destination },
      },
    },
  };
  writeFileSync(join(cwd, 'svc.yaml'), stringify(config));
}

/** Starts `svc local` in `cwd` (see startSvc) and waits until its audit API listens on `port`. */
export async function startAuditLocal(cwd: string, port: number, env: NodeJS.ProcessEnv = {}): Promise<SvcProcess> {
  const svc = startSvc(cwd, 'local', env);
  await expect.poll(svc.output, { timeout: 15_000 }).toContain(`audit API listening on http://127.0.0.1:${port}`);
  return svc;
}

/** POSTs `body` as JSON to the audit API of the local Svc on `port`. */
export function postAuditEvent(port: number, body: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/api/v1/audit-event`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

/** Posts `rounds` rounds of `perRound` fresh envelopes at once to the audit API on `port`; the eventIds answered 202. */
export async function postInRounds(port: number, rounds: number, perRound: number): Promise<string[]> {
  const accepted: string[] = [];
  const post = async (): Promise<void> => {
    const body = envelope();
    if ((await postAuditEvent(port, body)).status === 202) accepted.push(String(body['eventId']));
  };
  for (let round = 0; round < rounds; round++) await Promise.all(Array.from({ length: perRound }, post));
  return accepted;
}

/** Files under `dir` (recursively) ending in `extension`. */
export function filesIn(dir: string, extension: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith(extension))
    .map((f) => join(dir, f));
}

/** The `event_id` column of every parquet file under `dir` (one entry per row). */
export async function parquetEventIds(dir: string): Promise<string[]> {
  const ids: string[] = [];
  for (const file of filesIn(dir, '.parquet')) {
    const bytes = readFileSync(file);
    const rows = await parquetReadObjects({
      file: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
      columns: ['event_id'],
    });
    for (const row of rows) ids.push(String(row['event_id']));
  }
  return ids;
}

/** The `event_id` column of every table file (QVD) under `dir` (one entry per row). */
export function tablefileEventIds(dir: string): string[] {
  const ids: string[] = [];
  for (const file of filesIn(dir, '.qvd'))
    for (const row of decodeQvd(readFileSync(file)).rows) ids.push(String(row['event_id']));
  return ids;
}

/** One line of Svc's JSON log (pino): its level name, ISO time, message and every other field. */
export interface SvcLogLine {
  level: string;
  time: string;
  msg: string;
  fields: Record<string, unknown>;
}

/** The JSON lines of an `svc` process's output, in order; other lines (a plain start-up message) are skipped. */
export function logLines(output: string): SvcLogLine[] {
  const lines: SvcLogLine[] = [];
  for (const text of output.split('\n')) {
    if (!text.startsWith('{')) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) continue;
    const fields = Object.fromEntries(Object.entries(parsed));
    const { level, time, msg } = fields;
    if (typeof level === 'string' && typeof time === 'string' && typeof msg === 'string')
      lines.push({ level, time, msg, fields });
  }
  return lines;
}

/**
 * A real forward proxy for the proxy tests: Debian's tinyproxy (scripts/ensure-system-packages.sh),
 * started on a free loopback port with a config file written here: clients from 127.0.0.1 only,
 * CONNECT to any port (no ConnectPort line), every request logged (LogLevel Connect). What went
 * through it is read back from its log: a plain-HTTP request as `POST http://host:port/…`, an
 * HTTPS one as `CONNECT host:port`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  canConnect,
  findExecutable,
  freePort,
  LOOPBACK,
  registerTempDir,
  spawnManaged,
  unregisterTempDir,
  waitUntilReady,
} from './ports.js';

/** One request tinyproxy forwarded: `GET` and an absolute URL, or `CONNECT` and `host:port`. */
export interface ProxiedRequest {
  method: string;
  target: string;
}

export interface TinyproxyHandle {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Every request in its log so far, in order. */
  requests(): ProxiedRequest[];
  /** Whether a request to `hostPort` (`localhost:4321`) went through it, as a CONNECT or an absolute URL. */
  saw(hostPort: string): boolean;
  stop(): Promise<void>;
}

const REQUEST_LINE = /Request \(file descriptor \d+\): (\S+) (\S+) HTTP\/1\.[01]$/;

export async function startTinyproxy(): Promise<TinyproxyHandle> {
  const binary = findExecutable('tinyproxy', ['/usr/bin', '/usr/sbin']);
  const dir = mkdtempSync(join(tmpdir(), 'svc-tinyproxy-'));
  registerTempDir(dir);
  const port = await freePort();
  const logFile = join(dir, 'tinyproxy.log');
  writeFileSync(
    join(dir, 'tinyproxy.conf'),
    [
      `Port ${port}`,
      `Listen ${LOOPBACK}`,
      'Timeout 60',
      `LogFile "${logFile}"`,
      'LogLevel Connect',
      'MaxClients 100',
      `Allow ${LOOPBACK}`,
      'DisableViaHeader Yes',
      '',
    ].join('\n'),
  );
  const proc = spawnManaged(binary, ['-d', '-c', join(dir, 'tinyproxy.conf')]);
  await waitUntilReady(proc, 'tinyproxy', () => canConnect(port), 10_000);
  const requests = (): ProxiedRequest[] => {
    let text = '';
    try {
      text = readFileSync(logFile, 'utf8');
    } catch {
      return [];
    }
    return text.split('\n').flatMap((line) => {
      const match = REQUEST_LINE.exec(line);
      return match?.[1] && match[2] ? [{ method: match[1], target: match[2] }] : [];
    });
  };
  return {
    port,
    url: `http://${LOOPBACK}:${port}`,
    requests,
    saw: (hostPort) =>
      requests().some((r) => (r.method === 'CONNECT' ? r.target === hostPort : URL.parse(r.target)?.host === hostPort)),
    async stop() {
      await proc.stop();
      unregisterTempDir(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts a real SMTP server for tests: Debian's python3-aiosmtpd (test/support/smtp-server.py) on a
 * free loopback port, with STARTTLS required (`starttls`) or implicit TLS (`tls`), the certificate
 * and key given, and AUTH required for one user. It stores each message it accepts as a JSON file;
 * `messages()` reads them.
 *
 *   const smtp = await startSmtpServer({ mode: 'starttls', certFile, keyFile, user: 'u', password: 'p' });
 *   ... (await smtp.messages())[0].content ...
 *   await smtp.stop();
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  canConnect,
  freePort,
  isAddressInUse,
  LOOPBACK,
  registerTempDir,
  spawnManaged,
  unregisterTempDir,
  waitUntilReady,
} from './ports.js';

/** Debian's Python, which has python3-aiosmtpd (another python3 on the PATH may not). */
const PYTHON = '/usr/bin/python3';
const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'smtp-server.py');
const START_ATTEMPTS = 3;

export interface SmtpServerOptions {
  mode: 'starttls' | 'tls';
  certFile: string;
  keyFile: string;
  user: string;
  password: string;
}

/** One message as the server received it. */
export interface ReceivedMail {
  mailFrom: string;
  rcptTos: string[];
  /** The raw message: headers and MIME body. */
  content: string;
  /** The session was TLS (implicit, or upgraded by STARTTLS). */
  tls: boolean;
  authenticated: boolean;
  login: string | null;
}

export interface SmtpServer {
  readonly host: typeof LOOPBACK;
  readonly port: number;
  /** The messages received so far, in order. */
  messages(): Promise<ReceivedMail[]>;
  stop(): Promise<void>;
}

function isReceivedMail(value: unknown): value is ReceivedMail {
  return typeof value === 'object' && value !== null && 'content' in value && 'rcptTos' in value;
}

/** Starts the server and waits until it accepts TCP connections. */
export async function startSmtpServer(options: SmtpServerOptions): Promise<SmtpServer> {
  const maildir = await mkdtemp(path.join(os.tmpdir(), 'smtp-test-'));
  registerTempDir(maildir);
  let lastError: unknown;
  for (let attempt = 1; attempt <= START_ATTEMPTS; attempt++) {
    const port = await freePort();
    const proc = spawnManaged(PYTHON, [
      SCRIPT,
      '--port',
      String(port),
      '--maildir',
      maildir,
      '--cert',
      options.certFile,
      '--key',
      options.keyFile,
      '--mode',
      options.mode,
      '--user',
      options.user,
      '--password',
      options.password,
    ]);
    try {
      await waitUntilReady(proc, 'aiosmtpd', () => canConnect(port), 10_000);
    } catch (err) {
      lastError = err;
      await proc.stop();
      if (err instanceof Error && isAddressInUse(err.message)) continue;
      break;
    }
    return {
      host: LOOPBACK,
      port,
      async messages() {
        const names = (await readdir(maildir)).filter((name) => name.endsWith('.json')).sort();
        const mails: ReceivedMail[] = [];
        for (const name of names) {
          const parsed: unknown = JSON.parse(await readFile(path.join(maildir, name), 'utf8'));
          if (isReceivedMail(parsed)) mails.push(parsed);
        }
        return mails;
      },
      async stop() {
        await proc.stop();
        await rm(maildir, { recursive: true, force: true });
        unregisterTempDir(maildir);
      },
    };
  }
  await rm(maildir, { recursive: true, force: true });
  unregisterTempDir(maildir);
  throw lastError;
}

/** The item of `Svc.alerts.channels` that sends as `login.user` through `server` (STARTTLS, trusting `login.caFile`) to `to`. */
export function emailChannelTo(
  server: Pick<SmtpServer, 'host' | 'port'>,
  login: { user: string; password: string; caFile: string },
  to: string[],
) {
  return {
    name: 'mail',
    type: 'email',
    email: {
      smtp: {
        host: server.host,
        port: server.port,
        username: login.user,
        password: login.password,
        caFile: login.caFile,
      },
      from: 'Svc alerts <svc@example.com>',
      to,
    },
  };
}

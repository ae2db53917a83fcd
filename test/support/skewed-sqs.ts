/**
 * An SQS endpoint whose clock is ahead of this host's: a small HTTP front on loopback in front of
 * fauxqs. fauxqs checks no signature at all, so the refusal of a request signed at the wrong time
 * is this front's (a stand-in for SQS's behaviour fauxqs lacks): a request whose X-Amz-Date is more
 * than 5 minutes from the front's clock (now + `aheadMs`) is answered as SQS answers it (JSON
 * protocol: HTTP 400, `__type` …#InvalidSignatureException, the query-compatible error header,
 * "Signature expired: … is now earlier than …"); any other is passed to fauxqs. Every answer carries
 * the front's own `Date`.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOOPBACK } from './ports.js';

/** SQS's tolerance for a signing time. */
const TOLERANCE_MS = 5 * 60_000;

export interface SkewedSqsFront {
  /** `http://127.0.0.1:<port>`: the endpoint to send to. */
  endpoint: string;
  port: number;
  /** Requests refused for their signing time, and passed to fauxqs. */
  readonly refused: number;
  readonly passed: number;
  /** The X-Amz-Date of every request, in arrival order. */
  readonly amzDates: string[];
  stop(): Promise<void>;
}

/** `20261206T101523Z` → its time in ms. */
function parseAmzDate(text: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text);
  if (!m) return Number.NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]));
}

const amzDate = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/** Starts the front before fauxqs at `target` (`http://127.0.0.1:<port>`), its clock `aheadMs` ahead of this host's. */
export async function startSkewedSqsFront(target: string, aheadMs: number): Promise<SkewedSqsFront> {
  const upstream = new URL(target);
  const amzDates: string[] = [];
  let refused = 0;
  let passed = 0;
  const clock = () => Date.now() + aheadMs;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const signed = String(req.headers['x-amz-date'] ?? '');
      amzDates.push(signed);
      const now = clock();
      const signedAt = parseAmzDate(signed);
      if (Number.isNaN(signedAt) || Math.abs(signedAt - now) > TOLERANCE_MS) {
        refused += 1;
        const earliest = amzDate(now - TOLERANCE_MS);
        const message = `Signature expired: ${signed} is now earlier than ${earliest} (${amzDate(now)} - 5 min.)`;
        res.writeHead(400, {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-requestid': `skewed-${refused}`,
          'x-amzn-query-error': 'InvalidSignatureException;Sender',
          date: new Date(now).toUTCString(),
        });
        res.end(JSON.stringify({ __type: 'com.amazon.coral.service#InvalidSignatureException', message }));
        return;
      }
      passed += 1;
      const forwarded = httpRequest(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host },
        },
        (answer) => {
          const headers = { ...answer.headers, date: new Date(clock()).toUTCString() };
          res.writeHead(answer.statusCode ?? 502, headers);
          answer.pipe(res);
        },
      );
      forwarded.on('error', (err) => {
        res.writeHead(502, { date: new Date(clock()).toUTCString() });
        res.end(err.message);
      });
      forwarded.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${LOOPBACK}:${port}`,
    port,
    get refused() {
      return refused;
    },
    get passed() {
      return passed;
    },
    amzDates,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

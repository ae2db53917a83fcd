/** One HTTP request from a chosen loopback address (the web view's rate limit is per client address). */
import { request } from 'node:http';
import { LOOPBACK } from './ports.js';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** `method url` from `from` (any 127.0.0.0/8 address) on a new connection; the whole body as text. */
export function fetchFrom(
  url: string,
  { from = LOOPBACK, method = 'GET' }: { from?: string; method?: string } = {},
): Promise<Answer> {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(url, { method, localAddress: from, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

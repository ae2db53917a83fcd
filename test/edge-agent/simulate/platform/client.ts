/**
 * An HTTPS client for the platform simulator tests, as Svc's pollers are one: a client certificate
 * (or none), the CA that must have signed the server's certificate, one new connection per request
 * (so a failure switch applies from the next request on).
 */
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import type { CertificateFiles } from '../../../../edge-agent/simulate/platform/certs.js';

export interface ClientTls {
  cert?: string | Buffer;
  key?: string | Buffer;
  passphrase?: string;
  ca: string | Buffer;
}

export interface Reply {
  status: number;
  contentType: string;
  text: string;
}

/** The client Svc would be, from the simulator's certificate files. */
export function svcClient(files: CertificateFiles): ClientTls {
  return {
    cert: readFileSync(files.clientCert),
    key: readFileSync(files.clientCertKey),
    ca: readFileSync(files.clientCertCA),
    ...(files.passphrase === '' ? {} : { passphrase: files.passphrase }),
  };
}

/** GET `url`; rejects on a TLS or connection error, or when no answer came within `timeoutMs`. */
export function get(
  url: string,
  tls: ClientTls,
  headers: Record<string, string> = {},
  timeoutMs = 10_000,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', agent: false, headers, ...tls }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), text }),
      );
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () =>
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: 'TIMEOUT' })),
    );
    req.on('error', reject);
    req.end();
  });
}

/** A request with another method (the simulator answers 405). */
export function send(method: string, url: string, tls: ClientTls): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, agent: false, ...tls }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** JSON of a reply, parsed (the tests then check it with a schema). */
export function json(reply: Reply): unknown {
  return JSON.parse(reply.text);
}

/** The same 16-character key in the query and the header, as §5.1 and §5.2 ask. */
export const XRFKEY = 'aB3dE5gH7jK9mN1p';
export const withKey = (url: string, name = 'Xrfkey'): string => `${url}?${name}=${XRFKEY}`;
export const SA_REPOSITORY = 'UserDirectory=Internal; UserId=sa_repository';

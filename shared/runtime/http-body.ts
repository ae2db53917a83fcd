/**
 * Reading a request's body within limits, for Svc's own HTTP servers: the local audit gateway
 * (functions/local/gateway/) and the web view's POSTs (edge-agent/endpoints/web/server.ts).
 */
import type { IncomingMessage } from 'node:http';

/** The announced body length; null without the header (chunked, or no body). Node has checked its syntax. */
export function announcedLength(req: IncomingMessage): number | null {
  const value = req.headers['content-length'];
  return value === undefined ? null : Number(value);
}

/** A body read whole, or why not: it passed the limit, took too long, or the client went away. */
export type BodyResult =
  | { kind: 'body'; body: Buffer }
  | { kind: 'too-large' }
  | { kind: 'timeout' }
  | { kind: 'gone' };

/**
 * Reads the body, but no more than `maxBytes` and for no longer than `timeoutMs`: it settles as
 * soon as either is passed, without waiting for the rest (which is then discarded until the
 * answer closes the connection).
 */
export function readBody(req: IncomingMessage, maxBytes: number, timeoutMs: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const settle = (result: BodyResult) => {
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onGone);
      req.off('close', onGone);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) settle({ kind: 'too-large' });
      else chunks.push(chunk);
    };
    const onEnd = () => settle({ kind: 'body', body: Buffer.concat(chunks) });
    // The client went away, or Node answered for us (clientError): nothing to answer.
    const onGone = () => settle({ kind: 'gone' });
    const timer = setTimeout(() => settle({ kind: 'timeout' }), timeoutMs);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onGone);
    req.on('close', onGone);
  });
}

/**
 * A raw HTTP/1.1 client over node:net, for what http.request will not do: trickle headers or a
 * body, announce a body it never sends, hold a connection open, read an answer that arrives
 * before the request is complete. Loopback only: it connects to 127.0.0.1 from a 127.0.0.x address.
 */
import { connect, type Socket } from 'node:net';
import { type ApiResponse, toApiResponse } from './audit.js';

export interface RawClient {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves when the connection is closed (by either side, reset included), with everything received. */
  closed: Promise<string>;
  /** Whether the server has closed its side (or the connection is gone). */
  isClosed(): boolean;
  /** Writes unless the connection is gone; false when it was. */
  write(text: string | Buffer): boolean;
  /** Resolves with the next complete answer after `skip` characters of what was received (100 Continue included). */
  answer(skip?: number): Promise<RawAnswer>;
}

export interface RawAnswer extends ApiResponse {
  /** Characters of the received text up to the end of this answer. */
  end: number;
}

/** The first complete answer in `text` from `offset`, or null while it is incomplete. */
export function parseAnswer(text: string, offset = 0): RawAnswer | null {
  const headEnd = text.indexOf('\r\n\r\n', offset);
  if (headEnd < 0) return null;
  const [statusLine = '', ...lines] = text.slice(offset, headEnd).split('\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 'NaN');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  // The gateway's answers are ASCII JSON or empty, so characters are bytes here.
  const length = Number(headers['content-length'] ?? '0');
  const bodyStart = headEnd + 4;
  if (text.length < bodyStart + length) return null;
  const body = text.slice(bodyStart, bodyStart + length);
  return { ...toApiResponse(status, headers, body), end: bodyStart + length };
}

/** Connects from `localAddress` (a 127.0.0.x address) to the port on 127.0.0.1. */
export function rawClient(port: number, localAddress = '127.0.0.1'): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    let text = '';
    let ended = false;
    const waiting = new Set<() => void>();
    const wake = () => {
      for (const w of waiting) w();
    };
    const socket = connect({ port, host: '127.0.0.1', localAddress });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      wake();
    });
    const closed = new Promise<string>((done) =>
      socket.once('close', () => {
        ended = true;
        wake();
        done(text);
      }),
    );
    socket.on('end', () => {
      ended = true;
      wake();
    });
    // A reset by the server is one of the outcomes under test, not a failure of the client.
    socket.on('error', () => undefined);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve({
        socket,
        received: () => text,
        closed,
        isClosed: () => ended,
        write: (data) => {
          if (ended || socket.destroyed) return false;
          socket.write(data);
          return true;
        },
        answer: (skip = 0) =>
          new Promise<RawAnswer>((done, fail) => {
            const check = () => {
              const answer = parseAnswer(text, skip);
              if (answer) {
                waiting.delete(check);
                done(answer);
              } else if (ended) {
                waiting.delete(check);
                fail(
                  new Error(
                    `the connection closed without a complete answer; received ${JSON.stringify(text.slice(skip))}`,
                  ),
                );
              }
            };
            waiting.add(check);
            check();
          }),
      });
    });
    socket.once('error', reject);
  });
}

/** Writes `text` a piece at a time, one piece per `intervalMs`, until it is all sent or the connection is gone; resolves with the pieces sent. */
export function trickle(client: RawClient, text: string, pieceLength: number, intervalMs: number): Promise<number> {
  return new Promise((resolve) => {
    let sent = 0;
    const timer = setInterval(() => {
      if (
        sent * pieceLength >= text.length ||
        !client.write(text.slice(sent * pieceLength, (sent + 1) * pieceLength))
      ) {
        clearInterval(timer);
        resolve(sent);
        return;
      }
      sent++;
    }, intervalMs);
  });
}

/** Helpers for UDP listener tests: configs, a loopback sender, polling until a condition holds, a recording queue. */
import dgram from 'node:dgram';
import { parseConfigText } from '../../shared/config/load.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { decodeMessage, isClaimCheck } from '../../shared/queue/codec.js';
import type { QueuedEvent } from '../../shared/queue/events.js';
import {
  type EncodedEventQueue,
  type EncodedMessage,
  type EventQueue,
  QueueFullError,
  SQS_MAX_MESSAGE_BYTES,
} from '../../shared/queue/port.js';
import { LOOPBACK, sleep } from './ports.js';

/** A config from YAML lines under `Svc:` (each indented by 2 already). */
export function svcConfig(lines: readonly string[]): SvcConfig {
  return parseConfigText(`${['Svc:', ...lines].join('\n')}\n`, 'test.yaml', {}).config;
}

/**
 * Sends `payloads` to `127.0.0.1:port` from one socket bound to `from` (any 127.0.0.0/8 address),
 * at most `inFlight` sends outstanding; resolves when every send completed.
 */
export async function sendDatagrams(
  port: number,
  payloads: readonly (Buffer | string)[],
  options: { from?: string; inFlight?: number } = {},
): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, options.from ?? LOOPBACK, () => resolve());
  });
  const limit = options.inFlight ?? 64;
  let next = 0;
  await new Promise<void>((resolve, reject) => {
    let outstanding = 0;
    const pump = () => {
      while (outstanding < limit && next < payloads.length) {
        const payload = payloads[next] as Buffer | string;
        next += 1;
        outstanding += 1;
        socket.send(payload, port, LOOPBACK, (err) => {
          outstanding -= 1;
          if (err) reject(err);
          else if (next >= payloads.length && outstanding === 0) resolve();
          else pump();
        });
      }
      if (payloads.length === 0) resolve();
    };
    pump();
  });
  await new Promise<void>((resolve) => socket.close(() => resolve()));
}

/** Polls `check` every `intervalMs` until it returns true (or throws the last failure after `timeoutMs`). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 5_000,
  what = 'condition',
  intervalMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/**
 * The EventQueue port's in-memory stand-in: records what it is given, or refuses it as a full
 * queue does (`refuse`). Suites that need the real durable queue use LocalEventQueue.
 */
export class RecordingQueue implements EventQueue, EncodedEventQueue {
  readonly events: QueuedEvent[] = [];
  /** Event count of each message taken through sendEncoded (the event batcher's way in). */
  readonly messages: number[] = [];
  readonly maxMessageBytes = SQS_MAX_MESSAGE_BYTES;
  refuse = false;
  send(events: readonly QueuedEvent[]): Promise<void> {
    if (this.refuse) return Promise.reject(new QueueFullError(1));
    this.events.push(...events);
    return Promise.resolve();
  }
  /** Decodes the message with the queue codec (as a destination's consumer does) and records its events. */
  sendEncoded(message: EncodedMessage): Promise<void> {
    if (this.refuse) return Promise.reject(new QueueFullError(1));
    const decoded = decodeMessage(message.body);
    if (!decoded.ok) return Promise.reject(new Error(decoded.error));
    if (isClaimCheck(decoded.message)) return Promise.reject(new Error('unexpected claim check'));
    if (decoded.message.events.length !== message.events)
      return Promise.reject(
        new Error(`message says ${message.events} events, its body holds ${decoded.message.events.length}`),
      );
    this.messages.push(message.events);
    this.events.push(...decoded.message.events);
    return Promise.resolve();
  }
}

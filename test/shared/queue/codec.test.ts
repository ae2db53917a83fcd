import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../shared/audit/envelope.js';
import {
  decodeMessage,
  encodeClaimCheck,
  encodePacked,
  isClaimCheck,
  packEventBodies,
  packEventBytes,
  packEvents,
} from '../../../shared/queue/codec.js';
import type { AuditQueuedEvent, QueuedEvent } from '../../../shared/queue/events.js';
import type { SendableEvent } from '../../../shared/queue/port.js';
import { auditQueued, envelope } from '../../support/audit.js';

/** A queued audit event around a valid envelope; `over` replaces envelope members. */
function queued(over: Record<string, unknown> = {}): AuditQueuedEvent {
  const checked = validateEnvelope(envelope(over));
  if (!checked.ok) throw new Error(`invalid test envelope: ${JSON.stringify(checked.errors)}`);
  return {
    kind: 'audit',
    id: randomUUID(),
    receivedAt: '2026-11-22T10:15:23.001Z',
    meta: { clientIp: '10.1.2.3', clientVersion: '0.3.2' },
    event: checked.envelope,
  };
}

const sheet = (title: string) => ({ payload: { context: { appId: randomUUID() }, event: { sheetTitle: title } } });
const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

function decodeEvents(body: string): QueuedEvent[] {
  const result = decodeMessage(body);
  if (!result.ok) throw new Error(result.error);
  if (!('events' in result.message)) throw new Error('a claim check, not a packed message');
  return result.message.events;
}

function errorOf(body: string): string {
  const result = decodeMessage(body);
  if (result.ok) throw new Error('decoded, but should have been refused');
  return result.error;
}

describe('packEvents / decodeMessage', () => {
  it('round-trips packed messages, several bodies, in order', () => {
    const events = Array.from({ length: 20 }, (_, i) => queued(sheet(`Übersicht ${i} — 日本語 😀 ✓`)));
    const bodies = packEvents(events, 3000);
    expect(bodies.length).toBeGreaterThan(3);
    for (const body of bodies) expect(decodeMessage(body)).toMatchObject({ ok: true, message: { v: 1 } });
    expect(bodies.flatMap(decodeEvents)).toEqual(events);
  });

  it('fills a body up to maxBytes exactly, counting UTF-8 bytes rather than characters', () => {
    // 3-byte characters: a packer that counted string length would fit all three in one body.
    const [a, b, c] = [
      queued(sheet('日'.repeat(600))),
      queued(sheet('本'.repeat(600))),
      queued(sheet('語'.repeat(600))),
    ];
    const two = encodePacked([a, b]);
    const limit = bytes(two);
    expect(encodePacked([a, b, c]).length).toBeLessThan(limit);

    const exact = packEvents([a, b, c], limit);
    expect(exact).toEqual([two, encodePacked([c])]);
    expect(bytes(exact[0] ?? '')).toBe(limit);

    expect(packEvents([a, b, c], limit - 1)).toEqual([encodePacked([a]), encodePacked([b]), encodePacked([c])]);
    expect(packEvents([a, b, c], bytes(encodePacked([a, b, c])))).toEqual([encodePacked([a, b, c])]);
  });

  it('packs greedily within maxBytes for any unicode content (property)', () => {
    const arbEvents = fc
      .array(fc.string({ unit: 'binary', maxLength: 200 }), { minLength: 1, maxLength: 25 })
      .map((titles) => titles.map((t) => queued(sheet(t))));
    fc.assert(
      fc.property(arbEvents, fc.integer({ min: 200, max: 4000 }), (events, maxBytes) => {
        const packed = packEventBodies(events, maxBytes);
        expect(packed.flatMap((p) => decodeEvents(p.body))).toEqual(events);
        packed.forEach((p, i) => {
          expect(p.bytes).toBe(bytes(p.body));
          // Within the limit, or a single event too large on its own.
          if (p.bytes > maxBytes) expect(p.events).toHaveLength(1);
          // Greedy: the next body's first event did not fit into this one.
          const next = packed[i + 1]?.events[0];
          if (next) expect(bytes(encodePacked([...p.events, next]))).toBeGreaterThan(maxBytes);
        });
      }),
      { numRuns: 100 },
    );
  });

  it('packs as bytes exactly the bodies packEventBodies makes, for any unicode content, one event or many, split or not (property)', () => {
    const arbEvents = fc
      .array(fc.string({ unit: 'binary', maxLength: 200 }), { minLength: 1, maxLength: 12 })
      .map((titles) => titles.map((t) => queued(sheet(`${t}\uFFFF`))));
    fc.assert(
      fc.property(arbEvents, fc.integer({ min: 200, max: 8000 }), (events, maxBytes) => {
        const packed = packEventBytes(events, maxBytes);
        const bodies = packEventBodies(events, maxBytes);
        expect(packed.map((p) => p.bytes.toString('utf8'))).toEqual(bodies.map((b) => b.body));
        expect(packed.map((p) => p.events)).toEqual(bodies.map((b) => b.events));
        // Buffers of their own, not slices of Node's shared pool (the queue keeps them).
        for (const p of packed)
          expect(p.bytes.byteOffset === 0 && p.bytes.buffer.byteLength === p.bytes.length).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('puts an event larger than maxBytes in a body of its own', () => {
    const small1 = queued(sheet('before'));
    const big = queued(sheet('x'.repeat(5000)));
    const small2 = queued(sheet('after'));
    const small3 = queued(sheet('after, too'));
    const bodies = packEvents([small1, big, small2, small3], 2000);
    expect(bodies).toEqual([encodePacked([small1]), encodePacked([big]), encodePacked([small2, small3])]);
    expect(bytes(bodies[1] ?? '')).toBeGreaterThan(2000);
  });

  it('escapes U+FFFE and U+FFFF, which SQS refuses, and decodes them back', () => {
    const event = queued(sheet('odd \uFFFF and \uFFFE end'));
    const [body] = packEvents([event], 10_000);
    expect(body).toBeDefined();
    expect(body).not.toMatch(/[\uFFFE\uFFFF]/);
    expect(decodeEvents(body ?? '')).toEqual([event]);
    // Several events in one body (packed with one JSON.stringify): the same text as event by event.
    const other = queued(sheet('\uFFFE first'));
    const [both] = packEvents([event, other], 10_000);
    expect(both).toBe(encodePacked([event, other]));
    expect(both).not.toMatch(/[\uFFFE\uFFFF]/);
    // Either one alone is found and escaped too (they are looked for one at a time).
    for (const title of ['only \uFFFF', 'only \uFFFE']) {
      const alone = queued(sheet(title));
      const [text] = packEvents([alone], 10_000);
      expect(text).not.toMatch(/[\uFFFE\uFFFF]/);
      expect(decodeEvents(text ?? '')).toEqual([alone]);
    }
  });

  it('decodes a claim-check message', () => {
    const body = encodeClaimCheck({ bucket: 'b', key: 'claim-checks/2026/11/22/x.json' }, 3);
    const result = decodeMessage(body);
    expect(result).toEqual({
      ok: true,
      message: { v: 1, claimCheck: { bucket: 'b', key: 'claim-checks/2026/11/22/x.json', events: 3 } },
    });
    expect(result.ok && isClaimCheck(result.message)).toBe(true);
  });
});

describe('EncodedEvent: an event encoded from the text its sender has', () => {
  it('encodes the event from its known text (every packer); the event sent alone is its JSON.stringify', () => {
    const known = (e: QueuedEvent) => JSON.stringify(e).replace(/,"/g, ', "');
    for (const pack of [
      (events: SendableEvent[]) => encodePacked(events),
      (events: SendableEvent[]) =>
        packEventBytes(events, 1 << 20)
          .map((p) => p.bytes.toString('utf8'))
          .join(''),
      (events: SendableEvent[]) =>
        packEventBodies(events, 1 << 20)
          .map((p) => p.body)
          .join(''),
      // Too small for both in one body: packed one by one.
      (events: SendableEvent[]) =>
        packEventBodies(events, Buffer.byteLength(known(events[0] as QueuedEvent)) + 40)
          .map((p) => p.body)
          .join('|'),
    ]) {
      const plain = auditQueued();
      const spliced = auditQueued();
      const first = pack([plain, { event: spliced, json: known(spliced) }]);
      expect(first).toContain(known(spliced));
      expect(first).toContain(JSON.stringify(plain));
      const again = pack([plain, spliced]);
      expect(again).not.toContain(known(spliced));
      expect(again).toContain(JSON.stringify(spliced));
    }
  });
  it('keeps the event of an EncodedEvent for the consumers in this process, not the wrapper or its text', () => {
    const event = auditQueued();
    const sent = { event, json: JSON.stringify(event) };
    expect(packEventBytes([sent], 1 << 20)[0]?.events[0]).toBe(event);
    expect(packEventBodies([sent, auditQueued()], 1 << 20)[0]?.events[0]).toBe(event);
    expect(packEventBodies([sent, auditQueued()], 100)[0]?.events[0]).toBe(event);
  });
});

describe('decodeMessage refuses bad bodies with a clear error', () => {
  const good = queued();

  it('malformed JSON', () => {
    expect(errorOf('{"v":1,"events":[')).toMatch(/^queue message is not valid JSON: /);
  });

  it('not an object', () => {
    expect(errorOf('[1,2]')).toBe('queue message must be a JSON object');
  });

  it('an unknown version', () => {
    expect(errorOf(JSON.stringify({ v: 2, events: [good] }))).toBe(
      'unsupported queue message version 2 (this reader understands v=1)',
    );
    expect(errorOf(JSON.stringify({ events: [good] }))).toBe(
      'unsupported queue message version undefined (this reader understands v=1)',
    );
  });

  it('an audit event whose envelope is invalid', () => {
    const badTime = { ...good, id: 'evt-2', event: { ...good.event, timestamp: 'yesterday' } };
    expect(errorOf(JSON.stringify({ v: 1, events: [good, badTime] }))).toBe(
      'invalid queue message: events[1] (audit id evt-2) is invalid: /events/1/event/timestamp: must be an RFC 3339 date-time with a zone',
    );
    const { eventId: _omit, ...noId } = good.event;
    expect(errorOf(JSON.stringify({ v: 1, events: [{ ...good, event: noId }] }))).toMatch(
      /^invalid queue message: events\[0\] \(audit id [0-9a-f-]{36}\) is invalid: \/events\/0\/event: must have property 'eventId'$/,
    );
  });

  it('an audit event with bad queue members', () => {
    const bad = { ...good, meta: { clientIp: '10.0.0.1', clientVersion: 3 } };
    expect(errorOf(JSON.stringify({ v: 1, events: [bad] }))).toMatch(
      /events\[0\] \(audit id .*\) is invalid: \/events\/0\/meta\/clientVersion: must be string/,
    );
  });

  it('an unknown event kind', () => {
    expect(errorOf(JSON.stringify({ v: 1, events: [good, { ...good, kind: 'metrics' }] }))).toBe(
      'invalid queue message: events[1]: unknown event kind "metrics" (known: audit, user-event, log-event, points, health, user-sessions)',
    );
  });

  it('edge events with a bad point time or a log event of an unknown shape', () => {
    const user = {
      kind: 'user-event',
      id: 'u-1',
      receivedAt: '2026-11-22T10:00:00.000Z',
      timeNs: '17x',
      event: {
        messageType: 'qseow-proxy-session',
        host: 'N1',
        command: 'Start session',
        user_directory: 'LAB',
        user_id: 'goran',
        user_full: 'LAB\\goran',
        origin: '',
        context: '/hub/',
        message: '',
      },
    };
    expect(errorOf(JSON.stringify({ v: 1, events: [user] }))).toBe(
      'invalid queue message: events[0] (user-event id u-1) is invalid: /events/0/timeNs: must match pattern "^[0-9]{1,19}$"',
    );
    expect(decodeMessage(JSON.stringify({ v: 1, events: [{ ...user, timeNs: '1710233120000000004' }] })).ok).toBe(true);
    const points = {
      kind: 'points',
      id: 'p-1',
      receivedAt: '2026-11-22T10:00:00.000Z',
      module: 'EVENT_COUNTS',
      points: [{ measurement: 'event_count', tags: {}, fields: { counter: { type: 'int', value: 1.5 } }, timeNs: '1' }],
    };
    expect(errorOf(JSON.stringify({ v: 1, events: [points] }))).toMatch(
      /^invalid queue message: events\[0\] \(points id p-1\) is invalid: \/events\/0\/points\/0\/fields\/counter/,
    );
  });

  it('no events, or unexpected members', () => {
    expect(errorOf(JSON.stringify({ v: 1, events: [] }))).toBe(
      'invalid queue message: /events: must NOT have fewer than 1 items',
    );
    expect(errorOf(JSON.stringify({ v: 1, events: [good], extra: true }))).toBe(
      "invalid queue message: /: unexpected property 'extra'",
    );
  });

  it('a malformed claim check', () => {
    expect(errorOf(JSON.stringify({ v: 1, claimCheck: { bucket: 'b', key: 'k', events: 0 } }))).toBe(
      'invalid claim-check message: /claimCheck/events: must be >= 1',
    );
  });
});

/** The audit event's tsdb point time: decided when queued, and only the writer's when absent or unstorable. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUDIT_COLUMNS, auditTimeMs, MAX_PAYLOAD_JSON } from '../../../../shared/audit/datamodel.js';
import { LineBuffer } from '../../../../shared/destinations/tsdb/line-buffer.js';
import { str, toLine } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { auditPoint, pointToJson } from '../../../../shared/destinations/tsdb/mappers.js';
import { PointClock } from '../../../../shared/queue/point-clock.js';
import { auditQueued } from '../../../support/audit.js';

describe('audit point time', () => {
  it("uses the time decided at queueing, whatever the writer's clock says (a redelivery overwrites itself)", () => {
    const q = { ...auditQueued(), timeNs: '1763806522123000042' };
    const a = auditPoint(q, 'audit_events', [], new PointClock(7));
    const b = auditPoint(q, 'audit_events', [], new PointClock(999));
    expect(a.timeNs).toBe(1763806522123000042n);
    expect(b.timeNs).toBe(a.timeNs);
  });

  it('decides it from the event time and the clock for an event queued without one (an older Svc)', () => {
    const q = auditQueued({ timestamp: '2026-11-22T10:15:22.123Z' });
    expect(auditPoint(q, 'audit_events', [], new PointClock(5)).timeNs).toBe(
      BigInt(Date.parse('2026-11-22T10:15:22.123Z')) * 1_000_000n + 5n,
    );
  });

  it("uses the time Svc received the event when the tsdb cannot store the event's own time", () => {
    for (const timestamp of [
      '0000-02-29T00:00:00Z',
      '1969-12-31T23:59:59.999Z',
      '2262-04-12T00:00:00Z',
      '9999-12-31T23:59:59Z',
    ]) {
      const q = { ...auditQueued({ timestamp }), receivedAt: '2026-11-24T08:00:00.000Z' };
      expect(auditTimeMs(q), timestamp).toBe(Date.parse('2026-11-24T08:00:00.000Z'));
    }
    expect(auditTimeMs(auditQueued({ timestamp: '1970-01-01T00:00:00Z' }))).toBe(0);
    expect(auditTimeMs(auditQueued({ timestamp: '2262-04-11T23:47:16.854Z' }))).toBe(9_223_372_036_854);
  });
});

describe('audit point payload field', () => {
  const payloadColumn = AUDIT_COLUMNS.find((c) => c.name === 'payload');
  const text = fc.string({
    unit: fc.constantFrom('"', '\\', 'a', 'é', '\n', '\u0000', '\ud800', '\udc00', '\u{1F600}', '\u2028'),
  });

  it("is written as the data model column's text, quoted, byte for byte (the point holds the payload, not its text)", () => {
    const base = auditQueued();
    const long = { s: `${'x'.repeat(MAX_PAYLOAD_JSON - 7)}\u{1F600}tail` }; // cut between the halves of the emoji
    fc.assert(
      fc.property(
        fc.oneof(fc.dictionary(text, fc.jsonValue()), fc.dictionary(text, text), fc.constant(long)),
        (extra) => {
          const q = { ...base, event: { ...base.event, payload: { ...base.event.payload, ...extra } } };
          const point = auditPoint(q, 'audit_events', [], new PointClock(1));
          const cell = payloadColumn?.get(q);
          expect(typeof cell).toBe('string');
          const asText = { ...point, fields: { ...point.fields, payload: str(String(cell)) } };
          expect(toLine(point)).toBe(toLine(asText));
          const lines = new LineBuffer();
          const span = lines.add(point);
          // Buffer.equals: toEqual compares 32 KB element by element, slowly.
          expect(Buffer.from(lines.chunk([span]).body).equals(Buffer.from(toLine(asText), 'utf8'))).toBe(true);
          expect(pointToJson(point).fields.payload).toEqual({ type: 'string', value: cell });
        },
      ),
      { numRuns: 300 },
    );
  });
});

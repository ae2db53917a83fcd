/** The audit event's tsdb point time: decided when queued, and only the writer's when absent or unstorable. */
import { describe, expect, it } from 'vitest';
import { auditTimeMs } from '../../../../shared/audit/datamodel.js';
import { PointClock } from '../../../../shared/destinations/tsdb/line-protocol.js';
import { auditPoint } from '../../../../shared/destinations/tsdb/mappers.js';
import { auditQueued } from '../../../support/audit.js';

describe('audit point time', () => {
  it('uses the time decided at queueing, whatever the writer\'s clock says (a redelivery overwrites itself)', () => {
    const q = { ...auditQueued(), timeNs: '1763806522123000042' };
    const a = auditPoint(q, 'audit_events', [], new PointClock(7));
    const b = auditPoint(q, 'audit_events', [], new PointClock(999));
    expect(a.timeNs).toBe(1763806522123000042n);
    expect(b.timeNs).toBe(a.timeNs);
  });

  it('decides it from the event time and the clock for an event queued without one (an older Svc)', () => {
    const q = auditQueued({ timestamp: '2026-11-22T10:15:22.123Z' });
    expect(auditPoint(q, 'audit_events', [], new PointClock(5)).timeNs).toBe(BigInt(Date.parse('2026-11-22T10:15:22.123Z')) * 1_000_000n + 5n);
  });

  it('uses the time Svc received the event when the tsdb cannot store the event\'s own time', () => {
    for (const timestamp of ['0000-02-29T00:00:00Z', '1969-12-31T23:59:59.999Z', '2262-04-12T00:00:00Z', '9999-12-31T23:59:59Z']) {
      const q = { ...auditQueued({ timestamp }), receivedAt: '2026-11-24T08:00:00.000Z' };
      expect(auditTimeMs(q), timestamp).toBe(Date.parse('2026-11-24T08:00:00.000Z'));
    }
    expect(auditTimeMs(auditQueued({ timestamp: '1970-01-01T00:00:00Z' }))).toBe(0);
    expect(auditTimeMs(auditQueued({ timestamp: '2262-04-11T23:47:16.854Z' }))).toBe(9_223_372_036_854);
  });
});

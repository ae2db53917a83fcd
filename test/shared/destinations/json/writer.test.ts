import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../../shared/audit/envelope.js';
import { compactUtc, JsonObjectDataWriter } from '../../../../shared/destinations/json/writer.js';
import type { AuditQueuedEvent } from '../../../../shared/queue/events.js';
import { envelope } from '../../../support/audit.js';

function queued(over: Record<string, unknown> = {}): AuditQueuedEvent {
  const checked = validateEnvelope(envelope(over));
  if (!checked.ok) throw new Error('fixture envelope is invalid');
  return {
    kind: 'audit',
    id: checked.envelope.eventId,
    receivedAt: '2026-11-22T10:15:23.000Z',
    event: checked.envelope,
    meta: { clientIp: '127.0.0.1', clientVersion: null },
  };
}

function writer(dir: string) {
  return new JsonObjectDataWriter({ enable: true, exportDirectory: dir, staticTags: [{ name: 'env', value: 'prod' }] });
}

const withObjectData = (eventId: string, timestamp = '2026-11-22T11:15:22.123+01:00') =>
  queued({
    eventId,
    timestamp,
    type: 'object.visibility.changed',
    payload: {
      context: { appId: 'E7AF59A0-C243-480D-9571-08727551A66F' },
      event: { objectData: { qId: 'obj1', hyperCube: { rows: 3 } } },
    },
  });

describe('JSON object-data writer', () => {
  it('writes one file per event, named by event time (UTC) and eventId, with static tags', () => {
    const dir = mkdtempSync(join(tmpdir(), 'objectdata-'));
    const path = writer(dir).write(withObjectData('4f1d2c3b-0a9e-4d8c-b7a6-5e4f3d2c1b0a'));
    expect(path).toBe(join(dir, '20261122T101522123Z_4f1d2c3b-0a9e-4d8c-b7a6-5e4f3d2c1b0a.json'));
    expect(JSON.parse(readFileSync(path ?? '', 'utf8'))).toEqual({
      eventId: '4f1d2c3b-0a9e-4d8c-b7a6-5e4f3d2c1b0a',
      type: 'object.visibility.changed',
      timestamp: '2026-11-22T11:15:22.123+01:00',
      receivedAt: '2026-11-22T10:15:23.000Z',
      correlationId: '42',
      appId: 'e7af59a0-c243-480d-9571-08727551a66f',
      tags: { env: 'prod' },
      objectData: { qId: 'obj1', hyperCube: { rows: 3 } },
    });
    expect(readdirSync(dir)).toHaveLength(1); // no temp file left
  });

  it('writes nothing for an event without payload.event.objectData', () => {
    const dir = mkdtempSync(join(tmpdir(), 'objectdata-'));
    expect(writer(dir).write(queued())).toBeNull();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('does not make a second file for the same eventId, also after a restart', () => {
    const dir = mkdtempSync(join(tmpdir(), 'objectdata-'));
    const id = 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d';
    const first = writer(dir);
    expect(first.write(withObjectData(id))).not.toBeNull();
    expect(first.write(withObjectData(id))).toBeNull();
    expect(first.write(withObjectData(id.toUpperCase(), '2026-11-22T12:00:00Z'))).toBeNull();
    expect(writer(dir).write(withObjectData(id))).toBeNull(); // a new process: the file itself says it was written
    expect(readdirSync(dir)).toEqual([`${compactUtc('2026-11-22T11:15:22.123+01:00')}_${id}.json`]);
  });
});

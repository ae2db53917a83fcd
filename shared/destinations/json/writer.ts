/**
 * The JSON object-data destination (`auditEvents.destination.json.objectdata`): one file per audit
 * event that carries `payload.event.objectData`, written at once and atomically (temp file, then a
 * hard link that never replaces an existing file). The name holds the event time and eventId:
 * `<YYYYMMDDTHHmmssSSSZ>_<eventId>.json`. The same eventId twice makes no second file.
 */
import { randomBytes } from 'node:crypto';
import { linkSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AuditEnvelope } from '../../audit/envelope.js';
import type { SvcConfig } from '../../config/schema.js';
import type { AuditQueuedEvent } from '../../queue/events.js';
import { makeDirectorySynced, syncDirectory, writeFileSynced } from '../../util/files.js';
import { RecentIds } from '../../util/recent-ids.js';
import { getPath, isRecord } from '../../util/records.js';

export interface ObjectDataFile {
  eventId: string;
  type: string;
  timestamp: string;
  receivedAt: string;
  correlationId: string | null;
  appId: string | null;
  tags: Record<string, string>;
  objectData: Record<string, unknown>;
}

/** `payload.event.objectData` when it is an object. */
export function objectDataOf(envelope: AuditEnvelope): Record<string, unknown> | undefined {
  const objectData = getPath(envelope.payload, ['event', 'objectData']);
  return isRecord(objectData) ? objectData : undefined;
}

/** `2026-11-22T10:15:22.123+01:00` → `20261122T091522123Z` (UTC, sortable, safe on every filesystem). */
export function compactUtc(timestamp: string): string {
  return new Date(timestamp).toISOString().replace(/[-:.]/g, '');
}

export class JsonObjectDataWriter {
  private readonly dir: string;
  private readonly tags: Record<string, string>;
  /**
   * Only spares a redelivery its temp file: the hard link already refuses a second file. 10,000
   * ids hold ≈ 0.8 MB; the 100,000 before held ≈ 8 MB of live heap after 100,000 events.
   */
  private readonly recent = new RecentIds(10_000);
  private dirReady = false;
  /** Files were linked into the folder since its last sync (`syncNames`). */
  private namesUnsynced = false;

  constructor(settings: SvcConfig['auditEvents']['destination']['json']['objectdata']) {
    this.dir = resolve(settings.exportDirectory);
    this.tags = Object.fromEntries(settings.staticTags.map((t) => [t.name, t.value]));
  }

  /** Writes the file for one event; returns its path, or null when the event has no objectData or was written before. */
  write(queued: AuditQueuedEvent): string | null {
    const envelope = queued.event;
    const objectData = objectDataOf(envelope);
    if (!objectData) return null;
    const eventId = envelope.eventId.toLowerCase();
    if (this.recent.has(eventId)) return null;
    if (!this.dirReady) {
      makeDirectorySynced(this.dir);
      this.dirReady = true;
    }
    const appId = getPath(envelope.payload, ['context', 'appId']);
    const file: ObjectDataFile = {
      eventId,
      type: envelope.type,
      timestamp: envelope.timestamp,
      receivedAt: queued.receivedAt,
      correlationId: envelope.correlationId ?? null,
      appId: typeof appId === 'string' ? appId.toLowerCase() : null,
      tags: this.tags,
      objectData,
    };
    const finalPath = join(this.dir, `${compactUtc(envelope.timestamp)}_${eventId}.json`);
    const tempPath = join(this.dir, `.${eventId}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
    writeFileSynced(tempPath, `${JSON.stringify(file, null, 2)}\n`, { exclusive: true });
    let written: string | null = finalPath;
    try {
      linkSync(tempPath, finalPath);
      this.namesUnsynced = true;
    } catch (err) {
      if (!(err instanceof Error && 'code' in err && err.code === 'EEXIST')) throw err;
      written = null; // written before (a redelivery): keep the first
    } finally {
      unlinkSync(tempPath);
    }
    this.recent.add(eventId);
    return written;
  }

  /**
   * Syncs the folder once the files of a batch are written: each file's data is synced as it is
   * written, but its name (the hard link) is durable only once the folder is. One folder sync per
   * batch instead of one per file. Throws when it fails; the next call tries again.
   */
  syncNames(): void {
    if (!this.namesUnsynced) return;
    syncDirectory(this.dir);
    this.namesUnsynced = false;
  }
}

/** Audit file destinations: one file per delivered batch and event date, to a directory or to S3. */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../../shared/audit/envelope.js';
import {
  AuditFileDestination,
  batchFileName,
  type TableEncoder,
} from '../../../../shared/destinations/files/destination.js';
import { encodeParquet, parquetChunks } from '../../../../shared/destinations/files/parquet.js';
import { DirectorySink, type FileSink, S3Sink } from '../../../../shared/destinations/files/sink.js';
import type { QueuedEvent } from '../../../../shared/queue/events.js';
import { captureLog, envelope } from '../../../support/audit.js';
import { type FauxqsHandle, startFauxqs } from '../../../support/fauxqs.js';

function queued(timestamp: string): QueuedEvent {
  const checked = validateEnvelope(envelope({ timestamp }));
  if (!checked.ok) throw new Error('fixture envelope is invalid');
  return {
    kind: 'audit',
    id: checked.envelope.eventId,
    receivedAt: new Date().toISOString(),
    event: checked.envelope,
    meta: { clientIp: '127.0.0.1', clientVersion: '0.3.2' },
  };
}

async function rows(bytes: Uint8Array): Promise<Record<string, unknown>[]> {
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return parquetReadObjects({ file: buffer as ArrayBuffer, columns: ['event_id', 'env'] });
}

async function destination(
  sink: FileSink,
  onError?: (err: unknown) => void,
  encode: TableEncoder = (c, r) => encodeParquet(c, r),
) {
  const { logger } = await captureLog();
  return new AuditFileDestination({
    name: 'parquet',
    extension: 'parquet',
    encode,
    sink,
    staticTags: [{ name: 'env', value: 'prod' }],
    log: logger,
    ...(onError ? { onError } : {}),
  });
}

describe('AuditFileDestination', () => {
  let faux: FauxqsHandle;
  beforeAll(async () => {
    faux = await startFauxqs();
    await faux.createBucket('audit');
  });
  afterAll(() => faux.stop());

  it('writes one file per event date into date folders, named by date and a digest of the event ids', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'files-'));
    const dest = await destination(new DirectorySink(dir));
    const events = [
      queued('2026-11-21T23:59:59.999Z'),
      queued('2026-11-22T00:00:00.000Z'),
      queued('2026-11-22T10:00:00+01:00'),
    ];
    expect(await dest.write(events)).toEqual(new Set());
    expect(readdirSync(dir).sort()).toEqual(['2026-11-21', '2026-11-22']);
    const [file21] = readdirSync(join(dir, '2026-11-21'));
    const [file22] = readdirSync(join(dir, '2026-11-22'));
    expect(file21).toBe(batchFileName('2026-11-21', [events[0]?.id ?? ''], 'parquet').split('/')[1]);
    expect(file22).toMatch(/^audit_events_20261122_[0-9a-f]{16}\.parquet$/);
    const read = await rows(readFileSync(join(dir, '2026-11-22', file22 ?? '')));
    expect(read.map((r) => r['event_id']).sort()).toEqual([events[1]?.id, events[2]?.id].sort());
    expect(read.every((r) => r['env'] === 'prod')).toBe(true);
  });

  it('writes a batch delivered again over its own file (the same events in any order: the same name)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'files-'));
    const dest = await destination(new DirectorySink(dir));
    const events = [queued('2026-11-22T10:00:00.000Z'), queued('2026-11-22T11:00:00.000Z')];
    await dest.write(events);
    await dest.write([...events].reverse());
    const files = readdirSync(join(dir, '2026-11-22'));
    expect(files).toHaveLength(1);
    expect(
      (await rows(readFileSync(join(dir, '2026-11-22', files[0] ?? '')))).map((r) => r['event_id']).sort(),
    ).toEqual(events.map((e) => e.id).sort());
    // Another batch (one event more) is another file.
    await dest.write([...events, queued('2026-11-22T12:00:00.000Z')]);
    expect(readdirSync(join(dir, '2026-11-22'))).toHaveLength(2);
  });

  it('writes to S3 under the prefix', async () => {
    const dest = await destination(new S3Sink({ client: faux.s3, bucket: 'audit', prefix: 'audit-events/' }));
    const events = [queued('2026-11-22T10:15:22.123Z'), queued('2026-11-22T10:15:23.000Z')];
    expect(await dest.write(events)).toEqual(new Set());
    const listed = await faux.s3.send(
      new ListObjectsV2Command({ Bucket: 'audit', Prefix: 'audit-events/2026-11-22/' }),
    );
    expect(listed.Contents).toHaveLength(1);
    const object = await faux.s3.send(new GetObjectCommand({ Bucket: 'audit', Key: listed.Contents?.[0]?.Key }));
    const read = await rows(
      await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray(),
    );
    expect(read.map((r) => r['event_id']).sort()).toEqual(events.map((e) => e.id).sort());
  });

  it('writes a file handed out in chunks (one per row group) to a directory and to S3, whole', async () => {
    const chunked: TableEncoder = (c, r) => parquetChunks(c, r, { rowGroupSize: 1 });
    const events = [
      queued('2026-11-22T10:15:22.123Z'),
      queued('2026-11-22T10:15:23.000Z'),
      queued('2026-11-22T10:15:24.000Z'),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'files-'));
    expect(await (await destination(new DirectorySink(dir), undefined, chunked)).write(events)).toEqual(new Set());
    const [name] = readdirSync(join(dir, '2026-11-22'));
    const local = readFileSync(join(dir, '2026-11-22', name ?? ''));
    expect(
      parquetMetadata(local.buffer.slice(local.byteOffset, local.byteOffset + local.byteLength)).row_groups,
    ).toHaveLength(3);
    expect((await rows(local)).map((r) => r['event_id']).sort()).toEqual(events.map((e) => e.id).sort());

    expect(
      await (
        await destination(new S3Sink({ client: faux.s3, bucket: 'audit', prefix: 'chunked/' }), undefined, chunked)
      ).write(events),
    ).toEqual(new Set());
    const listed = await faux.s3.send(new ListObjectsV2Command({ Bucket: 'audit', Prefix: 'chunked/2026-11-22/' }));
    const object = await faux.s3.send(new GetObjectCommand({ Bucket: 'audit', Key: listed.Contents?.[0]?.Key }));
    const remote = await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
    expect(Buffer.from(remote)).toEqual(local);
  });

  it('leaves neither the file nor a temporary file when its chunks fail half-way, and fails its events', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'files-'));
    const errors: unknown[] = [];
    const halfWay: TableEncoder = function* (c, r) {
      const chunks = parquetChunks(c, r, { rowGroupSize: 1 });
      yield chunks.next().value ?? new Uint8Array();
      throw new Error('the encoder broke after its first row group');
    };
    const dest = await destination(new DirectorySink(dir), (err) => errors.push(err), halfWay);
    const events = [queued('2026-11-22T10:15:22.123Z'), queued('2026-11-22T10:15:23.000Z')];
    expect(await dest.write(events)).toEqual(new Set(events.map((e) => e.id)));
    expect(String(errors[0])).toMatch(/broke after its first row group/);
    expect(readdirSync(join(dir, '2026-11-22'))).toEqual([]);
  });

  it('reports the events of a file it cannot write as failed, and tracks the error', async () => {
    const errors: unknown[] = [];
    const dest = await destination(new S3Sink({ client: faux.s3, bucket: 'no-such-bucket', prefix: '' }), (err) =>
      errors.push(err),
    );
    const events = [queued('2026-11-22T10:15:22.123Z')];
    expect(await dest.write(events)).toEqual(new Set([events[0]?.id]));
    expect(errors).toHaveLength(1);
  });
});

/**
 * Shared pieces of the tsdb writer tests: a full tsdbConfig, a recording logger and error sink,
 * rfc3339 times, and points and writers for the fake InfluxDB.
 */
import { expect } from 'vitest';
import { DestinationWaitError } from '../../../../shared/destinations/port.js';
import { int, type Point, str } from '../../../../shared/destinations/tsdb/line-protocol.js';
import {
  type TsdbConfig,
  type TsdbErrorType,
  TsdbWriter,
  type TsdbWriterOptions,
} from '../../../../shared/destinations/tsdb/writer.js';
import type { Log } from '../../../../shared/logging/log.js';
import type { FakeInflux } from '../../../support/fake-influx.js';

export interface ConfigParts {
  version: 1 | 2 | 3;
  host?: string;
  port: number;
  maxBatchSize?: number;
  tls?: Partial<TsdbConfig['tls']>;
  v1?: Partial<Omit<TsdbConfig['v1Config'], 'auth' | 'retentionPolicy'>> & {
    auth?: TsdbConfig['v1Config']['auth'];
    retentionPolicy?: TsdbConfig['v1Config']['retentionPolicy'];
  };
  v2?: Partial<TsdbConfig['v2Config']>;
  v3?: Partial<TsdbConfig['v3Config']>;
}

/** A complete `SvcConfig['tsdbConfig']` with the schema's defaults and the given parts. */
export function tsdbConfig(parts: ConfigParts): TsdbConfig {
  return {
    enable: true,
    host: parts.host ?? '127.0.0.1',
    port: parts.port,
    version: parts.version,
    maxBatchSize: parts.maxBatchSize ?? 1000,
    tls: { enable: false, caFile: '', rejectUnauthorized: true, ...parts.tls },
    v3Config: {
      database: 'svc',
      description: 'Svc data',
      token: '',
      retentionDuration: '10d',
      writeTimeout: 10_000,
      queryTimeout: 60_000,
      ...parts.v3,
    },
    v2Config: {
      org: 'svc-org',
      bucket: 'svc',
      description: 'Svc data',
      token: 'v2-token',
      retentionDuration: '10d',
      ...parts.v2,
    },
    v1Config: {
      auth: parts.v1?.auth ?? { enable: false, username: '', password: '' },
      dbName: parts.v1?.dbName ?? 'svc',
      retentionPolicy: parts.v1?.retentionPolicy ?? { name: 'svc_rp', duration: '10d' },
    },
    includeFields: { activeDocs: false, loadedDocs: false, inMemoryDocs: false },
  };
}

export interface LogEntry {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

export interface TrackedWriteError {
  type: TsdbErrorType;
  module: string;
  err: unknown;
}

export interface Recorder {
  log: Log;
  entries: LogEntry[];
  errors: TrackedWriteError[];
  onError: (type: TsdbErrorType, module: string, err: unknown) => void;
  at(level: LogEntry['level']): LogEntry[];
  clear(): void;
}

export function recorder(): Recorder {
  const entries: LogEntry[] = [];
  const errors: TrackedWriteError[] = [];
  const add = (level: LogEntry['level']) => (obj: object, msg: string) => {
    entries.push({ level, obj: { ...obj }, msg });
  };
  return {
    log: { debug: add('debug'), info: add('info'), warn: add('warn'), error: add('error') },
    entries,
    errors,
    onError: (type, module, err) => {
      errors.push({ type, module, err });
    },
    at: (level) => entries.filter((e) => e.level === level),
    clear: () => {
      entries.length = 0;
      errors.length = 0;
    },
  };
}

/** A sleep that records the waits and returns at once. */
export function recordingSleep(): { sleep: (ms: number) => Promise<void>; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: (ms) => {
      waits.push(ms);
      return Promise.resolve();
    },
  };
}

/** influxd's RFC3339Nano rendering of a nanosecond timestamp (trailing zeros of the fraction dropped). */
export function rfc3339Nano(ns: bigint): string {
  const ms = ns / 1_000_000n;
  const iso = new Date(Number(ms)).toISOString(); // yyyy-mm-ddThh:mm:ss.mmmZ
  const fraction = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${iso.slice(0, 19)}${fraction === '' ? '' : `.${fraction}`}Z`;
}

const BASE_MS = 1_760_000_000_000;

/** `count` points `<measurement>,host=h1,seq=s<i> n=<i>i,text="value <i>"` at distinct nanosecond times. */
export function points(count: number, measurement = 'm'): Point[] {
  return Array.from({ length: count }, (_, i) => ({
    measurement,
    tags: { host: 'h1', seq: `s${i}` },
    fields: { n: int(i), text: str(`value ${i}`) },
    timeNs: BigInt(BASE_MS + i) * 1_000_000n + BigInt(i),
  }));
}

/** The line count of every write request the fake received, in order. */
export const lineCounts = (fake: FakeInflux): number[] => fake.writes().map((r) => r.body.split('\n').length);

/**
 * A writer for `fake` (org `acme` and token `v2-token` for version 2, token `v3-token` for version 3,
 * as the fakes of the tests are started) that records into `rec` and retries after 1 ms.
 */
export function fakeWriter(
  fake: FakeInflux,
  rec: Recorder,
  parts: Partial<ConfigParts> = {},
  options: Partial<TsdbWriterOptions> = {},
): TsdbWriter {
  const config = tsdbConfig({
    version: fake.version,
    port: fake.port,
    ...parts,
    v2: { org: 'acme', token: 'v2-token', ...parts.v2 },
    v3: { token: 'v3-token', ...parts.v3 },
  });
  return new TsdbWriter({ config, log: rec.log, onError: rec.onError, retryDelaysMs: [1, 1, 1], ...options });
}

/**
 * The events a destination's write left waiting: it must reject with DestinationWaitError (the tsdb
 * could not take anything now), whose event ids are returned.
 */
export async function waiting(write: Promise<ReadonlySet<string>>): Promise<ReadonlySet<string>> {
  const err = await write.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(DestinationWaitError);
  return err instanceof DestinationWaitError ? err.eventIds : new Set();
}

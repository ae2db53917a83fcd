/**
 * The port of what differs between tsdb versions 1, 2 and 3 (platform-formats.md §6.0, the table of
 * write endpoints): the write request and database setup. One adapter per version (v1.ts, v2.ts,
 * v3.ts); the writer (writer.ts) makes the configured one and applies §6.0's batching, retry and
 * error rules to it.
 *
 * No adapter uses a tsdb client library: each version's writes and few setup calls are plain HTTP
 * requests through http.ts, so all three share one HTTP stack, one retry and one error shape.
 */
import type { SvcConfig } from '../../config/schema.js';
import type { Log } from '../../logging/log.js';
import type { TsdbTls } from './tls.js';

export type TsdbConfig = SvcConfig['tsdbConfig'];
export type TsdbVersion = TsdbConfig['version'];

/** What became of one write request. */
export type Outcome =
  | { kind: 'ok' }
  | { kind: 'http'; status: number; message: string; retryAfterMs: number | undefined }
  | { kind: 'network'; code: string; message: string; cause: unknown };
export type Failure = Exclude<Outcome, { kind: 'ok' }>;
/** No HTTP answer: connection refused or reset, host not found, timeout. */
export type NetworkFailure = Extract<Outcome, { kind: 'network' }>;

/** The lines of one write request. */
export interface LineChunk {
  /** The request body: the lines joined by `\n`, UTF-8, built once by the writer (writer.ts). */
  readonly body: Uint8Array;
}

/** One tsdb version's requests. */
export interface TsdbClient {
  /** The write endpoint (scheme, host, path and query; no credentials), for logs and errors. */
  readonly writeUrl: string;
  /** Posts the lines in one request, without retries; never throws for what the tsdb or the network does. */
  send(chunk: LineChunk): Promise<Outcome>;
  /**
   * Creates the database (v1: with the default retention policy), bucket (v2) or database (v3)
   * when missing; an existing one is left as it is. Throws when the tsdb cannot be reached or refuses.
   */
  ensureDatabase(): Promise<void>;
}

export interface TsdbClientOptions {
  config: TsdbConfig;
  /** `tsdbConfig.tls` as read (tls.ts): null for http. */
  tls: TsdbTls | null;
  log: Log;
  /** Timeout of version 1 and 2 requests and of database setup. Version 3 writes use `v3Config.writeTimeout`. */
  requestTimeoutMs: number;
}

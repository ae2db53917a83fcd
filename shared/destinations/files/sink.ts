/** Where finished files go: a local directory or an S3 bucket. */
import { join, resolve } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { joinChunks, writeFileAtomically } from '../../util/files.js';

/** A file's bytes: at once, or in chunks written as they come (each may be a view of a reused buffer). */
export type FileData = Uint8Array | Iterable<Uint8Array>;

/** Where finished files go. */
export interface FileSink {
  readonly description: string;
  /** Stores `data` under `relativePath` (forward slashes); resolves to where it went. */
  put(relativePath: string, data: FileData): Promise<string>;
}

/**
 * A directory on local disk; a file appears complete or not at all (temp file, sync, rename). Chunks
 * are written to the temporary file as they come, so a large file is never whole in memory.
 */
export class DirectorySink implements FileSink {
  private readonly root: string;
  readonly description: string;

  constructor(directory: string) {
    this.root = resolve(directory);
    this.description = this.root;
  }

  put(relativePath: string, data: FileData): Promise<string> {
    const target = join(this.root, ...relativePath.split('/'));
    writeFileAtomically(target, data);
    return Promise.resolve(target);
  }
}

/** An S3 client, or how to make one on first use. */
export type S3ClientSource = S3Client | (() => Promise<S3Client>);

/**
 * An S3 bucket (or an S3-compatible service). The S3 package is imported on the first file, not when
 * the sink is made: a writer function's cold start then does not load the SDK client (bench:bundles).
 */
export class S3Sink implements FileSink {
  readonly description: string;
  private client: Promise<S3Client> | undefined;

  constructor(private readonly options: { client: S3ClientSource; bucket: string; prefix: string }) {
    this.description = `s3://${options.bucket}/${options.prefix}`;
  }

  private s3(): Promise<S3Client> {
    const source = this.options.client;
    if (this.client === undefined) {
      this.client = typeof source === 'function' ? source() : Promise.resolve(source);
      this.client.catch(() => (this.client = undefined));
    }
    return this.client;
  }

  /** Chunks are joined first: one PutObject of a known length (files are one batch, bounded by maxBatchSize). */
  async put(relativePath: string, data: FileData): Promise<string> {
    const key = `${this.options.prefix}${relativePath}`;
    const body = data instanceof Uint8Array ? data : joinChunks(data);
    const [{ PutObjectCommand }, client] = await Promise.all([import('@aws-sdk/client-s3'), this.s3()]);
    await client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: body }));
    return `s3://${this.options.bucket}/${key}`;
  }
}

/** Where finished files go: a local directory or an S3 bucket. */
import { join, resolve } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { writeFileAtomically } from '../../util/files.js';

/** Where finished files go. */
export interface FileSink {
  readonly description: string;
  /** Stores `data` under `relativePath` (forward slashes); resolves to where it went. */
  put(relativePath: string, data: Uint8Array): Promise<string>;
}

/** A directory on local disk; a file appears complete or not at all (temp file, sync, rename). */
export class DirectorySink implements FileSink {
  private readonly root: string;
  readonly description: string;

  constructor(directory: string) {
    this.root = resolve(directory);
    this.description = this.root;
  }

  put(relativePath: string, data: Uint8Array): Promise<string> {
    const target = join(this.root, ...relativePath.split('/'));
    writeFileAtomically(target, data);
    return Promise.resolve(target);
  }
}

/** An S3 bucket (or an S3-compatible service). */
export class S3Sink implements FileSink {
  readonly description: string;

  constructor(private readonly options: { client: S3Client; bucket: string; prefix: string }) {
    this.description = `s3://${options.bucket}/${options.prefix}`;
  }

  async put(relativePath: string, data: Uint8Array): Promise<string> {
    const key = `${this.options.prefix}${relativePath}`;
    await this.options.client.send(new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: data }));
    return `s3://${this.options.bucket}/${key}`;
  }
}

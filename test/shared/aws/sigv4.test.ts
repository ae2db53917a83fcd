/**
 * The signer (shared/aws/sigv4.ts) against the AWS SDK's own SigV4 signer as an oracle (test only):
 * the same request, credentials and date must give the same Authorization header, byte for byte.
 * The oracle's hash is node:crypto behind the SDK's Checksum interface (@aws-crypto is not
 * installed; the SDK itself uses node:crypto on Node too).
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { type AwsCredentials, type SignableRequest, signRequest } from '../../../shared/aws/sigv4.js';

/** The SDK's SourceData (@smithy/types), spelled out to import nothing more. */
type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytes = (data: SourceData): string | Uint8Array =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);

/** The SDK's Checksum interface over node:crypto (SHA-256, HMAC when given a secret). */
class NodeSha256 {
  private hash: Hash | Hmac;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
  reset(): void {}
}

const DATE = new Date('2026-11-22T10:15:23.456Z');
const KEYS: AwsCredentials = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

async function oracle(
  request: SignableRequest,
  service: string,
  region: string,
  credentials: AwsCredentials,
): Promise<string> {
  const [hostname = '', port] = request.host.split(':');
  // Configured as the SQS and DynamoDB clients configure it (their defaults: applyChecksum and uriEscapePath on).
  const signer = new SignatureV4({ service, region, credentials, sha256: NodeSha256 });
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: 'https:',
      hostname,
      ...(port ? { port: Number(port) } : {}),
      path: request.path,
      query: { ...request.query },
      headers: { ...request.headers, host: request.host },
      body: request.body,
    },
    { signingDate: DATE },
  );
  const header = signed.headers['authorization'];
  if (typeof header !== 'string') throw new Error('the SDK signer set no authorization header');
  return header;
}

const sqsRequest = (body: string): SignableRequest => ({
  method: 'POST',
  host: 'sqs.eu-west-1.amazonaws.com',
  path: '/',
  headers: {
    'content-type': 'application/x-amz-json-1.0',
    'x-amz-target': 'AmazonSQS.SendMessageBatch',
    'x-amzn-query-mode': 'true',
  },
  body,
});

describe('signRequest, with the SDK signer as the oracle', () => {
  it('signs an SQS JSON request as the SDK does, without a session token', async () => {
    const request = sqsRequest(
      '{"QueueUrl":"https://sqs.eu-west-1.amazonaws.com/123456789012/q","Entries":[{"Id":"m0","MessageBody":"Übersicht — 日本語"}]}',
    );
    const ours = signRequest(request, { service: 'sqs', region: 'eu-west-1', credentials: KEYS, date: DATE });
    expect(ours['authorization']).toBe(await oracle(request, 'sqs', 'eu-west-1', KEYS));
    expect(ours['x-amz-date']).toBe('20261122T101523Z');
    expect(ours['x-amz-security-token']).toBeUndefined();
    expect(ours['authorization']).toContain(
      'SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target;x-amzn-query-mode,',
    );
  });

  it('signs a DynamoDB request with a session token, which is sent and signed', async () => {
    const credentials = { ...KEYS, sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token+/=' };
    const request: SignableRequest = {
      method: 'POST',
      host: 'dynamodb.us-east-1.amazonaws.com',
      path: '/',
      headers: {
        'Content-Type': 'application/x-amz-json-1.0',
        'X-Amz-Target': 'DynamoDB_20120810.UpdateItem',
        'user-agent': 'svc',
      },
      body: '{"TableName":"t"}',
    };
    const ours = signRequest(request, { service: 'dynamodb', region: 'us-east-1', credentials, date: DATE });
    expect(ours['authorization']).toBe(await oracle(request, 'dynamodb', 'us-east-1', credentials));
    expect(ours['x-amz-security-token']).toBe(credentials.sessionToken);
    // user-agent is never signed (the SDK's rule): proxies rewrite it.
    expect(ours['authorization']).toContain(
      'SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-amz-target,',
    );
  });

  it('signs a path and a query (with characters that need encoding) and a host with a port as the SDK does', async () => {
    const request: SignableRequest = {
      method: 'GET',
      host: '127.0.0.1:4566',
      path: '/123456789012/my queue/./a/../b',
      query: { Action: 'GetQueueAttributes', 'AttributeName.1': 'All', z: "it's (a) * test", a: 'é/ü' },
      headers: {},
      body: '',
    };
    const ours = signRequest(request, { service: 'sqs', region: 'us-east-1', credentials: KEYS, date: DATE });
    expect(ours['authorization']).toBe(await oracle(request, 'sqs', 'us-east-1', KEYS));
  });

  it('gives a different signature for another body, date or secret (the header is not a constant)', () => {
    const scope = { service: 'sqs', region: 'eu-west-1', credentials: KEYS, date: DATE };
    const a = signRequest(sqsRequest('{}'), scope)['authorization'];
    expect(signRequest(sqsRequest('{"x":1}'), scope)['authorization']).not.toBe(a);
    expect(
      signRequest(sqsRequest('{}'), { ...scope, date: new Date('2026-11-23T10:15:23Z') })['authorization'],
    ).not.toBe(a);
    expect(
      signRequest(sqsRequest('{}'), { ...scope, credentials: { ...KEYS, secretAccessKey: 'other' } })['authorization'],
    ).not.toBe(a);
  });
});

/**
 * The edge's AWS credentials (edge-agent/runtime/cloud-identity.ts): the SDK's own providers,
 * loaded at the first request, `Svc.cloud.profile` from a real shared credentials file, else the
 * default chain (here: the environment), used by Svc's lean SQS client to sign its requests (seen
 * on a local server that records them).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cloudCredentials } from '../../../edge-agent/runtime/cloud-identity.js';
import { LeanSqsClient } from '../../../shared/aws/sqs.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';

const VARS = [
  'AWS_SHARED_CREDENTIALS_FILE',
  'AWS_CONFIG_FILE',
  'AWS_PROFILE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_EC2_METADATA_DISABLED',
] as const;
const saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]));
let server: RecordingServer;
let dir: string;

beforeAll(async () => {
  server = await startRecordingServer();
  dir = mkdtempSync(join(tmpdir(), 'svc-cloud-identity-'));
  writeFileSync(
    join(dir, 'credentials'),
    [
      '[default]',
      'aws_access_key_id = AKIDDEFAULT',
      'aws_secret_access_key = default-secret',
      '',
      '[svc-edge]',
      'aws_access_key_id = AKIDPROFILE',
      'aws_secret_access_key = profile-secret',
      'aws_session_token = profile-token',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'config'), '');
});
afterEach(() => {
  server.reset();
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v];
    else process.env[v] = saved[v];
  }
});
afterAll(async () => {
  await server?.stop();
});

/** The environment of an edge agent with only the files above (no instance role: IMDS off). */
function isolate(extra: Record<string, string> = {}): void {
  for (const v of VARS) delete process.env[v];
  Object.assign(process.env, {
    AWS_SHARED_CREDENTIALS_FILE: join(dir, 'credentials'),
    AWS_CONFIG_FILE: join(dir, 'config'),
    AWS_EC2_METADATA_DISABLED: 'true',
    ...extra,
  });
}

async function signedWith(
  credentials: ReturnType<typeof cloudCredentials>,
): Promise<{ authorization: string; token: string | undefined }> {
  server.reply({ status: 200, body: '{"Successful":[{"Id":"m0"}],"Failed":[]}' });
  const client = new LeanSqsClient({ region: 'eu-west-1', credentials, endpoint: server.url, maxAttempts: 1 });
  try {
    await client.sendMessageBatch({
      QueueUrl: `${server.url}/123456789012/q`,
      Entries: [{ Id: 'm0', MessageBody: 'x' }],
    });
  } finally {
    client.destroy();
  }
  const headers = server.requests.at(-1)?.headers ?? {};
  const token = headers['x-amz-security-token'];
  return { authorization: String(headers['authorization']), token: Array.isArray(token) ? token[0] : token };
}

describe('cloudCredentials', () => {
  it('Svc.cloud.profile: the profile of the shared credentials file, session token included', async () => {
    isolate();
    const signed = await signedWith(cloudCredentials({ profile: 'svc-edge' }));
    expect(signed.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDPROFILE\//);
    expect(signed.token).toBe('profile-token');
  });

  it('without a profile: the default chain, the environment first', async () => {
    isolate({ AWS_ACCESS_KEY_ID: 'AKIDENV', AWS_SECRET_ACCESS_KEY: 'env-secret' });
    const signed = await signedWith(cloudCredentials({ profile: '' }));
    expect(signed.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDENV\//);
    expect(signed.token).toBeUndefined();
  });

  it('a profile that does not exist: the request fails naming it, nothing is sent', async () => {
    isolate();
    const client = new LeanSqsClient({
      region: 'eu-west-1',
      credentials: cloudCredentials({ profile: 'nope' }),
      endpoint: server.url,
      maxAttempts: 1,
    });
    await expect(
      client.sendMessageBatch({ QueueUrl: `${server.url}/123456789012/q`, Entries: [{ Id: 'm0', MessageBody: 'x' }] }),
    ).rejects.toMatchObject({ name: 'CredentialsError', message: expect.stringContaining('nope') });
    client.destroy();
    expect(server.requests).toHaveLength(0);
  });
});

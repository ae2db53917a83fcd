/**
 * Secrets Manager and SSM on the lean JSON client, against the local stand-in of both services
 * (test/support/aws-secrets.ts): the JSON 1.1 wire format, the endpoint variables the AWS SDK reads,
 * and what each store's answer holds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceEndpoint } from '../../../shared/aws/json-client.js';
import { SECRETS_MANAGER, SecretStoreClient, SSM } from '../../../shared/aws/secret-stores.js';
import { type SecretStores, startSecretStores } from '../../support/aws-secrets.js';

let aws: SecretStores;
const credentials = () => Promise.resolve({ accessKeyId: 'test', secretAccessKey: 'test' });

beforeAll(async () => {
  aws = await startSecretStores();
  aws.putSecret('svc/text', 'the text');
  aws.putSecret('svc/bytes', new Uint8Array([1, 2, 3]));
  aws.putParameter('/svc/secure', 'decrypted', 'SecureString');
});
afterAll(async () => aws?.stop());

describe('SecretStoreClient', () => {
  it('finds each store through its own endpoint variable, as the SDK does', async () => {
    const env = { AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url, AWS_ENDPOINT_URL_SSM: aws.url };
    const client = new SecretStoreClient({ region: 'eu-west-1', credentials, env, maxAttempts: 1 });
    try {
      aws.reset();
      expect(await client.secret('svc/text')).toBe('the text');
      expect(await client.secret('svc/bytes')).toEqual(new Uint8Array([1, 2, 3]));
      // Decrypted: without WithDecryption the stand-in, as SSM, answers the ciphertext.
      expect(await client.parameter('/svc/secure')).toBe('decrypted');
      expect(aws.requests.map((r) => [r.target, r.region, r.service])).toEqual([
        ['secretsmanager.GetSecretValue', 'eu-west-1', 'secretsmanager'],
        ['secretsmanager.GetSecretValue', 'eu-west-1', 'secretsmanager'],
        ['AmazonSSM.GetParameter', 'eu-west-1', 'ssm'],
      ]);
    } finally {
      client.destroy();
    }
  });

  it('names the error AWS answered, without a message where AWS gave none', async () => {
    const client = new SecretStoreClient({ region: 'eu-west-1', credentials, endpoint: aws.url, maxAttempts: 1 });
    try {
      await expect(client.secret('svc/missing')).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      await expect(client.parameter('/svc/missing')).rejects.toMatchObject({ name: 'ParameterNotFound' });
    } finally {
      client.destroy();
    }
  });

  it("asks the region's own endpoints when none is configured, and needs a region for that", () => {
    expect(serviceEndpoint(SECRETS_MANAGER, 'eu-west-1', undefined, {})).toBe(
      'https://secretsmanager.eu-west-1.amazonaws.com',
    );
    expect(serviceEndpoint(SSM, 'cn-north-1', undefined, {})).toBe('https://ssm.cn-north-1.amazonaws.com.cn');
    expect(() => new SecretStoreClient({ region: '', credentials, env: {} })).toThrow(
      'no AWS region for Secrets Manager (AWS_REGION is not set)',
    );
  });
});

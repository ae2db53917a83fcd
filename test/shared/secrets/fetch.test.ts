/**
 * Fetching secret references with Svc's lean AWS client (shared/aws/secret-stores.ts), against
 * the local Secrets Manager / SSM stand-in (test/support/aws-secrets.ts: no emulator of either
 * service exists here). The config is loaded again with the values; failures name the key and the
 * reference, never a value.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../shared/config/errors.js';
import { loadConfigFile } from '../../../shared/config/load.js';
import { secretValues } from '../../../shared/config/secrets.js';
import { resolveConfigSecrets, type SecretClientConfig } from '../../../shared/secrets/fetch.js';
import { type SecretStores, startSecretStores } from '../../support/aws-secrets.js';

let aws: SecretStores;
let dir: string;
let client: SecretClientConfig;

function configFile(name: string, lines: string[]): string {
  const file = join(dir, name);
  writeFileSync(file, ['Svc:', ...lines.map((l) => `  ${l}`), ''].join('\n'));
  return file;
}

const TSDB_V1 = (password: string) => [
  'tsdbConfig:',
  '  enable: true',
  '  v1Config:',
  '    auth:',
  '      enable: true',
  '      username: svc',
  `      password: "${password}"`,
];

beforeAll(async () => {
  aws = await startSecretStores();
  dir = mkdtempSync(join(tmpdir(), 'svc-secrets-'));
  client = {
    endpoint: aws.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    maxAttempts: 1,
  };
  aws.putSecret('svc/tsdb', JSON.stringify({ username: 'svc', password: 'tsdb-pass-1' }));
  aws.putSecret('svc/audit-token', 'audit-token-value');
  aws.putParameter('/svc/monsaas/key', 'monsaas-key-value', 'SecureString');
  aws.putSecret('svc/empty', '');
  aws.putSecret('svc/binary', new Uint8Array([1, 2, 3]));
  aws.putSecret('svc/denied', 'x');
});
afterAll(async () => aws?.stop());
beforeEach(() => aws.reset());

describe('resolveConfigSecrets', () => {
  it('fetches every reference in parallel, each secret once, and loads the config with the values', async () => {
    const file = configFile('all.yaml', [
      ...TSDB_V1('${aws-secret:svc/tsdb#password}'),
      'auditEvents:',
      '  enable: true',
      '  apiToken: ${aws-secret:svc/audit-token}',
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - { accountName: a, accountId: "1", insertApiKey: "${aws-ssm:/svc/monsaas/key}" }',
      '    - { accountName: b, accountId: "2", insertApiKey: "${aws-secret:svc/tsdb#username}" }',
    ]);
    const loaded = loadConfigFile(file, 'option', {});
    expect(loaded.secretRefs.map((r) => [r.path.join('.'), r.ref.text])).toEqual([
      ['Svc.tsdbConfig.v1Config.auth.password', '${aws-secret:svc/tsdb#password}'],
      ['Svc.auditEvents.apiToken', '${aws-secret:svc/audit-token}'],
      ['Svc.thirdPartyToolsCredentials.monsaas.0.insertApiKey', '${aws-ssm:/svc/monsaas/key}'],
      ['Svc.thirdPartyToolsCredentials.monsaas.1.insertApiKey', '${aws-secret:svc/tsdb#username}'],
    ]);
    aws.holdUntilInFlight(3);
    const { config } = await resolveConfigSecrets(loaded, { clientConfig: client, env: {} });
    expect(config.tsdbConfig.v1Config.auth.password).toBe('tsdb-pass-1');
    expect(config.auditEvents.apiToken).toBe('audit-token-value');
    expect(config.thirdPartyToolsCredentials.monsaas.map((a) => a.insertApiKey)).toEqual(['monsaas-key-value', 'svc']);
    // Three stores read (svc/tsdb once for both of its keys), all three at once; the parameter decrypted.
    expect(aws.requests.map((r) => r.target).sort()).toEqual([
      'AmazonSSM.GetParameter',
      'secretsmanager.GetSecretValue',
      'secretsmanager.GetSecretValue',
    ]);
    expect(aws.maxInFlight).toBe(3);
    expect(aws.requests.find((r) => r.target === 'AmazonSSM.GetParameter')?.body).toEqual({
      Name: '/svc/monsaas/key',
      WithDecryption: true,
    });
    // The fetched values are secrets of the config: the logger scrubs them.
    expect(secretValues(config)).toEqual(
      expect.arrayContaining(['tsdb-pass-1', 'audit-token-value', 'monsaas-key-value']),
    );
  });

  it('fetches only the references selected, and leaves the others as written', async () => {
    const file = configFile('some.yaml', [
      ...TSDB_V1('${aws-secret:svc/tsdb#password}'),
      'auditEvents:',
      '  enable: true',
      '  apiToken: ${aws-secret:svc/audit-token}',
    ]);
    const { config } = await resolveConfigSecrets(loadConfigFile(file, 'option', {}), {
      clientConfig: client,
      env: {},
      wanted: (at) => at.path.includes('auditEvents'),
    });
    expect(config.auditEvents.apiToken).toBe('audit-token-value');
    expect(config.tsdbConfig.v1Config.auth.password).toBe('${aws-secret:svc/tsdb#password}');
    expect(aws.requests.map((r) => r.body)).toEqual([{ SecretId: 'svc/audit-token' }]);
  });

  it("reads an ARN in the ARN's region", async () => {
    const arn = aws.putSecret('svc/far', 'far-value', 'eu-west-1');
    const file = configFile('arn.yaml', ['auditEvents:', '  enable: true', `  apiToken: \${aws-secret:${arn}}`]);
    const { config } = await resolveConfigSecrets(loadConfigFile(file, 'option', {}), {
      clientConfig: client,
      env: {},
    });
    expect(config.auditEvents.apiToken).toBe('far-value');
    expect(aws.requests).toMatchObject([{ body: { SecretId: arn }, region: 'eu-west-1', service: 'secretsmanager' }]);
  });

  it('fails with one problem per reference, at its key, naming the reference and never a value', async () => {
    const file = configFile('bad.yaml', [
      ...TSDB_V1('${aws-secret:svc/tsdb#pasword}'),
      'auditEvents:',
      '  enable: true',
      '  apiToken: ${aws-secret:svc/missing}',
      'thirdPartyToolsCredentials:',
      '  monsaas:',
      '    - { accountName: a, accountId: "1", insertApiKey: "${aws-ssm:/svc/nothing}" }',
      '    - { accountName: b, accountId: "2", insertApiKey: "${aws-secret:svc/denied}" }',
      '    - { accountName: c, accountId: "3", insertApiKey: "${aws-secret:svc/empty}" }',
      '    - { accountName: d, accountId: "4", insertApiKey: "${aws-secret:svc/binary}" }',
      '    - { accountName: e, accountId: "5", insertApiKey: "${aws-secret:svc/audit-token#key}" }',
    ]);
    aws.deny('svc/denied');
    const error = await resolveConfigSecrets(loadConfigFile(file, 'option', {}), {
      clientConfig: client,
      env: {},
    }).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    const lines = (error as ConfigError).message
      .split('\n')
      .slice(1)
      .map((l) => l.trim());
    expect(lines).toEqual([
      `${file}:8:19 Svc.tsdbConfig.v1Config.auth.password: cannot fetch \${aws-secret:svc/tsdb#pasword}: the secret has no key "pasword" (its keys: "username", "password")`,
      `${file}:11:15 Svc.auditEvents.apiToken: cannot fetch \${aws-secret:svc/missing}: ResourceNotFoundException: Secrets Manager can't find the specified secret.`,
      `${file}:14:57 Svc.thirdPartyToolsCredentials.monsaas[0].insertApiKey: cannot fetch \${aws-ssm:/svc/nothing}: ParameterNotFound`,
      expect.stringMatching(
        /^.*:15:57 Svc\.thirdPartyToolsCredentials\.monsaas\[1\]\.insertApiKey: cannot fetch \$\{aws-secret:svc\/denied\}: AccessDeniedException: User: .* is not authorized to perform: secretsmanager:GetSecretValue/,
      ),
      `${file}:16:57 Svc.thirdPartyToolsCredentials.monsaas[2].insertApiKey: cannot fetch \${aws-secret:svc/empty}: the secret has no value`,
      `${file}:17:57 Svc.thirdPartyToolsCredentials.monsaas[3].insertApiKey: cannot fetch \${aws-secret:svc/binary}: the secret is binary; Svc reads secrets stored as text`,
      `${file}:18:57 Svc.thirdPartyToolsCredentials.monsaas[4].insertApiKey: cannot fetch \${aws-secret:svc/audit-token#key}: the secret's value is not JSON, so it has no key "key"`,
    ]);
    expect((error as ConfigError).message).not.toMatch(/tsdb-pass-1|audit-token-value/);
  });
});

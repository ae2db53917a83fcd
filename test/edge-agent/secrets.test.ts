/**
 * Secret references on premises, through the real `svc` CLI: `svc validate-config` checks their
 * syntax and fetches nothing; `svc local` fetches them at start with the same code as the Lambda
 * functions (from the local Secrets Manager / SSM stand-in, test/support/aws-secrets.ts: no emulator
 * of either exists here) and uses the values; one it cannot fetch refuses the start naming the key;
 * `svc edge` runs no audit API and so leaves the audit token's reference alone.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type SecretStores, startSecretStores } from '../support/aws-secrets.js';
import { freePort } from '../support/ports.js';
import { SVC_BIN, startSvc } from '../support/svc-process.js';

const TOKEN = 'local-audit-token-from-ssm';

let aws: SecretStores;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  aws = await startSecretStores();
  aws.putParameter('/svc/audit/token', TOKEN, 'SecureString');
  env = {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
    AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url,
    AWS_ENDPOINT_URL_SSM: aws.url,
    AWS_MAX_ATTEMPTS: '1',
  };
});
afterAll(async () => aws?.stop());
beforeEach(() => aws.reset());

async function workDir(apiToken: string): Promise<{ dir: string; port: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-secrets-cli-'));
  const port = await freePort();
  writeFileSync(
    join(dir, 'svc.yaml'),
    [
      'Svc:',
      '  auditEvents:',
      '    enable: true',
      `    port: ${port}`,
      `    apiToken: ${apiToken}`,
      '    rateLimit:',
      '      enable: false',
      '',
    ].join('\n'),
  );
  return { dir, port };
}

describe('secret references in the svc CLI', () => {
  it('svc validate-config checks the syntax and fetches nothing', async () => {
    const { dir } = await workDir('${aws-ssm:/svc/audit/token}');
    const run = spawnSync(SVC_BIN, ['validate-config', '--config', 'svc.yaml'], {
      cwd: dir,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '', ...env },
      timeout: 20_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      '1 secret reference not fetched: svc local, svc edge and the Lambda functions fetch them at start',
    );
    expect(aws.requests).toEqual([]);

    const bad = await workDir('${aws-ssm:/svc/audit token}');
    const refused = spawnSync(SVC_BIN, ['validate-config', '--config', 'svc.yaml'], {
      cwd: bad.dir,
      encoding: 'utf8',
      env: { ...process.env, SVC_CONFIG: '', ...env },
      timeout: 20_000,
    });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      'svc.yaml:5:15 Svc.auditEvents.apiToken: the secret reference names no valid parameter',
    );
  });

  it('svc local fetches the token at start and the audit API checks requests against it', async () => {
    const { dir, port } = await workDir('${aws-ssm:/svc/audit/token}');
    const svc = startSvc(dir, 'local', env);
    try {
      await expect.poll(svc.output, { timeout: 15_000 }).toContain(`audit API listening on http://127.0.0.1:${port}`);
      expect(svc.output()).toContain('svc: fetching 1 secret reference from AWS (Svc.auditEvents.apiToken)');
      const test = (token: string) =>
        fetch(`http://127.0.0.1:${port}/api/v1/test-connection`, { headers: { authorization: `Bearer ${token}` } });
      expect((await test(TOKEN)).status).toBe(200);
      expect((await test('${aws-ssm:/svc/audit/token}')).status).toBe(401);
      expect(aws.requests).toEqual([
        {
          target: 'AmazonSSM.GetParameter',
          body: { Name: '/svc/audit/token', WithDecryption: true },
          region: 'us-east-1',
          service: 'ssm',
        },
      ]);
    } finally {
      svc.child.kill('SIGTERM');
    }
    expect(await svc.exited).toBe(0);
    expect(svc.output()).not.toContain(TOKEN);
  });

  it('svc local refuses to start when a reference cannot be fetched, naming the key', async () => {
    const { dir } = await workDir('${aws-ssm:/svc/audit/missing}');
    const svc = startSvc(dir, 'local', env);
    expect(await svc.exited).toBe(1);
    expect(svc.output()).toContain(
      'svc.yaml:5:15 Svc.auditEvents.apiToken: cannot fetch ${aws-ssm:/svc/audit/missing}: ParameterNotFound',
    );
  });

  it('svc edge forwarding to a deployment reads its secrets in the region of Svc.cloud, not the SDK default', async () => {
    aws.putParameter('/svc/tsdb/password', 'tsdb-password', 'SecureString', 'eu-central-1');
    const dir = mkdtempSync(join(tmpdir(), 'svc-secrets-cli-'));
    writeFileSync(
      join(dir, 'svc.yaml'),
      [
        'Svc:',
        '  cloud:',
        '    enable: true',
        '    region: eu-central-1',
        '    queues:',
        '      tsdb: https://sqs.eu-central-1.amazonaws.com/123456789012/Svc-Tsdb',
        '  tsdbConfig:',
        '    enable: true',
        '    v1Config:',
        '      auth:',
        '        enable: true',
        '        username: svc',
        '        password: ${aws-ssm:/svc/tsdb/password}',
        '',
      ].join('\n'),
    );
    const svc = startSvc(dir, 'edge', env);
    try {
      await expect.poll(svc.output, { timeout: 15_000 }).toMatch(/svc edge \S+ running/);
    } finally {
      svc.child.kill('SIGTERM');
    }
    expect(await svc.exited).toBe(0);
    expect(aws.requests.map((r) => r.region)).toEqual(['eu-central-1']);
  });

  it('svc edge leaves the audit token alone: it runs no audit API', async () => {
    const { dir } = await workDir('${aws-ssm:/svc/audit/missing}');
    const svc = startSvc(dir, 'edge', env);
    try {
      await expect.poll(svc.output, { timeout: 15_000 }).toMatch(/svc edge \S+ running/);
      expect(svc.output()).not.toContain('fetching');
    } finally {
      svc.child.kill('SIGTERM');
    }
    expect(await svc.exited).toBe(0);
    expect(aws.requests).toEqual([]);
  });
});

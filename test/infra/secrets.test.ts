/**
 * Secrets on AWS: the CDK app refuses a secret written in the config (unless allowLiteralSecrets),
 * grants each referenced secret or parameter read-only to exactly the functions that fetch it
 * (SECRET_READERS), and the bundled audit function fetches its token at cold start, once, from the
 * local Secrets Manager stand-in (test/support/aws-secrets.ts: no emulator of it exists here).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from 'aws-cdk-lib';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Code, Function as LambdaFunction, Runtime } from 'aws-cdk-lib/aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV } from '../../functions/lambda-env.js';
import { buildSvcApp, SynthSettingsError } from '../../infra/app.js';
import { grantSecretReads } from '../../infra/constructs/secrets.js';
import type { SvcStack } from '../../infra/stack.js';
import { ConfigError } from '../../shared/config/errors.js';
import { loadConfigFile } from '../../shared/config/load.js';
import { type SecretStores, startSecretStores } from '../support/aws-secrets.js';
import { REPO_ROOT } from '../support/build.js';
import { cdkApp } from '../support/cdk-app.js';
import { trackChild } from '../support/ports.js';

const KMS_KEY = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const MONSAAS_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:svc/monsaas-AbCdEf';
const AUDIT_TOKEN = 'the-audit-token-from-secrets-manager';

/** The audit API, a tsdb and a parquet writer; a reference in every kind of secret key. */
const CONFIG = `Svc:
  tsdbConfig:
    enable: true
    host: influx.example.com
    version: 2
    v2Config:
      org: svc
      token: \${aws-ssm:/svc/tsdb/token}
  auditEvents:
    enable: true
    apiToken: \${aws-secret:svc/audit-api-token}
    rateLimit:
      enable: false
    destination:
      enable: true
      type: tsdb, parquet
      parquet:
        s3:
          enable: true
          bucket: svc-audit-exports
  thirdPartyToolsCredentials:
    monsaas:
      - accountName: ops
        accountId: "1234567"
        insertApiKey: \${aws-secret:${MONSAAS_ARN}#key}
  cert:
    clientCertPassphrase: \${aws-secret:svc/cert-passphrase}
`;

let dir: string;
let outdir: string;
let stack: SvcStack;
let template: Template;

const makeApp = (context: Record<string, unknown>): App => cdkApp(outdir, context);

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Resource = { Type: string; Properties: Record<string, unknown> };

/** The statements of every policy attached to the role of the function whose logical id starts with `prefix`. */
function statementsOf(t: Template, prefix: string): Statement[] {
  const functions = t.findResources('AWS::Lambda::Function') as Record<string, Resource>;
  const id = Object.keys(functions).find((key) => key.startsWith(prefix));
  if (!id) throw new Error(`no function ${prefix}*`);
  const role = JSON.stringify(
    (functions[id]?.Properties['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0],
  );
  const policies = Object.values(t.findResources('AWS::IAM::Policy') as Record<string, Resource>).filter((p) =>
    JSON.stringify(p.Properties['Roles']).includes(role),
  );
  return policies.flatMap((p) => (p.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement);
}

const actionsOf = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const secretStatements = (statements: Statement[]) =>
  statements.filter((s) => actionsOf(s).some((a) => /^(secretsmanager|ssm|kms):/.test(a)));
const arn = (service: string, resource: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      `:${service}:`,
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      resource,
    ],
  ],
});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-infra-secrets-'));
  outdir = join(dir, 'cdk.out');
  stack = buildSvcApp(makeApp({ config: file('svc.yaml', CONFIG), secretsKmsKeyArns: KMS_KEY }));
  template = Template.fromStack(stack);
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('grants', () => {
  it('lets the audit function read its token and nothing else, by partial ARN', () => {
    expect(secretStatements(statementsOf(template, 'IngestApiAuditFunction'))).toEqual([
      {
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: arn('secretsmanager', ':secret:svc/audit-api-token-??????'),
      },
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: KMS_KEY,
        Condition: {
          StringEquals: {
            'kms:ViaService': [{ 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] }],
          },
        },
      },
    ]);
  });

  it('lets the tsdb writer read the tsdb token parameter and nothing else', () => {
    expect(secretStatements(statementsOf(template, 'EventPipelineTsdbWriter'))).toEqual([
      { Effect: 'Allow', Action: 'ssm:GetParameter', Resource: arn('ssm', ':parameter/svc/tsdb/token') },
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: KMS_KEY,
        Condition: {
          StringEquals: {
            'kms:ViaService': [{ 'Fn::Join': ['', ['ssm.', { Ref: 'AWS::Region' }, '.amazonaws.com']] }],
          },
        },
      },
    ]);
  });

  it('gives no other function any secret, and only read actions anywhere', () => {
    // parquet reads no secret; the monitoring SaaS key has no writer deployed; the pollers' passphrase is the edge's.
    expect(secretStatements(statementsOf(template, 'EventPipelineParquetWriter'))).toEqual([]);
    const all = Object.values(template.findResources('AWS::IAM::Policy') as Record<string, Resource>).flatMap(
      (p) => (p.Properties['PolicyDocument'] as { Statement: Statement[] }).Statement,
    );
    const actions = new Set(secretStatements(all).flatMap(actionsOf));
    expect([...actions].sort()).toEqual(['kms:Decrypt', 'secretsmanager:GetSecretValue', 'ssm:GetParameter']);
    const text = JSON.stringify(all);
    expect(text).not.toContain('svc/cert-passphrase');
    expect(text).not.toContain('svc/monsaas');
    expect(stack.secretGrants.map((g) => g.reader).sort()).toEqual(['audit', 'tsdb']);
  });

  it('grants the monitoring SaaS keys to the monsaas writer only, by their full ARN', () => {
    const scratch = new Stack(makeApp({}), 'Scratch');
    const fn = (id: string) =>
      new LambdaFunction(scratch, id, {
        runtime: Runtime.NODEJS_24_X,
        handler: 'index.handler',
        code: Code.fromInline('export const handler = () => {}'),
      });
    const readers = { audit: fn('Audit'), tsdb: fn('Tsdb'), parquet: fn('Parquet'), monsaas: fn('Monsaas') };
    const loaded = loadConfigFile(file('scratch.yaml', CONFIG), 'option', {});
    grantSecretReads(scratch, { references: loaded.secretRefs, readers });
    const t = Template.fromStack(scratch);
    expect(secretStatements(statementsOf(t, 'Monsaas'))).toEqual([
      { Effect: 'Allow', Action: 'secretsmanager:GetSecretValue', Resource: MONSAAS_ARN },
    ]);
    expect(secretStatements(statementsOf(t, 'Audit'))).toEqual([
      {
        Effect: 'Allow',
        Action: 'secretsmanager:GetSecretValue',
        Resource: arn('secretsmanager', ':secret:svc/audit-api-token-??????'),
      },
    ]);
    expect(secretStatements(statementsOf(t, 'Tsdb'))).toEqual([
      { Effect: 'Allow', Action: 'ssm:GetParameter', Resource: arn('ssm', ':parameter/svc/tsdb/token') },
    ]);
    expect(
      t.findResources('AWS::IAM::Policy', {
        Properties: { Roles: [{ Ref: Match.stringLikeRegexp('^ParquetServiceRole') }] },
      }),
    ).toEqual({});
  });

  it("puts no secret into any function's environment", () => {
    const text = JSON.stringify(template.findResources('AWS::Lambda::Function'));
    expect(text).not.toMatch(/resolve:secretsmanager|resolve:ssm/);
    expect(text).not.toContain('SVC_AUDIT_API_TOKEN');
  });
});

describe('the bundled audit function', () => {
  let aws: SecretStores;
  beforeAll(async () => {
    aws = await startSecretStores();
    aws.putSecret('svc/audit-api-token', AUDIT_TOKEN);
  });
  afterAll(async () => aws?.stop());

  it('fetches its token once at cold start and checks requests against it', async () => {
    const functions = template.findResources('AWS::Lambda::Function') as Record<string, Resource>;
    const audit = Object.entries(functions).find(([id]) => id.startsWith('IngestApiAuditFunction'))?.[1];
    const assetDir = join(
      outdir,
      `asset.${(audit?.Properties['Code'] as { S3Key: string }).S3Key.replace(/\.zip$/, '')}`,
    );
    // The AWS SDK is not in the bundle (infra/constructs/esbuild-options.ts): the Lambda runtime
    // provides it, the repository's node_modules stands in for it here.
    if (!existsSync(join(assetDir, 'node_modules')))
      symlinkSync(join(REPO_ROOT, 'node_modules'), join(assetDir, 'node_modules'), 'dir');
    const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(join(assetDir, 'index.mjs')).href)});
const call = (authorization) => handler({ version: '2.0', rawPath: '/api/v1/test-connection', headers: { authorization }, isBase64Encoded: false,
  requestContext: { http: { method: 'GET', path: '/api/v1/test-connection', sourceIp: '192.0.2.1' } } }, { awsRequestId: 'test' });
const answers = [await call('Bearer ${AUDIT_TOKEN}'), await call('Bearer wrong')];
process.stderr.write('STATUS ' + JSON.stringify(answers.map((a) => a.statusCode)) + '\\n');`;
    // The SDK reads the service endpoints from these variables, as a function would on AWS with none set.
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: {
        PATH: process.env['PATH'] ?? '',
        [LAMBDA_ENV.config]: join(assetDir, BUNDLED_CONFIG_FILE),
        [LAMBDA_ENV.eventQueueUrls]: JSON.stringify({ tsdb: 'https://sqs.us-east-1.amazonaws.com/123456789012/tsdb' }),
        [LAMBDA_ENV.rateLimitTable]: 'rate-limit',
        [LAMBDA_ENV.idempotencyTable]: 'idempotency',
        [LAMBDA_ENV.claimCheckBucket]: 'bucket',
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
        AWS_ENDPOINT_URL_SECRETS_MANAGER: aws.url,
        AWS_ENDPOINT_URL_SSM: aws.url,
      },
    });
    trackChild(child);
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    expect(stderr).toContain('STATUS [200,401]');
    expect(aws.requests).toEqual([
      {
        target: 'secretsmanager.GetSecretValue',
        body: { SecretId: 'svc/audit-api-token' },
        region: 'us-east-1',
        service: 'secretsmanager',
      },
    ]);
    expect(stdout).not.toContain(AUDIT_TOKEN);
  });
});

describe('literal secrets at synth', () => {
  const LITERAL =
    'Svc:\n  tsdbConfig:\n    enable: true\n    version: 3\n    v3Config:\n      token: a-literal-token\n';

  it('refuses a secret written in the config, naming the key', () => {
    const path = file('literal.yaml', LITERAL);
    let caught: unknown;
    try {
      buildSvcApp(makeApp({ config: path }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).issues.map((i) => `${i.line}:${i.column} ${i.path}`)).toEqual([
      '6:14 Svc.tsdbConfig.v3Config.token',
    ]);
    expect((caught as ConfigError).message).toContain('-c allowLiteralSecrets=true');
    expect((caught as ConfigError).message).not.toContain('a-literal-token');
  });

  it('allows it with allowLiteralSecrets=true, with a warning', () => {
    const allowed = buildSvcApp(
      makeApp({
        config: file('literal-allowed.yaml', `${LITERAL}  auditEvents:\n    enable: false\n`),
        allowLiteralSecrets: 'true',
      }),
    );
    Annotations.fromStack(allowed).hasWarning(
      '*',
      Match.stringLikeRegexp('Svc.tsdbConfig.v3Config.token: a secret written in the config is bundled'),
    );
  });

  it("takes values from the stack's environment and empty secrets as they are", () => {
    const path = file(
      'env.yaml',
      'Svc:\n  tsdbConfig:\n    enable: true\n    version: 3\n    v3Config:\n      token: ${env:SVC_DESTINATION}\n  auditEvents:\n    enable: false\n    apiToken: ""\n',
    );
    expect(() => buildSvcApp(makeApp({ config: path }))).not.toThrow();
  });

  it('refuses the retired auditApiTokenSecret context and a KMS key that is not an ARN', () => {
    const path = file('off.yaml', 'Svc:\n  auditEvents:\n    enable: false\n');
    expect(() => buildSvcApp(makeApp({ config: path, auditApiTokenSecret: 'svc/token' }))).toThrow(
      /no longer read: write the reference in the config instead, e.g. Svc.auditEvents.apiToken: \$\{aws-secret:<secret name>\}/,
    );
    expect(() => buildSvcApp(makeApp({ config: path, secretsKmsKeyArns: 'alias/svc' }))).toThrow(SynthSettingsError);
    expect(() => buildSvcApp(makeApp({ config: path, allowLiteralSecrets: 'yes' }))).toThrow(SynthSettingsError);
  });
});

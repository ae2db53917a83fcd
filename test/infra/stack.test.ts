/**
 * The CDK app, synthesized in-process with the context of cdk.json. Bundling runs the local esbuild
 * for real (no Docker), so the stack is built once for the suite; the invalid-config cases fail
 * before any bundling. One test also runs the real CDK CLI against the compiled app in dist/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { App } from 'aws-cdk-lib';
import { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV } from '../../functions/lambda-env.js';
import {
  buildSvcApp,
  CONFIG_DOCUMENT_FILE,
  configDocumentForSynth,
  readSettings,
  SynthSettingsError,
} from '../../infra/app.js';
import { SECRET_FETCH_FILE, secretFetchEsbuildOptions } from '../../infra/constructs/esbuild-options.js';
import { EventPipeline, WRITER_ENTRIES } from '../../infra/constructs/event-pipeline.js';
import { copyFileCommand, esbuildCommand } from '../../infra/constructs/svc-function.js';
import { planDestinations, writerConcurrency } from '../../infra/destinations.js';
import type { SvcStack } from '../../infra/stack.js';
import { ConfigError } from '../../shared/config/errors.js';
import { loadConfigFile } from '../../shared/config/load.js';
import { REPO_ROOT } from '../support/build.js';
import { cdkApp } from '../support/cdk-app.js';

// logLevel error: without a token the audit function warns at cold start, and the bundle test reads stdout.
const VALID_CONFIG = `Svc:
  logLevel: error
  auditEvents:
    enable: true
    cors:
      allowedOrigins:
        - https://analytics.example.com
    rateLimit:
      enable: false
    destination:
      enable: true
      type: parquet, tablefile
      parquet:
        s3:
          enable: true
          bucket: svc-audit-exports
`;

/** Line 5, column 19: out of range. */
const INVALID_CONFIG = `Svc:
  logLevel: info
  auditEvents:
    enable: true
    maxBodyBytes: 12
`;
const INVALID_AT = '5:19 Svc.auditEvents.maxBodyBytes: must be';

let dir: string;
let validFile: string;
let invalidFile: string;
let outdir: string;
let stack: SvcStack;
let template: Template;

/**
 * An app with cdk.json's context plus `context`, writing into the suite's temp directory. The
 * built-in CloudFormation validation (a wasm engine, seconds per synth) is left to the CLI test.
 */
const makeApp = (context: Record<string, unknown>): App => cdkApp(outdir, context);

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

function functionsOf(t: Template): Resources {
  return t.findResources('AWS::Lambda::Function', {
    Properties: { Runtime: Match.stringLikeRegexp('^nodejs') },
  }) as Resources;
}

function logicalIdOf(resources: Record<string, unknown>, prefix: string): string {
  const id = Object.keys(resources).find((key) => key.startsWith(prefix));
  if (!id) throw new Error(`no resource ${prefix}* among ${Object.keys(resources).join(', ')}`);
  return id;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-infra-'));
  outdir = join(dir, 'cdk.out');
  validFile = join(dir, 'svc.yaml');
  invalidFile = join(dir, 'invalid.yaml');
  writeFileSync(validFile, VALID_CONFIG);
  writeFileSync(invalidFile, INVALID_CONFIG);

  stack = buildSvcApp(makeApp({ config: validFile }));
  template = Template.fromStack(stack);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('SvcStack', () => {
  it('runs every function on Node 22, arm64, ESM with source maps', () => {
    const functions = functionsOf(template);
    expect(Object.keys(functions)).toHaveLength(2);
    for (const fn of Object.values(functions)) {
      expect(fn.Properties).toMatchObject({
        Runtime: 'nodejs24.x',
        Architectures: ['arm64'],
        Handler: 'index.handler',
        Environment: {
          Variables: { NODE_OPTIONS: '--enable-source-maps', [LAMBDA_ENV.config]: `/var/task/${BUNDLED_CONFIG_FILE}` },
        },
      });
      expect(fn.Properties['TracingConfig']).toBeUndefined();
    }
    // One log group per function, and the API stage's access log.
    template.resourcePropertiesCountIs('AWS::Logs::LogGroup', { RetentionInDays: 30 }, 3);
  });

  it('gives the audit function the LAMBDA_ENV names and the queue URLs as JSON', () => {
    const functions = functionsOf(template);
    const audit = functions[logicalIdOf(functions, 'IngestApiAuditFunction')];
    const variables = (audit?.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables;
    const { destination, ...auditNames } = LAMBDA_ENV;
    expect(Object.keys(variables)).toEqual(expect.arrayContaining(Object.values(auditNames)));
    expect(variables[destination]).toBeUndefined();
    const queue = logicalIdOf(template.findResources('AWS::SQS::Queue'), 'EventPipelineParquetQueue');
    expect(variables[LAMBDA_ENV.eventQueueUrls]).toEqual({ 'Fn::Join': ['', ['{"parquet":"', { Ref: queue }, '"}']] });
    expect(variables[LAMBDA_ENV.rateLimitTable]).toEqual({
      Ref: logicalIdOf(template.findResources('AWS::DynamoDB::Table'), 'IngestApiRateLimitTable'),
    });
    expect(variables[LAMBDA_ENV.claimCheckBucket]).toEqual({
      Ref: logicalIdOf(template.findResources('AWS::S3::Bucket'), 'StorageBucket'),
    });
  });

  it('routes the audit API paths to the function with payload format 2.0 and no gateway CORS', () => {
    template.resourceCountIs('AWS::ApiGatewayV2::Api', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Api', {
      ProtocolType: 'HTTP',
      CorsConfiguration: Match.absent(),
    });
    const routes = Object.values(template.findResources('AWS::ApiGatewayV2::Route')).map(
      (r) => (r as { Properties: { RouteKey: string } }).Properties.RouteKey,
    );
    expect(routes.sort()).toEqual([
      'GET /api/v1/test-connection',
      'OPTIONS /api/v1/audit-event',
      'OPTIONS /api/v1/test-connection',
      'POST /api/v1/audit-event',
    ]);
    template.resourceCountIs('AWS::ApiGatewayV2::Integration', 1);
    template.hasResourceProperties('AWS::ApiGatewayV2::Integration', {
      IntegrationType: 'AWS_PROXY',
      PayloadFormatVersion: '2.0',
    });
    template.hasResourceProperties('AWS::ApiGatewayV2::Stage', { StageName: '$default', AutoDeploy: true });
    expect(Object.keys(template.findOutputs('*')).some((id) => id.startsWith('IngestApiApiUrl'))).toBe(true);
  });

  it('gives the audit function an idempotency table keyed on id with TTL on expiration, and read-write access to it', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiration', Enabled: true },
    });
    const table = logicalIdOf(template.findResources('AWS::DynamoDB::Table'), 'IngestApiIdempotencyTable');
    const functions = functionsOf(template);
    const audit = functions[logicalIdOf(functions, 'IngestApiAuditFunction')];
    expect(
      (audit?.Properties['Environment'] as { Variables: Record<string, unknown> }).Variables[
        LAMBDA_ENV.idempotencyTable
      ],
    ).toEqual({ Ref: table });
    // Exactly the calls of shared/idempotency/dynamodb.ts.
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'],
            Resource: { 'Fn::GetAtt': [table, 'Arn'] },
          },
        ]),
      },
    });
  });

  it('keys the rate-limit table on pk with TTL on expiresAt', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('gives each cloud destination a queue that sends failing events to its dead-letter queue after 5 receives', () => {
    const queues = template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues)).toHaveLength(2);
    const dlq = logicalIdOf(queues, 'EventPipelineParquetDeadLetterQueue');
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 5 },
      MaximumMessageSize: 1_048_576,
      SqsManagedSseEnabled: true,
      // 6 × the 60 s writer timeout + the 60 s batching window (parquet's writeFrequency).
      VisibilityTimeout: 420,
    });
    template.hasResourceProperties('AWS::SQS::Queue', {
      MessageRetentionPeriod: 14 * 24 * 3600,
      RedrivePolicy: Match.absent(),
    });
    // tablefile writes to a local directory: not deployed, and synth says so.
    Annotations.fromStack(stack).hasWarning(
      '*',
      Match.stringLikeRegexp('destination tablefile runs on the edge only: it writes files to a local directory'),
    );
  });

  it('feeds a writer from its queue in batches with partial batch failures', () => {
    const functions = functionsOf(template);
    const writer = logicalIdOf(functions, 'EventPipelineParquetWriter');
    expect(functions[writer]?.Properties).toMatchObject({
      MemorySize: 512,
      Timeout: 60,
      Environment: {
        Variables: {
          [LAMBDA_ENV.destination]: 'parquet',
          [LAMBDA_ENV.claimCheckBucket]: {
            Ref: logicalIdOf(template.findResources('AWS::S3::Bucket'), 'StorageBucket'),
          },
        },
      },
    });
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: writer },
      EventSourceArn: {
        'Fn::GetAtt': [logicalIdOf(template.findResources('AWS::SQS::Queue'), 'EventPipelineParquetQueue'), 'Arn'],
      },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      // parquet's maxBatchSize and writeFrequency.
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 60,
    });
  });

  it('keeps the bucket private, encrypted, TLS-only, and expires claim checks', () => {
    template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ Prefix: 'claim-checks/', ExpirationInDays: 21, Status: 'Enabled' }),
          ]),
        },
      },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
    // Its server access logs go to a bucket of their own, as private, kept 90 days.
    const buckets = template.findResources('AWS::S3::Bucket');
    const logs = logicalIdOf(buckets, 'StorageAccessLogs');
    template.hasResourceProperties('AWS::S3::Bucket', {
      LoggingConfiguration: { DestinationBucketName: { Ref: logs }, LogFilePrefix: 'storage-bucket/' },
    });
    expect(buckets[logs]).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: {
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        PublicAccessBlockConfiguration: { BlockPublicAcls: true, RestrictPublicBuckets: true },
        LifecycleConfiguration: { Rules: [{ ExpirationInDays: 90, Status: 'Enabled' }] },
      },
    });
  });

  it('bundles a working index.mjs with the require banner and the resolved config document as svc.json', () => {
    const functions = functionsOf(template);
    const code = functions[logicalIdOf(functions, 'IngestApiAuditFunction')]?.Properties['Code'] as { S3Key: string };
    const assetDir = join(outdir, `asset.${code.S3Key.replace(/\.zip$/, '')}`);
    // The document synth made from the YAML (the same producer the functions' tests use), not the YAML.
    expect(readFileSync(join(assetDir, BUNDLED_CONFIG_FILE), 'utf8')).toBe(configDocumentForSynth(validFile));
    const bundle = readFileSync(join(assetDir, 'index.mjs'), 'utf8');
    expect(bundle.startsWith('import { createRequire as __svcCreateRequire }')).toBe(true);
    expect(existsSync(join(assetDir, 'index.mjs.map'))).toBe(true);

    // The bundle loads as an ES module (the banner's require included) and answers a preflight.
    // The rate limit is off in the test config, so nothing reaches for AWS. The AWS SDK is not in the
    // bundle (infra/constructs/esbuild-options.ts): the Lambda runtime provides it, the repository's
    // node_modules stands in for it here.
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(assetDir, 'node_modules'), 'dir');
    const script = `const { handler } = await import(${JSON.stringify(pathToFileURL(join(assetDir, 'index.mjs')).href)});
const event = { version: '2.0', rawPath: '/api/v1/audit-event', headers: { origin: 'https://analytics.example.com' }, isBase64Encoded: false,
  requestContext: { http: { method: 'OPTIONS', path: '/api/v1/audit-event', sourceIp: '192.0.2.1' } } };
process.stdout.write(JSON.stringify(await handler(event, { awsRequestId: 'test' })));`;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      encoding: 'utf8',
      env: {
        ...process.env,
        [LAMBDA_ENV.config]: join(assetDir, BUNDLED_CONFIG_FILE),
        [LAMBDA_ENV.eventQueueUrls]: JSON.stringify({
          parquet: 'https://sqs.us-east-1.amazonaws.com/123456789012/parquet',
        }),
        [LAMBDA_ENV.rateLimitTable]: 'rate-limit',
        [LAMBDA_ENV.idempotencyTable]: 'idempotency',
        [LAMBDA_ENV.claimCheckBucket]: 'bucket',
        AWS_REGION: 'us-east-1',
      },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      statusCode: 204,
      headers: { 'Access-Control-Allow-Origin': 'https://analytics.example.com' },
    });
  });
});

describe('auditEvents.queue.rateLimit on AWS', () => {
  /** tsdb: batches of 100 within 2 s; parquet: 1000 within 60 s. */
  const rateLimited = (maxPerMinute: number) => `Svc:
  tsdbConfig:
    enable: true
    host: tsdb.example.com
  auditEvents:
    enable: true
    queue:
      rateLimit:
        enable: true
        maxPerMinute: ${maxPerMinute}
    destination:
      enable: true
      type: tsdb, parquet
      tsdb:
        maxBatchSize: 100
        writeFrequency: 2000
      parquet:
        maxBatchSize: 1000
        writeFrequency: 60000
        s3:
          enable: true
          bucket: svc-audit-exports
`;

  function concurrencyOf(maxPerMinute: number): Record<string, { maxConcurrency: unknown; reserved: unknown }> {
    const file = join(dir, `rate-${maxPerMinute}.yaml`);
    writeFileSync(file, rateLimited(maxPerMinute));
    const t = Template.fromStack(buildSvcApp(makeApp({ config: file })));
    const functions = functionsOf(t);
    const mappings = Object.values(t.findResources('AWS::Lambda::EventSourceMapping')) as Resources[string][];
    const result: Record<string, { maxConcurrency: unknown; reserved: unknown }> = {};
    for (const name of ['Tsdb', 'Parquet']) {
      const writer = logicalIdOf(functions, `EventPipeline${name}Writer`);
      const mapping = mappings.find(
        (m) => JSON.stringify(m.Properties['FunctionName']) === JSON.stringify({ Ref: writer }),
      );
      result[name] = {
        maxConcurrency: (mapping?.Properties['ScalingConfig'] as { MaximumConcurrency?: number } | undefined)
          ?.MaximumConcurrency,
        reserved: functions[writer]?.Properties['ReservedConcurrentExecutions'],
      };
    }
    return result;
  }

  it('sets maxConcurrency and reserved concurrency to ⌈events/s × window ÷ batch⌉ per writer', () => {
    // 95,500/min ≈ 1,591.7/s. tsdb: 1,591.7 × 2 s ÷ 100 ≈ 31.8 → 32. parquet: 1,591.7 × 60 s ÷ 1,000 = 95.5 → 96.
    expect(concurrencyOf(95_500)).toEqual({
      Tsdb: { maxConcurrency: 32, reserved: 32 },
      Parquet: { maxConcurrency: 96, reserved: 96 },
    });
  }, 60_000);

  it('never goes below the 2 an SQS event source requires', () => {
    // 600/min = 10/s. tsdb: 10 × 2 ÷ 100 = 0.2; parquet: 10 × 60 ÷ 1,000 = 0.6; both round up to 1, then 2.
    expect(concurrencyOf(600)).toEqual({
      Tsdb: { maxConcurrency: 2, reserved: 2 },
      Parquet: { maxConcurrency: 2, reserved: 2 },
    });
  }, 60_000);

  it('leaves concurrency alone while the rate limit is off', () => {
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { ScalingConfig: Match.absent() });
    const functions = functionsOf(template);
    expect(
      functions[logicalIdOf(functions, 'EventPipelineParquetWriter')]?.Properties['ReservedConcurrentExecutions'],
    ).toBeUndefined();
  });

  it('notes a rate the 1000 concurrent writers cannot reach, and refuses reserved concurrency below maxConcurrency', () => {
    const file = join(dir, 'rate-huge.yaml');
    writeFileSync(file, rateLimited(10_000_000));
    const plan = planDestinations(loadConfigFile(file).config);
    expect(plan.deployed.map((d) => [d.name, d.concurrency])).toEqual([
      ['tsdb', 1000],
      ['parquet', 1000],
    ]);
    expect(plan.notes.filter((n) => n.kind === 'rate-limit' && n.message.includes('concurrent writers'))).toHaveLength(
      2,
    );

    const scratch = new Stack(makeApp({}), 'Scratch');
    const pipeline = new EventPipeline(scratch, 'Pipeline', {
      bucket: new Bucket(scratch, 'Bucket'),
      configDocument: join(outdir, CONFIG_DOCUMENT_FILE),
    });
    pipeline.addDestination('tsdb');
    pipeline.addDestination('parquet');
    expect(() =>
      pipeline.addWriter('tsdb', WRITER_ENTRIES.tsdb, { maxConcurrency: 5, reservedConcurrentExecutions: 4 }),
    ).toThrow(/below maxConcurrency/);
    expect(() => pipeline.addWriter('parquet', WRITER_ENTRIES.tsdb, { maxConcurrency: 1 })).toThrow(/from 2 to 1000/);
  });

  it('caps at the 1000 an SQS event source allows', () => {
    expect(writerConcurrency(10_000_000, 10, 300)).toBe(1000);
    expect(writerConcurrency(6000, 100, 5)).toBe(5);
    expect(writerConcurrency(6001, 100, 5)).toBe(6);
  });
});

describe('the CDK app', () => {
  it('deploys no audit API, and nothing else, when Svc.auditEvents.enable is false', () => {
    const file = join(dir, 'disabled.yaml');
    // The destination is enabled, so only auditEvents.enable keeps the writers out.
    writeFileSync(
      file,
      'Svc:\n  auditEvents:\n    enable: false\n    destination:\n      enable: true\n      type: parquet\n      parquet:\n        s3:\n          enable: true\n          bucket: b\n',
    );
    const disabled = buildSvcApp(makeApp({ config: file }));
    const t = Template.fromStack(disabled);
    expect(disabled.ingestApi).toBeUndefined();
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::Lambda::Function',
      'AWS::DynamoDB::Table',
      'AWS::SQS::Queue',
      'AWS::S3::Bucket',
    ])
      t.resourceCountIs(type, 0);
    expect(Object.keys(t.findOutputs('*'))).toEqual([]);
    const annotations = Annotations.fromStack(disabled);
    annotations.hasInfo('*', Match.stringLikeRegexp('no audit API: Svc.auditEvents.enable is false'));
    annotations.hasNoWarning('*', Match.anyValue());
  });

  it('fails synth on an invalid config with file:line:col', () => {
    let caught: unknown;
    try {
      buildSvcApp(makeApp({ config: invalidFile }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    expect((caught as ConfigError).message).toContain(`${invalidFile}:${INVALID_AT}`);
  });

  it("checks ${env:NAME} against the functions' environment, not the machine's", () => {
    const name = 'SVC_AUDIT_API_TOKEN';
    const file = join(dir, 'env-token.yaml');
    writeFileSync(file, `Svc:\n  auditEvents:\n    enable: true\n    apiToken: \${env:${name}}\n`);
    const previous = process.env[name];
    process.env[name] = 'set-on-this-machine';
    try {
      // The stack sets no such variable, so the deployed function would not have it.
      expect(() => buildSvcApp(makeApp({ config: file }))).toThrow(
        `${file}:4:15 Svc.auditEvents.apiToken: environment variable ${name} is not set`,
      );
    } finally {
      if (previous === undefined) delete process.env[name];
      else process.env[name] = previous;
    }
  });

  it('batches a destination within the limits of an SQS event source', () => {
    const file = join(dir, 'tsdb.yaml');
    writeFileSync(
      file,
      'Svc:\n  tsdbConfig:\n    enable: true\n    host: tsdb.example.com\n  auditEvents:\n    enable: true\n    destination:\n      enable: true\n      type: tsdb\n      tsdb:\n        maxBatchSize: 20000\n        writeFrequency: 600000\n',
    );
    const plan = planDestinations(loadConfigFile(file).config);
    expect(plan.deployed.map((d) => [d.name, d.batchSize, d.maxBatchingWindow.toSeconds()])).toEqual([
      ['tsdb', 10_000, 300],
    ]);
    expect(plan.notes).toHaveLength(2);
  });

  it('reads maxReceiveCount from cdk.json or as a -c string, and rejects nonsense', () => {
    expect(readSettings(makeApp({})).maxReceiveCount).toBe(5);
    expect(readSettings(makeApp({ maxReceiveCount: '3' })).maxReceiveCount).toBe(3);
    expect(() => readSettings(makeApp({ maxReceiveCount: '0' }))).toThrow(SynthSettingsError);
    expect(() => readSettings(makeApp({ maxReceiveCount: 'five' }))).toThrow(SynthSettingsError);
  });

  it('copies the config with a command that survives quotes in paths', () => {
    const from = join(dir, "it's.yaml");
    const to = join(dir, 'copy of "it".yaml');
    writeFileSync(from, 'Svc: {}\n');
    const run = spawnSync('bash', ['-c', copyFileCommand(from, to, 'linux')], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(readFileSync(to, 'utf8')).toBe('Svc: {}\n');
    expect(() => copyFileCommand('C:\\a "b".yaml', 'C:\\out', 'win32')).toThrow(/must not contain/);
    expect(copyFileCommand('C:\\svc config.yaml', 'C:\\out\\svc.yaml', 'win32')).toBe(
      `node -e "require('node:fs').copyFileSync(process.argv[1], process.argv[2])" "C:\\svc config.yaml" "C:\\out\\svc.yaml"`,
    );
  });

  it('bundles the secret fetching beside index.mjs with a command that survives quotes in paths, and passes cmd nothing it cannot take', () => {
    const out = join(dir, `the "asset" it's`);
    const command = esbuildCommand(secretFetchEsbuildOptions(out, REPO_ROOT), 'linux');
    const run = spawnSync('bash', ['-c', command], { cwd: REPO_ROOT, encoding: 'utf8' });
    expect(run.status, run.stderr).toBe(0);
    const bundle = readFileSync(join(out, SECRET_FETCH_FILE), 'utf8');
    expect(bundle).toMatch(/["'`]GetSecretValue["'`]/);
    expect(existsSync(join(out, `${SECRET_FETCH_FILE}.map`))).toBe(true);
    // On Windows the options (JSON, full of double quotes) travel base64-encoded: quotable by cmd.
    const win = esbuildCommand(secretFetchEsbuildOptions('C:\\cdk.out\\asset', 'C:\\svc'), 'win32');
    expect(win).toMatch(/^node -e "[^"]+" "[^"]+" "[A-Za-z0-9+/=]+"$/);
  });
});

describe('cdk synth (the real CLI, compiled app)', () => {
  const cli = join(REPO_ROOT, 'node_modules', 'aws-cdk', 'bin', 'cdk');
  const synth = (...args: string[]) =>
    spawnSync(process.execPath, [cli, 'synth', '--quiet', ...args], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      // No AWS account here: keep the SDK from probing the EC2 instance metadata service.
      env: { ...process.env, AWS_EC2_METADATA_DISABLED: 'true' },
    });

  it('synthesizes with a valid config', () => {
    const run = synth('-c', `config=${validFile}`, '--output', join(dir, 'cli.out'));
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(join(dir, 'cli.out', 'Svc.template.json'))).toBe(true);
  }, 120_000);

  it('synthesizes a stack without Svc resources when Svc.auditEvents.enable is false', () => {
    const file = join(dir, 'cli-disabled.yaml');
    writeFileSync(file, 'Svc:\n  auditEvents:\n    enable: false\n');
    const run = synth('-c', `config=${file}`, '--output', join(dir, 'cli-disabled.out'));
    expect(run.status, run.stderr).toBe(0);
    const resources =
      (
        JSON.parse(readFileSync(join(dir, 'cli-disabled.out', 'Svc.template.json'), 'utf8')) as {
          Resources?: Record<string, { Type: string }>;
        }
      ).Resources ?? {};
    expect(
      Object.values(resources)
        .map((r) => r.Type)
        .filter((type) => type !== 'AWS::CDK::Metadata'),
    ).toEqual([]);
  }, 120_000);

  it('fails with the config problems listed', () => {
    const run = synth('-c', `config=${invalidFile}`, '--output', join(dir, 'cli-invalid.out'));
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain(`${invalidFile}:${INVALID_AT}`);
  }, 60_000);
});

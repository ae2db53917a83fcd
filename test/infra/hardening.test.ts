/**
 * The stack an AWS engineer signs off, asserted over synthesized templates (aws-cdk-lib/assertions):
 * every cloud writer planned from the config, the edge identity and its paste-ready EdgeConfig,
 * alarms and dashboard, VPC placement of the tsdb writer, and least privilege. Two stacks are
 * synthesized once for the suite (bundling is real esbuild): FULL (audit API, tsdb + parquet +
 * monsaas, VPC, alarm topic) and PLATFORM_ONLY (no audit API; the tsdb writer the edge feeds).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_ENV } from '../../functions/lambda-env.js';
import { buildSvcApp, readSettings, SynthSettingsError } from '../../infra/app.js';
import { EDGE_CONFIG_OUTPUT, EDGE_USER_OUTPUT } from '../../infra/constructs/edge-access.js';
import { VPC_ENI_ACTIONS } from '../../infra/constructs/svc-function.js';
import { planDestinations } from '../../infra/destinations.js';
import type { SvcStack } from '../../infra/stack.js';
import { loadConfigFile, parseConfigText } from '../../shared/config/load.js';
import { cdkApp, FULL_CONFIG as FULL, fullContext, FULL_TOPIC as TOPIC, FULL_VPC as VPC } from '../support/cdk-app.js';

/** No audit API; user events to tsdb (and MQTT, which stays on the edge). */
const PLATFORM_ONLY = `Svc:
  tsdbConfig:
    enable: true
    host: influx.internal.example.com
    maxBatchSize: 250
  mqttConfig:
    enable: true
  userEvents:
    enable: true
    sendToTsdb: {enable: true}
    sendToMQTT: {enable: true, postTo: {everythingTopic: {enable: true}}}
  auditEvents:
    enable: false
`;

let dir: string;
let outdir: string;
let full: SvcStack;
let fullTemplate: Template;
let platformOnly: SvcStack;
let platformTemplate: Template;

const makeApp = (context: Record<string, unknown>): App => cdkApp(outdir, context);

function configFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

// --- reading templates without casts: narrow what the assertions API returns ---

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function field(value: unknown, ...path: string[]): unknown {
  let at = value;
  for (const key of path) at = isObject(at) ? at[key] : undefined;
  return at;
}

function list(value: unknown): unknown[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function resources(t: Template, type: string): [string, Record<string, unknown>][] {
  return Object.entries(t.findResources(type)).map(([id, r]) => [id, isObject(r) ? r : {}]);
}

function idOf(t: Template, type: string, prefix: string): string {
  const id = Object.keys(t.findResources(type)).find((key) => key.startsWith(prefix));
  if (!id) throw new Error(`no ${type} ${prefix}*`);
  return id;
}

/** A CloudFormation value as text: Ref and GetAtt become <…>, Fn::Join is joined (for IAM resources). */
function flatten(value: unknown, refs: Record<string, string> = {}): string {
  if (typeof value === 'string') return value;
  const ref = field(value, 'Ref');
  if (typeof ref === 'string') return refs[ref] ?? `<${ref}>`;
  const getAtt = field(value, 'Fn::GetAtt');
  if (Array.isArray(getAtt)) return `<${getAtt.map(String).join('.')}>`;
  const join = field(value, 'Fn::Join');
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1]))
    return join[1].map((part) => flatten(part, refs)).join(join[0]);
  throw new Error(`cannot flatten ${JSON.stringify(value)}`);
}

interface Statement {
  /** Logical id of the policy (or of the role or user holding it inline). */
  where: string;
  /** The roles and users an AWS::IAM::Policy is attached to (logical ids). */
  attachedTo: string[];
  effect: unknown;
  actions: string[];
  resources: unknown[];
  principal: unknown;
}

/** Every policy statement of the template: IAM policies, inline role and user policies, bucket and queue policies. */
function statements(t: Template): Statement[] {
  const out: Statement[] = [];
  const add = (where: string, document: unknown, attachedTo: string[] = []) => {
    for (const s of list(field(document, 'Statement'))) {
      out.push({
        where,
        attachedTo,
        effect: field(s, 'Effect'),
        actions: list(field(s, 'Action')).map(String),
        resources: list(field(s, 'Resource')),
        principal: field(s, 'Principal'),
      });
    }
  };
  for (const type of [
    'AWS::IAM::Policy',
    'AWS::IAM::ManagedPolicy',
    'AWS::S3::BucketPolicy',
    'AWS::SQS::QueuePolicy',
  ]) {
    for (const [id, r] of resources(t, type)) {
      const attached = [...list(field(r, 'Properties', 'Roles')), ...list(field(r, 'Properties', 'Users'))].map((ref) =>
        String(field(ref, 'Ref')),
      );
      add(id, field(r, 'Properties', 'PolicyDocument'), attached);
    }
  }
  for (const type of ['AWS::IAM::Role', 'AWS::IAM::User']) {
    for (const [id, r] of resources(t, type))
      for (const p of list(field(r, 'Properties', 'Policies'))) add(id, field(p, 'PolicyDocument'), [id]);
  }
  return out;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-infra-hardening-'));
  outdir = join(dir, 'cdk.out');
  full = buildSvcApp(makeApp(fullContext(configFile('full.yaml', FULL))));
  fullTemplate = Template.fromStack(full);
  platformOnly = buildSvcApp(makeApp({ config: configFile('platform.yaml', PLATFORM_ONLY) }));
  platformTemplate = Template.fromStack(platformOnly);
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('cloud writers planned from the config', () => {
  it('deploys tsdb (audit + platform), parquet (audit) and monsaas (platform), each with its SVC_DESTINATION', () => {
    const byDestination = Object.fromEntries(
      resources(fullTemplate, 'AWS::Lambda::Function').flatMap(([id, r]) => {
        const name = field(r, 'Properties', 'Environment', 'Variables', LAMBDA_ENV.destination);
        return typeof name === 'string' ? [[name, id]] : [];
      }),
    );
    expect(Object.keys(byDestination).sort()).toEqual(['monsaas', 'parquet', 'tsdb']);
    const batching = (writer: string | undefined) => {
      const mapping = resources(fullTemplate, 'AWS::Lambda::EventSourceMapping').find(
        ([, m]) => field(m, 'Properties', 'FunctionName', 'Ref') === writer,
      );
      return [
        field(mapping?.[1], 'Properties', 'BatchSize'),
        field(mapping?.[1], 'Properties', 'MaximumBatchingWindowInSeconds') ?? 0,
      ];
    };
    // tsdb takes both: the tighter batch (tsdbConfig.maxBatchSize 500 < 2000) and window (1 s < 5 s).
    expect(batching(byDestination['tsdb'])).toEqual([500, 1]);
    // monsaas: 10 messages, at once (docs/deployment.md).
    expect(batching(byDestination['monsaas'])).toEqual([10, 0]);
  });

  it('lets the audit API send only to the queues of the destinations that take audit events', () => {
    const [, audit] =
      resources(fullTemplate, 'AWS::Lambda::Function').find(([id]) => id.startsWith('IngestApiAuditFunction')) ?? [];
    const urls = flatten(field(audit, 'Properties', 'Environment', 'Variables', LAMBDA_ENV.eventQueueUrls));
    const parsed: unknown = JSON.parse(urls);
    expect(isObject(parsed) ? Object.keys(parsed).sort() : parsed).toEqual(['parquet', 'tsdb']);
    const send = statements(fullTemplate).filter(
      (s) => s.where.startsWith('IngestApiAuditFunction') && s.actions.includes('sqs:SendMessage'),
    );
    expect(send.flatMap((s) => s.resources.map((r) => flatten(r))).sort()).toEqual([
      `<${idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineParquetQueue')}.Arn>`,
      `<${idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineTsdbQueue')}.Arn>`,
    ]);
  });

  it('says at synth which enabled destinations run on the edge only, each kind with its own id', () => {
    const warnings = Annotations.fromStack(full)
      .findWarning('*', Match.stringLikeRegexp('runs on the edge only'))
      .map((w) => (typeof w.entry.data === 'string' ? w.entry.data : JSON.stringify(w.entry.data)));
    expect(warnings.sort()).toEqual([
      expect.stringMatching(
        /^destination mqtt runs on the edge only: it publishes to an on-premises MQTT broker .*\[ack: svc:edge-only-destination\]$/,
      ),
      expect.stringMatching(
        /^destination tablefile runs on the edge only: it writes files to a local directory.*\[ack: svc:edge-only-destination\]$/,
      ),
    ]);
    // A tsdb on a loopback host is not deployed, with the reason.
    const loopback = planDestinations(
      parseConfigText(PLATFORM_ONLY.replace('influx.internal.example.com', '127.0.0.1'), 'loopback.yaml', {}).config,
    );
    expect(loopback.deployed).toEqual([]);
    expect(loopback.notes.map((n) => [n.kind, n.message])).toEqual(
      expect.arrayContaining([
        [
          'edge-only-destination',
          expect.stringMatching(/^destination tsdb runs on the edge only: Svc\.tsdbConfig\.host is "127\.0\.0\.1"/),
        ],
      ]),
    );
  });

  it('with auditEvents.enable false deploys no API but the writers of the platform data, and says so', () => {
    for (const type of ['AWS::ApiGatewayV2::Api', 'AWS::DynamoDB::Table']) platformTemplate.resourceCountIs(type, 0);
    expect(platformOnly.ingestApi).toBeUndefined();
    const functions = resources(platformTemplate, 'AWS::Lambda::Function');
    expect(
      functions.map(([, r]) => field(r, 'Properties', 'Environment', 'Variables', LAMBDA_ENV.destination)),
    ).toEqual(['tsdb']);
    platformTemplate.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 250,
      MaximumBatchingWindowInSeconds: 1,
    });
    Annotations.fromStack(platformOnly).hasInfo(
      '*',
      Match.stringLikeRegexp(
        'no audit API: Svc.auditEvents.enable is false; the stack deploys the writers of the platform data the edge forwards \\(tsdb\\)',
      ),
    );
  });
});

describe('the edge identity and EdgeConfig', () => {
  const REGION = 'eu-west-1';
  const BUCKET = 'svc-storagebucket-1a2b3c';
  const queueUrl = (id: string) => `https://sqs.${REGION}.amazonaws.com/123456789012/${id}`;

  it('gives the edge user exactly sqs:SendMessage on the platform queues and s3:PutObject on the claim checks', () => {
    const users = resources(fullTemplate, 'AWS::IAM::User');
    expect(users).toHaveLength(1);
    const [userId, user] = users[0] ?? [];
    const granted = statements(fullTemplate).filter((s) => userId !== undefined && s.attachedTo.includes(userId));
    const bucket = idOf(fullTemplate, 'AWS::S3::Bucket', 'StorageBucket');
    expect(
      granted.map(({ effect, actions, resources: r }) => ({
        effect,
        actions,
        resources: r.map((x) => flatten(x)).sort(),
      })),
    ).toEqual([
      {
        effect: 'Allow',
        actions: ['sqs:SendMessage'],
        resources: [
          `<${idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineMonsaasQueue')}.Arn>`,
          `<${idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineTsdbQueue')}.Arn>`,
        ],
      },
      { effect: 'Allow', actions: ['s3:PutObject'], resources: [`<${bucket}.Arn>/claim-checks/*`] },
    ]);
    // No inline or managed policy of its own, and no access key in the template.
    expect(field(user, 'Properties', 'Policies')).toBeUndefined();
    expect(field(user, 'Properties', 'ManagedPolicyArns')).toBeUndefined();
    fullTemplate.resourceCountIs('AWS::IAM::AccessKey', 0);
    expect(field(fullTemplate.findOutputs(EDGE_USER_OUTPUT), EDGE_USER_OUTPUT, 'Value')).toEqual({ Ref: userId });
  });

  it('outputs Svc.cloud lines that the real config loader accepts, naming the platform queues and the bucket', () => {
    const value = field(fullTemplate.findOutputs(EDGE_CONFIG_OUTPUT), EDGE_CONFIG_OUTPUT, 'Value');
    const tsdb = idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineTsdbQueue');
    const monsaas = idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineMonsaasQueue');
    const bucket = idOf(fullTemplate, 'AWS::S3::Bucket', 'StorageBucket');
    // What CloudFormation substitutes at deploy time: the region, queue URLs (Ref of a queue) and the bucket name.
    const yaml = flatten(value, {
      'AWS::Region': REGION,
      [tsdb]: queueUrl(tsdb),
      [monsaas]: queueUrl(monsaas),
      [bucket]: BUCKET,
    });
    const loaded = loadConfigFile(configFile('edge.yaml', `${yaml}\n`));
    expect(loaded.config.cloud).toEqual({
      enable: true,
      region: REGION,
      endpoint: '',
      profile: '',
      queues: { tsdb: queueUrl(tsdb), monsaas: queueUrl(monsaas) },
      claimCheck: { bucket: BUCKET, prefix: 'claim-checks/' },
    });
    // The platform-only stack: the tsdb queue alone.
    const platformTsdb = idOf(platformTemplate, 'AWS::SQS::Queue', 'EventPipelineTsdbQueue');
    const platformYaml = flatten(field(platformTemplate.findOutputs(EDGE_CONFIG_OUTPUT), EDGE_CONFIG_OUTPUT, 'Value'), {
      'AWS::Region': REGION,
      [platformTsdb]: queueUrl(platformTsdb),
      [idOf(platformTemplate, 'AWS::S3::Bucket', 'StorageBucket')]: BUCKET,
    });
    expect(loadConfigFile(configFile('edge-platform.yaml', `${platformYaml}\n`)).config.cloud.queues).toEqual({
      tsdb: queueUrl(platformTsdb),
      monsaas: '',
    });
  });
});

describe('alarms and dashboard', () => {
  const alarms = (t: Template) =>
    resources(t, 'AWS::CloudWatch::Alarm').map(([id, r]) => ({
      id,
      p: isObject(r['Properties']) ? r['Properties'] : {},
    }));

  it('alarms per queue (dead letters, oldest message), per function (errors, throttles) and on the API 5xx rate', () => {
    const all = alarms(fullTemplate);
    // 3 queues × 2 + 3 writers × 2 + the audit function × 2 + the API.
    expect(all).toHaveLength(15);
    const named = (prefix: string) => all.filter((a) => a.id.startsWith(`Alarms${prefix}`)).map((a) => a.p);
    const dlq = idOf(fullTemplate, 'AWS::SQS::Queue', 'EventPipelineTsdbDeadLetterQueue');
    expect(named('TsdbDeadLetters')).toEqual([
      expect.objectContaining({
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlq, 'QueueName'] } }],
      }),
    ]);
    expect(named('TsdbOldestMessage')).toEqual([
      expect.objectContaining({
        MetricName: 'ApproximateAgeOfOldestMessage',
        Threshold: 900,
        ComparisonOperator: 'GreaterThanThreshold',
      }),
    ]);
    for (const d of ['Tsdb', 'Parquet', 'Monsaas']) {
      expect(named(`${d}WriterErrors`)).toEqual([
        expect.objectContaining({ Namespace: 'AWS/Lambda', MetricName: 'Errors', Threshold: 1 }),
      ]);
      expect(named(`${d}WriterThrottles`)).toEqual([
        expect.objectContaining({ Namespace: 'AWS/Lambda', MetricName: 'Throttles', Threshold: 1 }),
      ]);
    }
    for (const metric of ['Errors', 'Throttles'])
      expect(named(`AuditFunction${metric}`)).toEqual([
        expect.objectContaining({
          Namespace: 'AWS/Lambda',
          MetricName: metric,
          Threshold: 1,
          Dimensions: [
            {
              Name: 'FunctionName',
              Value: { Ref: idOf(fullTemplate, 'AWS::Lambda::Function', 'IngestApiAuditFunction') },
            },
          ],
        }),
      ]);
    const api = named('Api5xxRate')[0];
    expect(api).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanThreshold' });
    expect(JSON.stringify(api?.['Metrics'])).toContain('"MetricName":"5xx"');
    expect(JSON.stringify(api?.['Metrics'])).toContain('IF(requests > 0, 100 * errors / requests, 0)');
  });

  it('gives every function an error alarm', () => {
    for (const t of [fullTemplate, platformTemplate]) {
      const functions = resources(t, 'AWS::Lambda::Function').map(([id]) => id);
      const watched = alarms(t)
        .filter(({ p }) => p['Namespace'] === 'AWS/Lambda' && p['MetricName'] === 'Errors')
        .map(({ p }) => field(list(p['Dimensions'])[0], 'Value', 'Ref'));
      expect(functions.length).toBeGreaterThan(0);
      expect(watched.sort()).toEqual(functions.sort());
    }
  });

  it('wires every alarm (alarm and OK) to the topic given', () => {
    for (const { id, p } of alarms(fullTemplate)) {
      expect([id, p['AlarmActions'], p['OKActions']]).toEqual([id, [TOPIC], [TOPIC]]);
    }
  });

  it('without a topic, the alarms have no actions and synth says they go nowhere', () => {
    const all = alarms(platformTemplate);
    expect(all).toHaveLength(4);
    for (const { p } of all) expect([p['AlarmActions'], p['OKActions']]).toEqual([undefined, undefined]);
    Annotations.fromStack(platformOnly).hasWarning(
      '*',
      Match.stringLikeRegexp('no alarmTopicArn: the alarms .* notify nobody.*\\[ack: svc:no-alarm-topic\\]'),
    );
    Annotations.fromStack(full).hasNoWarning('*', Match.stringLikeRegexp('no alarmTopicArn'));
  });

  it('draws a dashboard of queue depths, ages, dead letters, writer errors/throttles/duration and API traffic', () => {
    const dashboards = resources(fullTemplate, 'AWS::CloudWatch::Dashboard');
    expect(dashboards).toHaveLength(1);
    const body: unknown = JSON.parse(flatten(field(dashboards[0]?.[1], 'Properties', 'DashboardBody')));
    const widgets = list(field(body, 'widgets')).map((w) => ({
      title: field(w, 'properties', 'title'),
      // Each metric line is [namespace, metric name, dimension, value, options].
      metrics: [
        ...new Set(
          list(field(w, 'properties', 'metrics')).map((m) =>
            Array.isArray(m) ? `${String(m[0])} ${String(m[1])}` : '',
          ),
        ),
      ],
    }));
    expect(widgets).toEqual([
      { title: 'Queue depth (messages)', metrics: ['AWS/SQS ApproximateNumberOfMessagesVisible'] },
      { title: 'Oldest message (seconds)', metrics: ['AWS/SQS ApproximateAgeOfOldestMessage'] },
      { title: 'Dead letters (messages)', metrics: ['AWS/SQS ApproximateNumberOfMessagesVisible'] },
      { title: 'Writer errors', metrics: ['AWS/Lambda Errors'] },
      { title: 'Writer throttles', metrics: ['AWS/Lambda Throttles'] },
      { title: 'Writer duration (ms, p99)', metrics: ['AWS/Lambda Duration'] },
      { title: 'Audit API requests', metrics: ['AWS/ApiGateway Count', 'AWS/ApiGateway 4xx', 'AWS/ApiGateway 5xx'] },
      { title: 'Audit function errors and throttles', metrics: ['AWS/Lambda Errors', 'AWS/Lambda Throttles'] },
    ]);
  });

  it('reads the thresholds from context, and rejects nonsense', () => {
    const settings = readSettings(makeApp({ alarmOldestMessageSeconds: '600', alarmApi5xxPercent: '2.5' }));
    expect([settings.alarmOldestMessageSeconds, settings.alarmApi5xxPercent, settings.alarmTopicArn]).toEqual([
      600,
      2.5,
      undefined,
    ]);
    expect(() => readSettings(makeApp({ alarmOldestMessageSeconds: '30' }))).toThrow(
      /"alarmOldestMessageSeconds" must be an integer from 60/,
    );
    expect(() => readSettings(makeApp({ alarmApi5xxPercent: '0' }))).toThrow(
      /"alarmApi5xxPercent" must be a number above 0/,
    );
    expect(() => readSettings(makeApp({ alarmTopicArn: 'svc-alarms' }))).toThrow(SynthSettingsError);
    expect(() => readSettings(makeApp({ alarmTopicArn: `${TOPIC}.fifo` }))).toThrow(/FIFO topic/);
  });
});

describe('VPC placement of the tsdb writer', () => {
  it('puts the tsdb writer, and only it, in the subnets and security groups given', () => {
    const withVpc = resources(fullTemplate, 'AWS::Lambda::Function').filter(
      ([, r]) => field(r, 'Properties', 'VpcConfig') !== undefined,
    );
    expect(withVpc.map(([id]) => id)).toEqual([expect.stringMatching(/^EventPipelineTsdbWriter/)]);
    expect(field(withVpc[0]?.[1], 'Properties', 'VpcConfig')).toEqual({
      SubnetIds: VPC.subnetIds,
      SecurityGroupIds: VPC.securityGroupIds,
    });
    // The stack changes nothing of the operator's network.
    fullTemplate.resourceCountIs('AWS::EC2::SecurityGroupEgress', 0);
    fullTemplate.resourceCountIs('AWS::EC2::SecurityGroupIngress', 0);
  });

  it('validates writerVpc with messages that say what is wrong', () => {
    const settings = (writerVpc: unknown) => readSettings(makeApp({ writerVpc }));
    expect(settings(JSON.stringify(VPC)).writerVpc).toEqual(VPC);
    expect(() => settings('{vpcId')).toThrow(/context "writerVpc" is not JSON; expected \{"vpcId"/);
    expect(() => settings({ ...VPC, vpcId: 'vpc-1' })).toThrow(
      /\.vpcId must be a VPC id such as vpc-0123456789abcdef0 \(got "vpc-1"\)/,
    );
    expect(() => settings({ ...VPC, subnetIds: [] })).toThrow(/\.subnetIds must be a non-empty list/);
    expect(() => settings({ ...VPC, securityGroupIds: ['sg-0123456789abcdef0', 'subnet-0123456789abcdef0'] })).toThrow(
      /\.securityGroupIds\[1\] must be an id such as sg-/,
    );
    expect(() => settings({ ...VPC, subnet: 'x' })).toThrow(/unknown key "subnet"/);
    expect(() => settings({ ...VPC, subnetIds: [VPC.subnetIds[0], VPC.subnetIds[0]] })).toThrow(
      /lists subnet-0123456789abcdef0 twice/,
    );
  });

  it('warns that a monsaas writer scrambling without scrambleSecret gives each instance its own key', () => {
    Annotations.fromStack(full).hasWarning(
      '*',
      Match.stringLikeRegexp('Svc.userEvents.sendToMonSaas.scrambleSecret is empty: every monsaas writer instance'),
    );
    // No monsaas writer there: nothing to warn about.
    expect(Annotations.fromStack(platformOnly).findWarning('*', Match.stringLikeRegexp('scrambleSecret'))).toEqual([]);
  });

  it('warns when writerVpc is given but no tsdb writer is deployed', () => {
    const file = configFile(
      'parquet-only.yaml',
      'Svc:\n  auditEvents:\n    enable: true\n    destination:\n      enable: true\n      type: tablefile\n',
    );
    // tablefile only: no writer at all, so nothing is bundled.
    Annotations.fromStack(buildSvcApp(makeApp({ config: file, writerVpc: VPC }))).hasWarning(
      '*',
      Match.stringLikeRegexp('writerVpc is given but no tsdb writer is deployed'),
    );
  });
});

describe('least privilege and the rest of the checklist, over the FULL template', () => {
  /**
   * The only statements allowed a wildcard, and why:
   * - Deny statements: the TLS-only policies of the bucket and queues (enforceSSL) deny every action
   *   (s3:*, sqs:*) to every principal without TLS; a Deny takes rights away.
   * - The VPC writer's network-interface statement (VPC_ENI_ACTIONS on Resource "*"): the EC2 Describe
   *   actions have no resource-level permissions and Lambda checks the others against "*" when it
   *   creates a VPC function (AWS's own AWSLambdaVPCAccessExecutionRole is the same).
   * A resource scoped to object keys under a named bucket (`…/claim-checks/*`) is not a wildcard.
   */
  const isEniStatement = (s: Statement) =>
    s.effect === 'Allow' &&
    JSON.stringify([...s.actions].sort()) === JSON.stringify([...VPC_ENI_ACTIONS].sort()) &&
    JSON.stringify(s.resources) === '["*"]';

  it('grants no wildcard action or resource except where AWS requires it', () => {
    const all = statements(fullTemplate);
    expect(all.length).toBeGreaterThan(10);
    const offending = all.filter((s) => {
      if (s.effect === 'Deny' || isEniStatement(s)) return false;
      const wildAction = s.actions.some((a) => a.includes('*'));
      const wildResource = s.resources.some((r) => {
        const text = flatten(r);
        return (
          text.includes('*') && !/^(<[A-Za-z0-9]+\.Arn>|arn:<AWS::Partition>:s3:::[a-z0-9.-]+)\/[^*]*\*$/.test(text)
        );
      });
      return wildAction || wildResource || JSON.stringify(s.principal ?? null).includes('"*"');
    });
    expect(offending).toEqual([]);
    // The exception is on the VPC writer alone.
    expect(all.filter(isEniStatement).map((s) => s.where)).toEqual([
      expect.stringMatching(/^EventPipelineTsdbWriterRole/),
    ]);
    // No managed policy anywhere: AWS's brings `Resource: *` by reference.
    for (const type of ['AWS::IAM::Role', 'AWS::IAM::User'])
      for (const [, r] of resources(fullTemplate, type))
        expect(field(r, 'Properties', 'ManagedPolicyArns')).toBeUndefined();
    fullTemplate.resourceCountIs('AWS::IAM::ManagedPolicy', 0);
  });

  it('lets each function write only its own log group', () => {
    for (const [id, r] of resources(fullTemplate, 'AWS::Lambda::Function')) {
      const role = field(r, 'Properties', 'Role', 'Fn::GetAtt');
      const roleId = Array.isArray(role) ? String(role[0]) : '';
      const logGroup = field(r, 'Properties', 'LoggingConfig', 'LogGroup', 'Ref');
      const logs = statements(fullTemplate).filter(
        (s) => s.attachedTo.includes(roleId) && s.actions.some((a) => a.startsWith('logs:')),
      );
      expect([id, logs.map((s) => [s.actions, s.resources])]).toEqual([
        id,
        [[['logs:CreateLogStream', 'logs:PutLogEvents'], [{ 'Fn::GetAtt': [logGroup, 'Arn'] }]]],
      ]);
    }
  });

  it('gives every queue a dead-letter queue with maxReceiveCount ≥ 5 and a longer retention', () => {
    const queues = Object.fromEntries(resources(fullTemplate, 'AWS::SQS::Queue'));
    const sources = Object.entries(queues).filter(([, q]) => field(q, 'Properties', 'RedrivePolicy') !== undefined);
    const targets = new Set(
      sources.map(([, q]) => flatten(field(q, 'Properties', 'RedrivePolicy', 'deadLetterTargetArn'))),
    );
    // Every queue is a source with a dead-letter queue, or that dead-letter queue.
    expect(sources.length * 2).toBe(Object.keys(queues).length);
    for (const [id, q] of sources) {
      const target = field(q, 'Properties', 'RedrivePolicy', 'deadLetterTargetArn', 'Fn::GetAtt');
      const dlq = queues[Array.isArray(target) ? String(target[0]) : ''];
      expect([id, Number(field(q, 'Properties', 'RedrivePolicy', 'maxReceiveCount')) >= 5]).toEqual([id, true]);
      expect(Number(field(dlq, 'Properties', 'MessageRetentionPeriod'))).toBeGreaterThan(
        Number(field(q, 'Properties', 'MessageRetentionPeriod')),
      );
      expect(targets.has(`<${Array.isArray(target) ? String(target[0]) : ''}.Arn>`)).toBe(true);
    }
  });

  it("sets every queue's visibility timeout to at least 6 × the timeout of the function it feeds", () => {
    const functions = Object.fromEntries(resources(fullTemplate, 'AWS::Lambda::Function'));
    const queues = Object.fromEntries(resources(fullTemplate, 'AWS::SQS::Queue'));
    const mappings = resources(fullTemplate, 'AWS::Lambda::EventSourceMapping');
    expect(mappings).toHaveLength(3);
    for (const [, m] of mappings) {
      const source = field(m, 'Properties', 'EventSourceArn', 'Fn::GetAtt');
      const queue = queues[Array.isArray(source) ? String(source[0]) : ''];
      const fn = functions[String(field(m, 'Properties', 'FunctionName', 'Ref'))];
      expect(Number(field(queue, 'Properties', 'VisibilityTimeout'))).toBeGreaterThanOrEqual(
        6 * Number(field(fn, 'Properties', 'Timeout')),
      );
    }
  });

  it('runs every function on nodejs24.x, arm64', () => {
    const functions = resources(fullTemplate, 'AWS::Lambda::Function');
    expect(functions).toHaveLength(4);
    for (const [id, r] of functions)
      expect([id, field(r, 'Properties', 'Runtime'), field(r, 'Properties', 'Architectures')]).toEqual([
        id,
        'nodejs24.x',
        ['arm64'],
      ]);
  });

  it('keeps the bucket encrypted, TLS-only and private', () => {
    fullTemplate.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
    fullTemplate.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });
});

/**
 * cdk-nag's AwsSolutions pack over the synthesized stacks: no finding is left unacknowledged, each
 * acknowledgement sits at the construct that needs it with its reason and (for IAM wildcards) names
 * the one resource it covers; the audit API's stage writes a JSON access log without credentials and
 * is throttled, and the audit function's concurrency is reserved (derived from the config, or off).
 * cfn-lint checks the template where it is installed. The FULL stack is synthesized once for the
 * file (real esbuild bundling), and a small audit-only stack without a token beside it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type CfnResource, Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import { NagMessageLevel, NagPack, rules } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditApiLimits } from '../../infra/api-limits.js';
import { buildSvcApp } from '../../infra/app.js';
import { ACCESS_LOG_FIELDS } from '../../infra/constructs/ingest-api.js';
import { acknowledgeClaimCheckWildcard } from '../../infra/constructs/storage.js';
import { formatFindings, nagFindings } from '../../infra/nag.js';
import type { SvcStack } from '../../infra/stack.js';
import { parseConfigText } from '../../shared/config/load.js';
import { isRecord } from '../../shared/util/records.js';
import { cdkApp, FULL_CONFIG, fullContext } from '../support/cdk-app.js';

/** The audit API alone (tablefile stays on the edge: no writer), without a token, both AWS limits off. */
const OPEN_UNLIMITED = `Svc:
  auditEvents:
    enable: true
    aws:
      throttle: {enable: false}
      reservedConcurrency: {enable: false}
    destination:
      enable: true
      type: tablefile
`;

let dir: string;
let full: SvcStack;
let fullTemplate: Template;
let open: SvcStack;
let openTemplate: Template;

function configFile(name: string, text: string): string {
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'svc-infra-nag-'));
  const outdir = join(dir, 'cdk.out');
  full = buildSvcApp(cdkApp(outdir, fullContext(configFile('full.yaml', FULL_CONFIG))));
  fullTemplate = Template.fromStack(full);
  open = buildSvcApp(cdkApp(join(dir, 'open.out'), { config: configFile('open.yaml', OPEN_UNLIMITED) }));
  openTemplate = Template.fromStack(open);
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The one resource of `type` in `template`, as [logical id, properties]. */
function single(template: Template, type: string): [string, Record<string, unknown>] {
  const found = Object.entries(template.findResources(type));
  expect(found.map(([id]) => id)).toHaveLength(1);
  const [id, resource] = found[0] ?? ['', {}];
  const properties = isRecord(resource) ? resource['Properties'] : undefined;
  return [id, isRecord(properties) ? properties : {}];
}

/** Every acknowledgement under `root`: `<construct path> <rule id>` with its reason. */
function acknowledgements(root: IConstruct): { at: string; id: string; reason: unknown }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY && isRecord(entry.data))
      .flatMap((entry) =>
        Object.entries(isRecord(entry.data) ? entry.data : {}).map(([id, reason]) => ({
          at: construct.node.path,
          id: id.replace(/^annotation::/i, ''),
          reason,
        })),
      ),
  );
}

describe('cdk-nag AwsSolutions', () => {
  it('finds nothing unacknowledged in the FULL stack', () => {
    const findings = nagFindings(full);
    expect(formatFindings(findings)).toBe('cdk-nag AwsSolutions: no findings');
    expect(findings).toEqual([]);
  });

  it('acknowledges only at the constructs that need it, each with a reason, IAM5 per resource', () => {
    const all = acknowledgements(full.node.root);
    // Nothing at the app or stack level, which would hide the finding everywhere.
    expect(all.filter(({ at }) => !at.includes('/'))).toEqual([]);
    for (const { id, reason } of all)
      expect([id, typeof reason === 'string' && reason.length > 40]).toEqual([id, true]);
    expect(all.filter(({ id }) => id.startsWith('AwsSolutions-IAM5') && !id.includes('[Resource::'))).toEqual([]);
    const bucket = Stack.of(full).resolve(full.storage?.bucket.bucketArn);
    const bucketId = isRecord(bucket) && Array.isArray(bucket['Fn::GetAtt']) ? String(bucket['Fn::GetAtt'][0]) : '';
    expect(bucketId).toMatch(/^StorageBucket/);
    const claimChecks = `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/claim-checks/*]`;
    const lambda = (path: string) => [`${path} AwsSolutions-L1`];
    expect(all.map(({ at, id }) => `${at} ${id}`).sort()).toEqual(
      [
        'Svc/Storage/AccessLogs AwsSolutions-S1',
        'Svc/EventPipeline/Tsdb/WriterRole AwsSolutions-IAM5[Resource::*]',
        ...['Tsdb', 'Parquet', 'Monsaas'].flatMap((d) => [
          `Svc/EventPipeline/${d}/WriterRole ${claimChecks}`,
          ...lambda(`Svc/EventPipeline/${d}/Writer`),
        ]),
        'Svc/EventPipeline/Parquet/WriterRole AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::svc-audit-exports/audit-events/*]',
        `Svc/IngestApi/AuditFunctionRole ${claimChecks}`,
        ...lambda('Svc/IngestApi/AuditFunction'),
        `Svc/EdgeAccess/User ${claimChecks}`,
        'Svc/IngestApi/RateLimitTable AwsSolutions-DDB3',
        'Svc/IngestApi/IdempotencyTable AwsSolutions-DDB3',
        ...['POST--api--v1--audit-event', 'OPTIONS--api--v1--audit-event'].map(
          (route) => `Svc/IngestApi/HttpApi/${route} AwsSolutions-APIG4`,
        ),
        ...['GET--api--v1--test-connection', 'OPTIONS--api--v1--test-connection'].map(
          (route) => `Svc/IngestApi/HttpApi/${route} AwsSolutions-APIG4`,
        ),
      ].sort(),
    );
  });

  it('an acknowledged wildcard covers that resource alone: another wildcard of the same role is still found', () => {
    const app = new App();
    const stack = new Stack(app, 'Scoped');
    const bucket = new Bucket(stack, 'Bucket');
    const role = new Role(stack, 'Role', { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    role.addToPrincipalPolicy(
      new PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects('claim-checks/*'), bucket.arnForObjects('other/*')],
      }),
    );
    acknowledgeClaimCheckWildcard(role, bucket);
    const iam = nagFindings(stack).filter((f) => f.rule.startsWith('AwsSolutions-IAM5'));
    expect(iam.map((f) => [f.rule, f.resource])).toEqual([
      [
        expect.stringMatching(/^AwsSolutions-IAM5\[Resource::<Bucket[0-9A-F]+\.Arn>\/other\/\*\]$/),
        'Scoped/Role/DefaultPolicy/Resource',
      ],
    ]);
  });

  it('keeps APIG4 when the config has no token: the API is then open, and the check says so', () => {
    const findings = nagFindings(open);
    expect(findings.map((f) => [f.rule, f.resource]).sort()).toEqual([
      ['AwsSolutions-APIG4', 'Svc/IngestApi/HttpApi/GET--api--v1--test-connection/Resource'],
      ['AwsSolutions-APIG4', 'Svc/IngestApi/HttpApi/POST--api--v1--audit-event/Resource'],
    ]);
    expect(formatFindings(findings)).toMatch(
      /^cdk-nag AwsSolutions: 2 finding\(s\) of 1 rule\(s\)\nAwsSolutions-APIG4 \(error\) ×2: The API does not implement authorization\.\n {2}Svc\/IngestApi/,
    );
  });
});

/** cdk-nag's own rules for the three points: access logging and throttling of the stage, a concurrency limit. */
class AuditApiLimitsPack extends NagPack {
  readonly name = 'AuditApiLimits';
  constructor() {
    super();
    this.packName = 'AuditApiLimits';
  }
  protected checkResource(node: CfnResource): void {
    for (const rule of [
      rules.apigw.APIGWAccessLogging,
      rules.apigw.APIGWDefaultThrottling,
      rules.lambda.LambdaConcurrency,
    ])
      this.applyRule({ info: rule.name, explanation: '', level: NagMessageLevel.ERROR, rule, node });
  }
}

describe('the audit API on AWS: access log, stage throttling, reserved concurrency', () => {
  const limitFindings = (stack: SvcStack) =>
    new AuditApiLimitsPack()
      .validateScope(stack)
      .violations.flatMap((v) => v.violatingResources.map((r) => `${v.ruleName} ${r.constructPath}`))
      // The writers' concurrency follows Svc.auditEvents.queue.rateLimit, off here (stack.test.ts has it).
      .filter((finding) => !finding.includes('/EventPipeline/'))
      .sort();

  it('passes cdk-nag’s access-logging, throttling and concurrency rules, which fail with the switches off', () => {
    expect(limitFindings(full)).toEqual([]);
    expect(limitFindings(open)).toEqual([
      'AuditApiLimits-APIGWDefaultThrottling Svc/IngestApi/HttpApi/DefaultStage/Resource',
      'AuditApiLimits-LambdaConcurrency Svc/IngestApi/AuditFunction/Resource',
    ]);
  });

  it('writes the access log as JSON, with the fields an operator needs and nothing that can hold a credential', () => {
    const [, stage] = single(fullTemplate, 'AWS::ApiGatewayV2::Stage');
    const settings = stage['AccessLogSettings'];
    expect(isRecord(settings) ? settings['DestinationArn'] : undefined).toEqual({
      'Fn::GetAtt': [expect.stringMatching(/^IngestApiAccessLogs/), 'Arn'],
    });
    const format: unknown = JSON.parse(String(isRecord(settings) ? settings['Format'] : ''));
    expect(format).toEqual(ACCESS_LOG_FIELDS);
    expect(Object.keys(ACCESS_LOG_FIELDS)).toEqual(
      expect.arrayContaining(['requestId', 'ip', 'requestTime', 'httpMethod', 'path', 'routeKey', 'status']),
    );
    expect(Object.keys(ACCESS_LOG_FIELDS)).toEqual(
      expect.arrayContaining(['responseLatency', 'integrationError', 'userAgent']),
    );
    // No header but the user agent, no query string, no body, no authorizer output.
    for (const variable of Object.values(ACCESS_LOG_FIELDS))
      expect(variable).not.toMatch(/header|authoriz|querystring|request\.|body|caller|user$|cognito/i);
    const logGroups = Object.entries(fullTemplate.findResources('AWS::Logs::LogGroup')).filter(([id]) =>
      id.startsWith('IngestApiAccessLogs'),
    );
    expect(
      logGroups.map(([, r]) => (isRecord(r) && isRecord(r['Properties']) ? r['Properties']['RetentionInDays'] : 0)),
    ).toEqual([30]);
  });

  it('throttles the stage and reserves the concurrency derived from rateLimit.maxPerMinute by default', () => {
    // FULL keeps maxPerMinute's default, 300: 300 requests/s, a burst of 600, ⌈300 / 10⌉ = 30 executions.
    const [, stage] = single(fullTemplate, 'AWS::ApiGatewayV2::Stage');
    expect(stage['DefaultRouteSettings']).toEqual({ ThrottlingRateLimit: 300, ThrottlingBurstLimit: 600 });
    expect(stage['StageName']).toBe('$default');
    const audit = Object.entries(fullTemplate.findResources('AWS::Lambda::Function')).filter(([id]) =>
      id.startsWith('IngestApiAuditFunction'),
    );
    expect(
      audit.map(([, r]) =>
        isRecord(r) && isRecord(r['Properties']) ? r['Properties']['ReservedConcurrentExecutions'] : undefined,
      ),
    ).toEqual([30]);
    // Switched off: neither is set.
    const [, openStage] = single(openTemplate, 'AWS::ApiGatewayV2::Stage');
    expect(openStage['DefaultRouteSettings']).toBeUndefined();
    expect(openStage['AccessLogSettings']).toBeDefined();
    const [, openFunction] = single(openTemplate, 'AWS::Lambda::Function');
    expect(openFunction['ReservedConcurrentExecutions']).toBeUndefined();
  });

  it('derives each limit the config leaves at 0, takes the ones it gives, and notes a reservation a default account cannot make', () => {
    const limits = (aws: string, maxPerMinute = 300) =>
      auditApiLimits(
        parseConfigText(
          `Svc:\n  auditEvents:\n    enable: true\n    rateLimit: {maxPerMinute: ${maxPerMinute}}\n    aws:\n${aws}`,
          'limits.yaml',
          {},
        ).config,
      );
    expect(limits('      throttle: {enable: true}\n')).toEqual({
      throttle: { rateLimit: 300, burstLimit: 600 },
      reservedConcurrency: 30,
      notes: [],
    });
    // Small: at least 10 executions. Large: the account's default quotas bound the derived stage limits.
    expect(limits('      throttle: {enable: true}\n', 30)).toMatchObject({
      throttle: { rateLimit: 30, burstLimit: 60 },
      reservedConcurrency: 10,
    });
    const large = limits('      throttle: {enable: true}\n', 600_000);
    expect(large).toMatchObject({ throttle: { rateLimit: 10_000, burstLimit: 5_000 }, reservedConcurrency: 1000 });
    expect(large.notes).toEqual([
      expect.stringMatching(
        /^Svc\.auditEvents\.aws\.reservedConcurrency: 1000 executions is more than an account with the default concurrency quota .* can reserve \(900/,
      ),
    ]);
    // Given: taken as they are; the reservation follows the stage's rate.
    expect(
      limits('      throttle: {requestsPerSecond: 50, burst: 20}\n      reservedConcurrency: {executions: 7}\n'),
    ).toEqual({ throttle: { rateLimit: 50, burstLimit: 20 }, reservedConcurrency: 7, notes: [] });
    expect(limits('      throttle: {requestsPerSecond: 2000}\n')).toMatchObject({ reservedConcurrency: 200 });
    expect(() => limits('      reservedConcurrency: {executions: -1}\n')).toThrow(
      /Svc\.auditEvents\.aws\.reservedConcurrency\.executions/,
    );
  });
});

/** cfn-lint where it is installed (it is a Python tool: no Debian package, not on npm). */
const CFN_LINT = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });

describe.skipIf(CFN_LINT.error !== undefined || CFN_LINT.status !== 0)('cfn-lint', () => {
  it('finds nothing in the FULL template', () => {
    const file = join(dir, 'full.template.json');
    writeFileSync(file, JSON.stringify(fullTemplate.toJSON()));
    // W3005 (a DependsOn already implied by a GetAtt): CDK writes each function's DependsOn on its
    // role and the role's policy itself; redundant, not wrong.
    const lint = spawnSync('cfn-lint', ['--ignore-checks', 'W3005', '--', file], { encoding: 'utf8' });
    expect([lint.status, lint.stdout, lint.stderr]).toEqual([0, '', '']);
  });
});

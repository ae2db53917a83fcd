/** The CDK app the infra suites synthesize: the context of cdk.json, as `cdk synth` would use it. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { isRecord } from '../../shared/util/records.js';
import { REPO_ROOT } from './build.js';

/** cdk.json's `context`. */
export const CDK_CONTEXT: Readonly<Record<string, unknown>> = (() => {
  const file: unknown = JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8'));
  const context = isRecord(file) ? file['context'] : undefined;
  if (!isRecord(context)) throw new Error('cdk.json has no context object');
  return context;
})();

/** An App writing to `outdir`, with cdk.json's context plus `context` (CloudFormation validation off: offline). */
export function cdkApp(outdir: string, context: Record<string, unknown>): App {
  return new App({ outdir, context: { ...CDK_CONTEXT, ...context }, builtinCloudFormationValidation: false });
}

/**
 * The largest stack's config (test/infra/hardening.test.ts, nag.test.ts): audit events to tsdb,
 * parquet on S3 and tablefile, with a token; user events to tsdb, MQTT and monsaas. Secrets are
 * references. Synthesize it with FULL_TOPIC and FULL_VPC.
 */
export const FULL_CONFIG = `Svc:
  logLevel: warn
  tsdbConfig:
    enable: true
    host: influx.internal.example.com
    maxBatchSize: 500
  mqttConfig:
    enable: true
  monsaas: {enable: true, metric: {url: https://metrics.example.com/metric/v1}, event: {url: https://events.example.com/}}
  thirdPartyToolsCredentials:
    monsaas:
      - {accountName: ops, insertApiKey: "\${aws-secret:svc/monsaas-insert-key}", accountId: "111"}
  userEvents:
    enable: true
    sendToTsdb: {enable: true}
    sendToMQTT: {enable: true, postTo: {everythingTopic: {enable: true}}}
    sendToMonSaas: {enable: true, destinationAccount: [ops], scramble: true}
  auditEvents:
    enable: true
    rateLimit: {enable: false}
    apiToken: \${aws-secret:svc/audit-api-token}
    destination:
      enable: true
      type: tsdb, parquet, tablefile
      tsdb:
        maxBatchSize: 2000
        writeFrequency: 5000
      parquet:
        s3:
          enable: true
          bucket: svc-audit-exports
`;

/** The alarm topic of the FULL stack. */
export const FULL_TOPIC = 'arn:aws:sns:eu-west-1:123456789012:svc-alarms';

/** The VPC the FULL stack's tsdb writer is placed in. */
export const FULL_VPC = {
  vpcId: 'vpc-0123456789abcdef0',
  subnetIds: ['subnet-0123456789abcdef0', 'subnet-0fedcba9876543210'],
  securityGroupIds: ['sg-0123456789abcdef0'],
};

/** The context that synthesizes FULL_CONFIG (written to `configFile`) with its topic and VPC. */
export function fullContext(configFile: string): Record<string, unknown> {
  return { config: configFile, alarmTopicArn: FULL_TOPIC, writerVpc: FULL_VPC };
}

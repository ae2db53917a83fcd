/**
 * Readers of the CDK app's context values (cdk.json `context`, or `-c key=value`, which always gives
 * a string). Each validates what it reads and says which key is wrong and why.
 */
import type { App } from 'aws-cdk-lib';

/** A context value the app cannot use. */
export class SynthSettingsError extends Error {
  override readonly name = 'SynthSettingsError';
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

export function optionalString(app: App, key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (!present(value)) return undefined;
  if (typeof value !== 'string')
    throw new SynthSettingsError(`context "${key}" must be a string (got ${JSON.stringify(value)})`);
  return value;
}

/** From cdk.json a number, from `-c key=…` a string. */
function numberOf(value: unknown, pattern: RegExp): number {
  if (typeof value === 'number') return value;
  return typeof value === 'string' && pattern.test(value.trim()) ? Number(value) : Number.NaN;
}

/** An integer from `min` to `max`, or `fallback` when the key is not given. */
export function integerSetting(app: App, key: string, min: number, max: number, fallback: number): number {
  const value: unknown = app.node.tryGetContext(key);
  if (!present(value)) return fallback;
  const n = numberOf(value, /^\d+$/);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new SynthSettingsError(
      `context "${key}" must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`,
    );
  return n;
}

/** A number above `above` and at most `max`, or `fallback` when the key is not given. */
export function numberSetting(app: App, key: string, above: number, max: number, fallback: number): number {
  const value: unknown = app.node.tryGetContext(key);
  if (!present(value)) return fallback;
  const n = numberOf(value, /^\d+(\.\d+)?$/);
  if (!Number.isFinite(n) || n <= above || n > max)
    throw new SynthSettingsError(
      `context "${key}" must be a number above ${above} and at most ${max} (got ${JSON.stringify(value)})`,
    );
  return n;
}

/**
 * An SNS topic ARN (standard topics only: CloudWatch alarms cannot notify a FIFO topic).
 * https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/Notify_Users_Alarm_Changes.html
 */
export function topicArnSetting(app: App, key: string): string | undefined {
  const arn = optionalString(app, key);
  if (arn === undefined) return undefined;
  if (!/^arn:aws(-[a-z]+)*:sns:[a-z]{2}(-[a-z]+)+-\d:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/.test(arn)) {
    throw new SynthSettingsError(
      `context "${key}" must be an SNS topic ARN such as arn:aws:sns:eu-west-1:123456789012:svc-alarms (got ${JSON.stringify(arn)})`,
    );
  }
  if (arn.endsWith('.fifo'))
    throw new SynthSettingsError(
      `context "${key}": ${arn} is a FIFO topic, which CloudWatch alarms cannot notify; give a standard topic`,
    );
  return arn;
}

/** Where the tsdb writer runs: an existing VPC's subnets and security groups. */
export interface WriterVpc {
  vpcId: string;
  subnetIds: string[];
  securityGroupIds: string[];
}

const WRITER_VPC_KEYS = ['vpcId', 'subnetIds', 'securityGroupIds'] as const;
const WRITER_VPC_EXAMPLE = '{"vpcId":"vpc-0abc…","subnetIds":["subnet-0abc…"],"securityGroupIds":["sg-0abc…"]}';
/** EC2 ids: the prefix, then 8 (older resources) or 17 hex digits. */
const EC2_ID = (prefix: string) => new RegExp(`^${prefix}-([0-9a-f]{8}|[0-9a-f]{17})$`);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `writerVpc`: an object in cdk.json, or its JSON with `-c writerVpc='{…}'`. Subnets should be
 * private ones in at least two availability zones; the VPC needs a route to S3 (docs/deployment.md).
 */
export function writerVpcSetting(app: App, key: string): WriterVpc | undefined {
  let value: unknown = app.node.tryGetContext(key);
  if (!present(value)) return undefined;
  const fail = (problem: string) =>
    new SynthSettingsError(`context "${key}" ${problem}; expected ${WRITER_VPC_EXAMPLE}`);
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      throw fail('is not JSON');
    }
  }
  if (!isRecord(value)) throw fail(`must be an object (got ${JSON.stringify(value)})`);
  const unknown = Object.keys(value).filter((k) => !(WRITER_VPC_KEYS as readonly string[]).includes(k));
  if (unknown.length > 0)
    throw fail(`has unknown key${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => JSON.stringify(k)).join(', ')}`);
  const vpcId = value['vpcId'];
  if (typeof vpcId !== 'string' || !EC2_ID('vpc').test(vpcId))
    throw fail(`.vpcId must be a VPC id such as vpc-0123456789abcdef0 (got ${JSON.stringify(vpcId)})`);
  const ids = (field: 'subnetIds' | 'securityGroupIds', prefix: string, example: string): string[] => {
    const list = value[field];
    if (!Array.isArray(list) || list.length === 0)
      throw fail(`.${field} must be a non-empty list (got ${JSON.stringify(list)})`);
    return list.map((id: unknown, i) => {
      if (typeof id !== 'string' || !EC2_ID(prefix).test(id))
        throw fail(`.${field}[${i}] must be an id such as ${example} (got ${JSON.stringify(id)})`);
      return id;
    });
  };
  const subnetIds = ids('subnetIds', 'subnet', 'subnet-0123456789abcdef0');
  const securityGroupIds = ids('securityGroupIds', 'sg', 'sg-0123456789abcdef0');
  for (const [field, list] of Object.entries({ subnetIds, securityGroupIds })) {
    const repeated = list.find((id, i) => list.indexOf(id) !== i);
    if (repeated) throw fail(`.${field} lists ${repeated} twice`);
  }
  // Lambda allows at most 16 subnets and 5 security groups per function.
  if (subnetIds.length > 16)
    throw fail(`.subnetIds lists ${subnetIds.length} subnets; a Lambda function takes at most 16`);
  if (securityGroupIds.length > 5)
    throw fail(`.securityGroupIds lists ${securityGroupIds.length} security groups; a Lambda function takes at most 5`);
  return { vpcId, subnetIds, securityGroupIds };
}

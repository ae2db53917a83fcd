/**
 * The edge agent's identity and its config: an IAM user that may send to the queues of the platform
 * destinations and put claim checks, and nothing else, and the stack output `EdgeConfig` holding the
 * `Svc.cloud` lines to paste into the edge agent's config.
 *
 * A user, not a role (Svc choice): the edge agent runs on premises, where there is no AWS identity to
 * assume a role with. The operator creates its access key (`aws iam create-access-key`), so no secret
 * is ever in the template or the stack's outputs. docs/deployment.md ("The edge identity").
 */
import { Aws, CfnOutput } from 'aws-cdk-lib';
import { PolicyStatement, User } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CLAIM_CHECK_PREFIX } from '../../functions/contract.js';
import type { ForwardableDestination } from '../../shared/config/placement.js';
import type { SvcConfig } from '../../shared/config/schema.js';
import { acknowledgeClaimCheckWildcard } from './storage.js';

/** Stack output keys (fixed logical ids, so scripts can query them by name). */
export const EDGE_CONFIG_OUTPUT = 'EdgeConfig';
export const EDGE_USER_OUTPUT = 'EdgeUserName';

/** The two permissions of the edge: SendMessageBatch is authorised by sqs:SendMessage. */
export const EDGE_QUEUE_ACTIONS = ['sqs:SendMessage'] as const;
export const EDGE_CLAIM_CHECK_ACTIONS = ['s3:PutObject'] as const;

export interface EdgeAccessProps {
  /** The queue of each platform destination the stack deploys (the edge forwards to them). */
  queues: Partial<Record<ForwardableDestination, IQueue>>;
  /** The claim-check bucket. */
  bucket: IBucket;
}

/** The part of `Svc.cloud` the output fills in: the key names are the config schema's. */
type EdgeCloudSettings = Pick<SvcConfig['cloud'], 'enable' | 'region'> & {
  queues: Partial<SvcConfig['cloud']['queues']>;
  claimCheck: SvcConfig['cloud']['claimCheck'];
};

export class EdgeAccess extends Construct {
  readonly user: User;
  /** The YAML of the EdgeConfig output (with CloudFormation tokens until deployed). */
  readonly edgeConfig: string;

  constructor(scope: Construct, id: string, props: EdgeAccessProps) {
    super(scope, id);
    const queues = Object.entries(props.queues).filter(
      (entry): entry is [ForwardableDestination, IQueue] => entry[1] !== undefined,
    );
    if (queues.length === 0) throw new Error('EdgeAccess: no platform queue to give the edge');

    this.user = new User(this, 'User');
    this.user.addToPrincipalPolicy(
      new PolicyStatement({ actions: [...EDGE_QUEUE_ACTIONS], resources: queues.map(([, queue]) => queue.queueArn) }),
    );
    this.user.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...EDGE_CLAIM_CHECK_ACTIONS],
        resources: [props.bucket.arnForObjects(`${CLAIM_CHECK_PREFIX}*`)],
      }),
    );
    acknowledgeClaimCheckWildcard(this.user, props.bucket);

    const settings: EdgeCloudSettings = {
      enable: true,
      region: Aws.REGION,
      queues: Object.fromEntries(queues.map(([name, queue]) => [name, queue.queueUrl])),
      claimCheck: { bucket: props.bucket.bucketName, prefix: CLAIM_CHECK_PREFIX },
    };
    this.edgeConfig = ['Svc:', ...yamlLines({ cloud: settings }, 1)].join('\n');

    const config = new CfnOutput(this, 'Config', {
      description:
        'Svc.cloud for the edge agent: paste the cloud block under Svc in its config file (docs/deployment.md)',
      value: this.edgeConfig,
    });
    config.overrideLogicalId(EDGE_CONFIG_OUTPUT);
    const user = new CfnOutput(this, 'UserName', {
      description:
        'IAM user of the edge agent: create its access key with aws iam create-access-key --user-name <this>',
      value: this.user.userName,
    });
    user.overrideLogicalId(EDGE_USER_OUTPUT);
  }
}

type YamlValue = string | boolean | { [key: string]: YamlValue | undefined };

/**
 * Block YAML of nested mappings, two spaces per level. Strings are written JSON-quoted, which YAML
 * reads as double-quoted scalars: a URL or a CloudFormation token stays one value whatever it holds.
 */
function yamlLines(value: { [key: string]: YamlValue | undefined }, depth: number): string[] {
  const indent = '  '.repeat(depth);
  return Object.entries(value).flatMap(([key, child]) => {
    if (child === undefined) return [];
    if (typeof child === 'object') return [`${indent}${key}:`, ...yamlLines(child, depth + 1)];
    return [`${indent}${key}: ${typeof child === 'string' ? JSON.stringify(child) : String(child)}`];
  });
}

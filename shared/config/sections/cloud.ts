/**
 * `cloud`: the edge agent forwarding to a cloud deployment (Svc choice: the reference has no such
 * section). `cdk deploy` prints these keys filled in (the stack output `EdgeConfig`); docs/deployment.md.
 */
import { Feature, HTTP_URL, Required, Section, Str } from '../builders.js';

export const cloud = Feature(
  'Forwarding from the edge agent (`svc edge`) to the queues of a cloud deployment; the destinations named under `queues` then run in the cloud, the others on the edge (docs/deployment.md)',
  false,
  'Forward events to the cloud queues named below',
  {
    region: Required('AWS region of the deployment, e.g. eu-west-1', {
      pattern: '^(|[a-z]{2}(-[a-z0-9]+)+-\\d+)$',
      'x-expect': 'an AWS region such as eu-west-1',
    }),
    endpoint: Str(
      '',
      "SQS and S3 endpoint for an emulator or a VPC endpoint; empty: the region's public endpoints",
      HTTP_URL,
    ),
    profile: Str(
      '',
      "Profile of the AWS shared config and credentials files to use; empty: the AWS SDK's default chain (AWS_ACCESS_KEY_ID …, AWS_PROFILE, an instance role)",
    ),
    queues: Section(
      'SQS queue URL of each cloud destination (stack outputs); an empty URL keeps that destination on the edge',
      {
        tsdb: Str(
          '',
          "Queue of the tsdb writer: user and log events, the edge's points, health and session samples",
          HTTP_URL,
        ),
        monsaas: Str('', 'Queue of the monitoring-SaaS writer', HTTP_URL),
      },
    ),
    claimCheck: Section('Where a message larger than an SQS message (1 MiB) goes; the queue carries its reference', {
      bucket: Str(
        '',
        'S3 bucket (stack output); empty: a message over 1 MiB cannot be forwarded and goes to the dead-letter folder of its queue',
      ),
      prefix: Str('claim-checks/', 'Key prefix (the stack expires it by lifecycle rule)', { minLength: 1 }),
    }),
  },
);

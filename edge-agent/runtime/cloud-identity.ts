/**
 * Where and as whom the edge reaches its cloud deployment (`Svc.cloud`): the region, and the
 * credentials of `Svc.cloud.profile` when set (else the AWS SDK's default chain). One place for the
 * forwarder's SQS and S3 clients and for fetching the deployment's secrets at start.
 */
import { fromIni } from '@aws-sdk/credential-providers';
import type { SvcConfig } from '../../shared/config/schema.js';

export interface CloudIdentity {
  region: string;
  credentials?: ReturnType<typeof fromIni>;
}

export function cloudIdentity(cloud: SvcConfig['cloud']): CloudIdentity {
  return { region: cloud.region, ...(cloud.profile ? { credentials: fromIni({ profile: cloud.profile }) } : {}) };
}

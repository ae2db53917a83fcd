/**
 * Where and as whom the edge reaches its cloud deployment (`Svc.cloud`): the region, and the
 * credentials of `Svc.cloud.profile` when set, else the AWS SDK's default chain (environment,
 * AWS_PROFILE, SSO, an instance or container role): shared/aws/credentials.ts `sdkCredentials`,
 * imported at the first request and cached until 5 minutes before they expire. One place for the
 * forwarder's SQS client (the lean one, shared/aws/), its S3 client, and fetching the deployment's
 * secrets at start.
 */
import { type CredentialProvider, sdkCredentials } from '../../shared/aws/credentials.js';
import type { SvcConfig } from '../../shared/config/schema.js';

export interface CloudIdentity {
  region: string;
  /** Also an AWS SDK credential provider (the SDK's S3 client takes it as it is). */
  credentials: CredentialProvider;
}

/** The credentials of `Svc.cloud` (see above). */
export function cloudCredentials(cloud: Pick<SvcConfig['cloud'], 'profile'>): CredentialProvider {
  return sdkCredentials(cloud.profile);
}

export function cloudIdentity(cloud: SvcConfig['cloud']): CloudIdentity {
  return { region: cloud.region, credentials: cloudCredentials(cloud) };
}

/**
 * Where and as whom the edge reaches its cloud deployment (`Svc.cloud`): the region, and the
 * credentials of `Svc.cloud.profile` when set, else the AWS SDK's default chain (environment,
 * AWS_PROFILE, SSO, an instance or container role). One place for the forwarder's SQS client (the
 * lean one, shared/aws/) and S3 client and for fetching the deployment's secrets at start.
 *
 * The credentials come from the SDK's own providers (@aws-sdk/credential-providers: fromIni with the
 * profile, fromNodeProviderChain without), imported at the first request rather than at start
 * (they cost start-up time), and are cached until 5 minutes before they expire (cachedCredentials):
 * temporary credentials (SSO, an assumed role, an instance role) are refreshed while the agent runs.
 */
import { type CredentialProvider, cachedCredentials } from '../../shared/aws/credentials.js';
import type { SvcConfig } from '../../shared/config/schema.js';

export interface CloudIdentity {
  region: string;
  /** Also an AWS SDK credential provider (the SDK's S3 and secret clients take it as it is). */
  credentials: CredentialProvider;
}

/** The credentials of `Svc.cloud` (see above). */
export function cloudCredentials(cloud: Pick<SvcConfig['cloud'], 'profile'>): CredentialProvider {
  let source: Promise<CredentialProvider> | undefined;
  return cachedCredentials(async () => {
    source ??= import('@aws-sdk/credential-providers').then(({ fromIni, fromNodeProviderChain }) =>
      cloud.profile ? fromIni({ profile: cloud.profile }) : fromNodeProviderChain(),
    );
    const provider = await source;
    return provider();
  });
}

export function cloudIdentity(cloud: SvcConfig['cloud']): CloudIdentity {
  return { region: cloud.region, credentials: cloudCredentials(cloud) };
}

/**
 * Credentials for the lean AWS client (json-client.ts): a provider is a function the client calls
 * before each request, so temporary credentials can be refreshed between requests. Its shape is
 * also the AWS SDK's AwsCredentialIdentityProvider, so one provider serves the SDK's S3 and secret
 * clients as well (edge-agent/runtime/cloud-identity.ts).
 */
import type { AwsCredentials } from './sigv4.js';

export type { AwsCredentials };

export type CredentialProvider = () => Promise<AwsCredentials>;

/** The variables a Lambda function's execution role credentials are in. */
export const CREDENTIAL_ENV = {
  accessKeyId: 'AWS_ACCESS_KEY_ID',
  secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  sessionToken: 'AWS_SESSION_TOKEN',
} as const;

/**
 * Credentials from the environment, read at each call (Lambda sets them for the execution role
 * before the first invocation; reading late also keeps a module-scope client from failing at
 * import). Missing ones reject naming the variables.
 */
export function environmentCredentials(env: NodeJS.ProcessEnv = process.env): CredentialProvider {
  return () => {
    const accessKeyId = env[CREDENTIAL_ENV.accessKeyId];
    const secretAccessKey = env[CREDENTIAL_ENV.secretAccessKey];
    if (!accessKeyId || !secretAccessKey) {
      const missing = [!accessKeyId && CREDENTIAL_ENV.accessKeyId, !secretAccessKey && CREDENTIAL_ENV.secretAccessKey]
        .filter(Boolean)
        .join(' and ');
      return Promise.reject(
        new Error(
          `no AWS credentials: ${missing} not set (Lambda sets ${CREDENTIAL_ENV.accessKeyId}, ${CREDENTIAL_ENV.secretAccessKey} and ${CREDENTIAL_ENV.sessionToken} for the function's role)`,
        ),
      );
    }
    const sessionToken = env[CREDENTIAL_ENV.sessionToken];
    return Promise.resolve({ accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) });
  };
}

/** How long before their expiration cached credentials are fetched again (the SDK's own margin is 5 minutes). */
export const REFRESH_MARGIN_MS = 5 * 60_000;

/**
 * `source` called once and its credentials kept until REFRESH_MARGIN_MS before their expiration
 * (for ever when they have none); callers meanwhile share one pending fetch. A failed fetch is not
 * kept: the next call tries again.
 */
export function cachedCredentials(source: CredentialProvider, now: () => number = Date.now): CredentialProvider {
  let current: AwsCredentials | undefined;
  let pending: Promise<AwsCredentials> | undefined;
  const fresh = (c: AwsCredentials) => c.expiration === undefined || c.expiration.getTime() - REFRESH_MARGIN_MS > now();
  return () => {
    if (current !== undefined && fresh(current)) return Promise.resolve(current);
    pending ??= source().then(
      (c) => {
        current = c;
        pending = undefined;
        return c;
      },
      (err: unknown) => {
        pending = undefined;
        throw err;
      },
    );
    return pending;
  };
}

/**
 * The AWS SDK's credentials, from its own providers (@aws-sdk/credential-providers): the named
 * profile's (`fromIni`), or without one the SDK's default chain (`fromNodeProviderChain`: the
 * environment, the shared files and AWS_PROFILE, SSO, a container or instance role). The package is
 * imported at the first call, not at start, and the credentials are cached (`cachedCredentials`), so
 * temporary ones (SSO, an assumed role, an instance role) are refreshed while Svc runs.
 */
export function sdkCredentials(profile = ''): CredentialProvider {
  let source: Promise<CredentialProvider> | undefined;
  return cachedCredentials(async () => {
    source ??= import('@aws-sdk/credential-providers').then(({ fromIni, fromNodeProviderChain }) =>
      profile ? fromIni({ profile }) : fromNodeProviderChain(),
    );
    const provider = await source;
    return provider();
  });
}

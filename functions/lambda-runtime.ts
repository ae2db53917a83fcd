/**
 * What every Lambda entry builds once per container: the bundled config (the resolved config
 * document synth made: shared/config/resolved.ts) with its references resolved, the logger (JSON lines on stdout, secrets scrubbed; the core logger, without pino-pretty
 * and log files) and the error tracker.
 */
import { type CredentialProvider, environmentCredentials } from '../shared/aws/credentials.js';
import { loadResolvedConfig } from '../shared/config/resolved-load.js';
import type { SvcConfig } from '../shared/config/schema.js';
import { secretReader } from '../shared/config/secret-refs.js';
import { secretValues } from '../shared/config/secrets.js';
import { ErrorTracker } from '../shared/errors/tracker.js';
import { createJsonLogger, type Logger } from '../shared/logging/pino-core.js';
import { LazyClaimCheckStore, S3ClaimCheckStore } from '../shared/queue/claim-check.js';
import { BUNDLED_CONFIG_FILE, CLAIM_CHECK_PREFIX, LAMBDA_ENV } from './lambda-env.js';

export interface LambdaRuntime {
  config: SvcConfig;
  logger: Logger;
  errors: ErrorTracker;
}

/**
 * Runs once per cold start (the entries call it at module scope). `reader` is the function: `audit`
 * or the destination a writer serves (a SecretReader, or one that reads no secret such as parquet). It fetches, in parallel, the secret references the stack
 * grants this function (SECRET_READERS), and only those; the values are cached for the container's
 * life and scrubbed from every log line. `${env:NAME}` values come from `env`. A reference that
 * cannot be fetched, a missing variable or a value its key does not take fails the cold start with
 * a ConfigError naming the key and the reference.
 */
export async function lambdaRuntime(reader: string, env: NodeJS.ProcessEnv = process.env): Promise<LambdaRuntime> {
  const { config } = await loadResolvedConfig(env[LAMBDA_ENV.config] ?? BUNDLED_CONFIG_FILE, {
    env,
    wanted: (path) => secretReader(path) === reader,
  });
  const logger = createJsonLogger({ level: config.logLevel, secrets: secretValues(config) });
  return { config, logger, errors: new ErrorTracker({ enabled: config.errorTracking.enable, log: logger }) };
}

/**
 * The claim-check store in `bucket`, its S3 client imported and built at the first claim check
 * (a static import of the runtime's SDK would load it at every cold start).
 */
export function lazyClaimChecks(bucket: string): LazyClaimCheckStore {
  return new LazyClaimCheckStore(async () => {
    const { S3Client } = await import('@aws-sdk/client-s3');
    return new S3ClaimCheckStore({ client: new S3Client({}), bucket, prefix: CLAIM_CHECK_PREFIX });
  });
}

/**
 * The region and credentials of the lean AWS clients (shared/aws/) in a function: AWS_REGION and the
 * execution role's AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, which Lambda sets
 * (the credentials are read at each request; missing ones fail the request naming the variables).
 */
export function lambdaAws(env: NodeJS.ProcessEnv = process.env): { region: string; credentials: CredentialProvider } {
  const region = env['AWS_REGION'];
  if (!region)
    throw new Error('environment variable AWS_REGION is not set (Lambda sets it; set it to run a handler elsewhere)');
  return { region, credentials: environmentCredentials(env) };
}

/**
 * What the commands that load a config and run the service share: loading with every problem
 * reported at once, and running a mode until a signal stops it, with start-up errors printed as one
 * line each (no stack).
 */
import { ConfigError, formatIssues, problemCount } from '../../shared/config/errors.js';
import { chooseConfigFile, type LoadedConfig, loadConfigFile } from '../../shared/config/load.js';
import { type SecretRefAt, secretReader } from '../../shared/config/secret-refs.js';
import { displayPath } from '../../shared/config/walk.js';
import { EXIT_ERROR } from '../../shared/runtime/exit-codes.js';
import type { SecretClientConfig } from '../../shared/secrets/fetch.js';
import { type BootOptions, boot, type Mode, StartupError } from '../runtime/boot.js';
import type { CliIo } from './io.js';

/** Prints every problem of a config error, as one report. */
export function printConfigError(file: string, err: ConfigError, io: CliIo): void {
  io.err(`svc: the configuration in ${file} cannot be used (${problemCount(err.issues.length)}):\n`);
  for (const line of formatIssues(err.issues)) io.err(`  ${line}\n`);
}

/** Loads the config chosen by --config / SVC_CONFIG / default; on problems prints them all and returns undefined. */
export function loadForCli(option: string | undefined, io: CliIo): LoadedConfig | undefined {
  const { file, source } = chooseConfigFile(option, io.env);
  try {
    return loadConfigFile(file, source, io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    printConfigError(file, err, io);
    return undefined;
  }
}

/**
 * The config with its secret references fetched (`${aws-secret:…}`, `${aws-ssm:…}`), by the same code
 * as the Lambda functions, with this machine's AWS credentials and region (AWS_PROFILE, AWS_REGION,
 * …) or, while it forwards to a deployment, those of `Svc.cloud`. Every reference of a section in use is fetched, except the audit token's under `svc edge`,
 * which runs no audit API. One that cannot be fetched refuses the start, naming the key.
 */
async function withSecrets(loaded: LoadedConfig, mode: Mode, io: CliIo): Promise<LoadedConfig> {
  const wanted = (at: SecretRefAt) => mode !== 'edge' || secretReader(at.path) !== 'audit';
  const refs = loaded.secretRefs.filter(wanted);
  if (refs.length === 0) return loaded;
  io.err(
    `svc: fetching ${refs.length} secret reference${refs.length === 1 ? '' : 's'} from AWS (${refs.map((r) => displayPath(r.path)).join(', ')})\n`,
  );
  // Loaded only when there is something to fetch: the AWS clients cost start-up time.
  const { resolveConfigSecrets } = await import('../../shared/secrets/fetch.js');
  return resolveConfigSecrets(loaded, { wanted, env: io.env, ...(await cloudClientConfig(loaded.config.cloud)) });
}

/**
 * An edge that forwards to a deployment (`Svc.cloud.enable`) reads the deployment's secrets in its
 * region and with its credentials (`Svc.cloud.region`, `.profile`), as it sends to its queues; without
 * `Svc.cloud`, the AWS SDK's defaults (AWS_REGION, AWS_PROFILE, …) apply. `Svc.cloud.endpoint` is the
 * SQS and S3 endpoint, not the secret stores'.
 */
async function cloudClientConfig(
  cloud: LoadedConfig['config']['cloud'],
): Promise<{ clientConfig?: SecretClientConfig }> {
  if (!cloud.enable) return {};
  // Imported only here: the credential providers cost start-up time.
  return { clientConfig: (await import('../runtime/cloud-identity.js')).cloudIdentity(cloud) };
}

/** Runs `mode` until a signal stops it; resolves to the exit code (1 after a config or start-up error). */
export async function runService(
  loaded: LoadedConfig,
  mode: Mode,
  io: CliIo,
  options: BootOptions = {},
): Promise<number> {
  // boot() owns the process from here: it exits on a signal or a startup failure.
  try {
    return await boot(await withSecrets(loaded, mode, io), mode, options);
  } catch (err) {
    if (err instanceof ConfigError) printConfigError(loaded.file, err, io);
    else if (err instanceof StartupError) io.err(`svc: cannot start: ${err.message}\n`);
    else throw err;
    return EXIT_ERROR;
  }
}

/**
 * The CDK app (`cdk.json` runs the compiled `dist/infra/app.js`). It validates the Svc config at
 * synth time, so a deployment never ships a config its functions would reject at cold start, then
 * creates SvcStack.
 *
 * Context: `config` (path of the Svc YAML config, default config/svc.yaml), `maxReceiveCount`
 * (default 5), `auditApiTokenSecret` (optional Secrets Manager secret), `stackName` (default Svc).
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, App } from 'aws-cdk-lib';
import { LAMBDA_ENV } from '../functions/contract.js';
import { ConfigError } from '../shared/config/errors.js';
import { loadConfigFile, type LoadedConfig } from '../shared/config/load.js';
import { DEFAULT_MAX_RECEIVE_COUNT } from './constructs/event-pipeline.js';
import { AUDIT_API_TOKEN_ENV } from './constructs/ingest-api.js';
import { planDestinations } from './destinations.js';
import { SvcStack } from './stack.js';

export const DEFAULT_CONFIG_FILE = 'config/svc.yaml';
export const DEFAULT_STACK_NAME = 'Svc';

/**
 * Variables the Lambda runtime defines, which a config may reference as `${env:NAME}`.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
const LAMBDA_RUNTIME_ENV = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_EXECUTION_ENV',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  'AWS_LAMBDA_LOG_STREAM_NAME',
  'LAMBDA_TASK_ROOT',
  'LAMBDA_RUNTIME_DIR',
  'TZ',
] as const;

/** Stands in at synth time for a variable that only the deployed function has. */
export const SYNTH_PLACEHOLDER = 'svc-synth-placeholder';

/** A context value the app cannot use. */
export class SynthSettingsError extends Error {
  override readonly name = 'SynthSettingsError';
}

export interface SvcAppSettings {
  /** As given (for messages); resolved from the working directory. */
  configFile: string;
  maxReceiveCount: number;
  auditApiTokenSecret: string | undefined;
  stackName: string;
}

/** The app's settings from CDK context (cdk.json, `-c key=value`). */
export function readSettings(app: App): SvcAppSettings {
  return {
    configFile: optionalString(app, 'config') ?? DEFAULT_CONFIG_FILE,
    maxReceiveCount: maxReceiveCount(app.node.tryGetContext('maxReceiveCount')),
    auditApiTokenSecret: optionalString(app, 'auditApiTokenSecret'),
    stackName: optionalString(app, 'stackName') ?? DEFAULT_STACK_NAME,
  };
}

/**
 * Validates the config against the environment the deployed functions will have: the variables the
 * stack sets (placeholders here) and those of the Lambda runtime, not the deploying machine's. A
 * `${env:NAME}` the functions would not have fails synth, as it would fail their cold start.
 */
export function validateConfigForSynth(settings: SvcAppSettings): LoadedConfig {
  const names: string[] = [...Object.values(LAMBDA_ENV), ...LAMBDA_RUNTIME_ENV];
  if (settings.auditApiTokenSecret) names.push(AUDIT_API_TOKEN_ENV);
  const env = Object.fromEntries(names.map((name) => [name, SYNTH_PLACEHOLDER]));
  return loadConfigFile(settings.configFile, 'option', env);
}

/** Reads the context, validates the config (throws ConfigError) and adds SvcStack to `app`. */
export function buildSvcApp(app: App): SvcStack {
  const settings = readSettings(app);
  const loaded = validateConfigForSynth(settings);
  const destinations = planDestinations(loaded.config);
  const stack = new SvcStack(app, settings.stackName, {
    description: loaded.config.auditEvents.enable ? 'Svc: audit event API, event queues, storage' : 'Svc: no audit API (Svc.auditEvents.enable is false)',
    configFile: resolve(settings.configFile),
    destinations: destinations.deployed,
    maxReceiveCount: settings.maxReceiveCount,
    auditApiTokenSecret: settings.auditApiTokenSecret,
    idempotency: loaded.config.auditEvents.idempotency.enable,
    auditApi: loaded.config.auditEvents.enable,
    parquetBucket: loaded.config.auditEvents.destination.parquet.s3.enable ? loaded.config.auditEvents.destination.parquet.s3.bucket : undefined,
  });
  // One id per kind of warning, so acknowledging one (Annotations.acknowledgeWarning) keeps the others.
  const warn = (id: string, message: string) => Annotations.of(stack).addWarningV2(`svc:${id}`, message);
  for (const warning of loaded.warnings) warn('config-warning', `${settings.configFile}: ${warning}`);
  for (const note of destinations.notes) warn('destination', note);
  const audit = loaded.config.auditEvents;
  if (!audit.enable) {
    // Not a warning: nothing is wrong, but an empty stack deserves a word at synth.
    Annotations.of(stack).addInfo('no audit API: Svc.auditEvents.enable is false, so the stack deploys nothing');
    return stack;
  }
  if (destinations.deployed.length === 0) warn('no-destination', 'no audit destination is deployed (Svc.auditEvents.destination): accepted audit events are not stored');
  if (audit.apiToken === '') warn('no-api-token', 'Svc.auditEvents.apiToken is empty: the audit API accepts requests without a token');
  if (settings.auditApiTokenSecret && audit.apiToken !== SYNTH_PLACEHOLDER) {
    warn('unused-token-secret', `auditApiTokenSecret is given but Svc.auditEvents.apiToken is not \${env:${AUDIT_API_TOKEN_ENV}}: the secret is not used`);
  }
  return stack;
}

function optionalString(app: App, key: string): string | undefined {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new SynthSettingsError(`context "${key}" must be a string (got ${JSON.stringify(value)})`);
  return value;
}

/** From cdk.json a number, from `-c maxReceiveCount=3` a string. SQS allows 1 to 1000. */
function maxReceiveCount(value: unknown): number {
  if (value === undefined || value === null || value === '') return DEFAULT_MAX_RECEIVE_COUNT;
  const n = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > 1000) {
    throw new SynthSettingsError(`context "maxReceiveCount" must be an integer from 1 to 1000 (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** Runs the app; an unusable config or context ends it with the problems listed and exit code 1. */
export function main(): void {
  try {
    const app = new App();
    buildSvcApp(app);
    app.synth();
  } catch (err) {
    if (!(err instanceof ConfigError) && !(err instanceof SynthSettingsError)) throw err;
    process.stderr.write(`${err.message}\n`);
    if (err instanceof ConfigError && err.issues.some((issue) => issue.message.startsWith('environment variable '))) {
      process.stderr.write(
        `  (\${env:NAME} is checked against the deployed functions' environment, not this machine's; ${AUDIT_API_TOKEN_ENV} is set only with -c auditApiTokenSecret=<secret>)\n`,
      );
    }
    process.exitCode = 1;
  }
}

function isMainModule(): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMainModule()) main();

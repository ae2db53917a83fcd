/**
 * The CDK app (`cdk.json` runs the compiled `dist/infra/app.js`). It validates the Svc config at
 * synth time, so a deployment never ships a config its functions would reject at cold start, writes
 * the resolved config document the functions bundle (shared/config/resolved.ts: they do not parse
 * or validate the YAML again), then creates SvcStack.
 *
 * Context: `config` (path of the Svc YAML config, default config/svc.yaml), `maxReceiveCount`
 * (default 5), `stackName` (default Svc), `allowLiteralSecrets` (default false: a secret written in
 * the config fails synth), `secretsKmsKeyArns` (customer managed keys of referenced secrets),
 * `alarmTopicArn`, `alarmOldestMessageSeconds` (default 900), `alarmApi5xxPercent` (default 1),
 * `writerVpc` ({vpcId, subnetIds, securityGroupIds}); docs/deployment.md has the table.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Annotations, App, Duration } from 'aws-cdk-lib';
import { LAMBDA_ENV } from '../functions/contract.js';
import { ConfigError, type ConfigIssue } from '../shared/config/errors.js';
import { type LoadedConfig, loadConfigFile } from '../shared/config/load.js';
import { resolvedConfigDocument, resolvedConfigText } from '../shared/config/resolved.js';
import { SECRET_REF_SYNTAX } from '../shared/config/secret-refs.js';
import { displayPath } from '../shared/config/walk.js';
import { auditApiLimits } from './api-limits.js';
import { DEFAULT_API_5XX_PERCENT, DEFAULT_OLDEST_MESSAGE_ALARM } from './constructs/alarms.js';
import { DEFAULT_MAX_RECEIVE_COUNT } from './constructs/event-pipeline.js';
import { planDestinations } from './destinations.js';
import {
  integerSetting,
  numberSetting,
  optionalString,
  SynthSettingsError,
  topicArnSetting,
  type WriterVpc,
  writerVpcSetting,
} from './settings.js';
import { SvcStack } from './stack.js';

export { SynthSettingsError };

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

export interface SvcAppSettings {
  /** As given (for messages); resolved from the working directory. */
  configFile: string;
  maxReceiveCount: number;
  stackName: string;
  /** Accept secrets written in the config (with a warning) instead of failing synth. */
  allowLiteralSecrets: boolean;
  /** Customer managed KMS keys that encrypt referenced secrets or parameters: the readers may decrypt with them. */
  secretsKmsKeyArns: string[];
  /** SNS topic of every alarm's actions; none: the alarms notify nobody. */
  alarmTopicArn: string | undefined;
  /** Seconds the oldest message of a queue may wait before its alarm fires. */
  alarmOldestMessageSeconds: number;
  /** Percentage of audit API requests answered 5xx (over five minutes) above which it alarms. */
  alarmApi5xxPercent: number;
  /** Where the tsdb writer runs, when it must reach a private tsdb. */
  writerVpc: WriterVpc | undefined;
}

/** A KMS key ARN (an alias cannot be granted kms:Decrypt: IAM matches the key's ARN). */
const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;

/** The app's settings from CDK context (cdk.json, `-c key=value`). */
export function readSettings(app: App): SvcAppSettings {
  return {
    configFile: optionalString(app, 'config') ?? DEFAULT_CONFIG_FILE,
    // SQS allows 1 to 1000 receives.
    maxReceiveCount: integerSetting(app, 'maxReceiveCount', 1, 1000, DEFAULT_MAX_RECEIVE_COUNT),
    stackName: optionalString(app, 'stackName') ?? DEFAULT_STACK_NAME,
    allowLiteralSecrets: flag(app, 'allowLiteralSecrets'),
    secretsKmsKeyArns: kmsKeyArns(app),
    alarmTopicArn: topicArnSetting(app, 'alarmTopicArn'),
    // From one minute (SQS's metric period) to 14 days (the longest a message can live).
    alarmOldestMessageSeconds: integerSetting(
      app,
      'alarmOldestMessageSeconds',
      60,
      14 * 24 * 3600,
      DEFAULT_OLDEST_MESSAGE_ALARM.toSeconds(),
    ),
    alarmApi5xxPercent: numberSetting(app, 'alarmApi5xxPercent', 0, 100, DEFAULT_API_5XX_PERCENT),
    writerVpc: writerVpcSetting(app, 'writerVpc'),
  };
}

/** The context of the token mechanism this app no longer has: say what replaced it, rather than ignore it. */
function refuseRetiredContext(app: App): void {
  if (app.node.tryGetContext('auditApiTokenSecret') === undefined) return;
  throw new SynthSettingsError(
    'context "auditApiTokenSecret" is no longer read: write the reference in the config instead, e.g. Svc.auditEvents.apiToken: ${aws-secret:<secret name>}, and the stack grants the audit function read access to it (docs/deployment.md, Secrets)',
  );
}

/**
 * Secrets written in the config fail synth, one problem per key at its line: the file is bundled
 * into every function's code, which anyone allowed lambda:GetFunction can download. With
 * `allowLiteralSecrets` they are warnings instead.
 */
function literalSecretIssues(loaded: LoadedConfig): ConfigIssue[] {
  return loaded.secretLiterals.map(({ path, line, column }) => ({
    file: loaded.file,
    line,
    column,
    path: displayPath(path),
    message: `a secret written in the config would be bundled into the functions' code: write ${SECRET_REF_SYNTAX} (docs/deployment.md, Secrets), or deploy with -c allowLiteralSecrets=true`,
  }));
}

/**
 * Validates the config against the environment the deployed functions will have: the variables the
 * stack sets (placeholders here) and those of the Lambda runtime, not the deploying machine's. A
 * `${env:NAME}` the functions would not have fails synth, as it would fail their cold start.
 */
export function validateConfigForSynth(settings: Pick<SvcAppSettings, 'configFile'>): LoadedConfig {
  const names: string[] = [...Object.values(LAMBDA_ENV), ...LAMBDA_RUNTIME_ENV];
  const env = Object.fromEntries(names.map((name) => [name, SYNTH_PLACEHOLDER]));
  return loadConfigFile(settings.configFile, 'option', env);
}

/**
 * The text of the resolved config document synth bundles for `configFile` (what buildSvcApp writes),
 * for the bench and the tests that run the built entries: the one way a bundle's config is made.
 */
export function configDocumentForSynth(configFile: string): string {
  return resolvedConfigText(resolvedConfigDocument(validateConfigForSynth({ configFile })));
}

/** File name of the resolved config document in the cloud assembly directory (bundled as BUNDLED_CONFIG_FILE). */
export const CONFIG_DOCUMENT_FILE = 'svc-config.json';

/**
 * Writes the resolved config document of `loaded` (the only producer: resolvedConfigDocument) into
 * the app's output directory, whence every function's bundling copies it; returns its path.
 */
function writeConfigDocument(app: App, loaded: LoadedConfig): string {
  const path = join(app.outdir, CONFIG_DOCUMENT_FILE);
  mkdirSync(app.outdir, { recursive: true });
  writeFileSync(path, resolvedConfigText(resolvedConfigDocument(loaded)));
  return path;
}

/** Reads the context, validates the config (throws ConfigError) and adds SvcStack to `app`. */
export function buildSvcApp(app: App): SvcStack {
  refuseRetiredContext(app);
  const settings = readSettings(app);
  const loaded = validateConfigForSynth(settings);
  const literals = literalSecretIssues(loaded);
  if (literals.length > 0 && !settings.allowLiteralSecrets) throw new ConfigError(literals);
  const configDocument = writeConfigDocument(app, loaded);
  const destinations = planDestinations(loaded.config);
  const audit = loaded.config.auditEvents;
  const parquetS3 = audit.destination.parquet.s3;
  const writers = destinations.deployed.map((d) => d.name);
  const apiLimits = auditApiLimits(loaded.config);
  const stack = new SvcStack(app, settings.stackName, {
    description: audit.enable
      ? 'Svc: audit event API, event queues and writers, storage'
      : `Svc: no audit API (Svc.auditEvents.enable is false); writers: ${writers.join(', ') || 'none'}`,
    configDocument,
    destinations: destinations.deployed,
    maxReceiveCount: settings.maxReceiveCount,
    secretReferences: loaded.secretRefs,
    secretsKmsKeyArns: settings.secretsKmsKeyArns,
    idempotency: audit.idempotency.enable,
    auditApi: audit.enable,
    auditTokenRequired: audit.apiToken !== '',
    auditApiLimits: apiLimits,
    parquetBucket: parquetS3.enable ? { bucket: parquetS3.bucket, prefix: parquetS3.prefix } : undefined,
    writerVpc: settings.writerVpc,
    alarms: {
      topicArn: settings.alarmTopicArn,
      oldestMessageAge: Duration.seconds(settings.alarmOldestMessageSeconds),
      api5xxPercent: settings.alarmApi5xxPercent,
    },
  });
  // One id per kind of warning, so acknowledging one (Annotations.acknowledgeWarning) keeps the others.
  const warn = (id: string, message: string) => Annotations.of(stack).addWarningV2(`svc:${id}`, message);
  for (const warning of loaded.warnings) warn('config-warning', `${settings.configFile}: ${warning}`);
  for (const note of destinations.notes) warn(note.kind, note.message);
  if (settings.writerVpc && !writers.includes('tsdb'))
    warn('unused-writer-vpc', 'writerVpc is given but no tsdb writer is deployed: it places nothing');
  if (stack.alarms && !settings.alarmTopicArn)
    warn(
      'no-alarm-topic',
      'no alarmTopicArn: the alarms show in the CloudWatch console but notify nobody (-c alarmTopicArn=<SNS topic ARN>)',
    );
  // Local mode draws one random key per process; in the cloud every writer instance would draw its
  // own, so one user would scramble to different values at the same time (platform-formats.md §8.4).
  const scrambling = loaded.config.userEvents.sendToMonSaas;
  if (writers.includes('monsaas') && scrambling.scramble && scrambling.scrambleSecret === '') {
    warn(
      'scramble-key',
      'Svc.userEvents.sendToMonSaas.scrambleSecret is empty: every monsaas writer instance draws its own random key, so one user scrambles to different values; set it (as ${aws-secret:…}) to keep pseudonyms stable',
    );
  }
  for (const literal of literals)
    warn(
      'literal-secret',
      `${literal.path}: a secret written in the config is bundled into the functions' code (allowed by allowLiteralSecrets)`,
    );
  if (!audit.enable) {
    // Not a warning: nothing is wrong, but a stack without the API deserves a word at synth.
    Annotations.of(stack).addInfo(
      writers.length === 0
        ? 'no audit API: Svc.auditEvents.enable is false, and no platform data goes to a cloud destination, so the stack deploys nothing'
        : `no audit API: Svc.auditEvents.enable is false; the stack deploys the writers of the platform data the edge forwards (${writers.join(', ')})`,
    );
    return stack;
  }
  if (!destinations.deployed.some((d) => d.audit))
    warn(
      'no-destination',
      'no audit destination is deployed (Svc.auditEvents.destination): accepted audit events are not stored',
    );
  if (audit.apiToken === '')
    warn('no-api-token', 'Svc.auditEvents.apiToken is empty: the audit API accepts requests without a token');
  for (const note of apiLimits.notes) warn('api-limits', note);
  return stack;
}

/** From cdk.json a boolean, from `-c key=true` a string. */
function flag(app: App, key: string): boolean {
  const value: unknown = app.node.tryGetContext(key);
  if (value === undefined || value === null || value === '' || value === false || value === 'false') return false;
  if (value === true || value === 'true') return true;
  throw new SynthSettingsError(`context "${key}" must be true or false (got ${JSON.stringify(value)})`);
}

/** `-c secretsKmsKeyArns=arn1,arn2`, or a list in cdk.json. */
function kmsKeyArns(app: App): string[] {
  const value: unknown = app.node.tryGetContext('secretsKmsKeyArns');
  if (value === undefined || value === null || value === '') return [];
  const list =
    typeof value === 'string'
      ? value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : Array.isArray(value)
        ? value
        : [value];
  return list.map((arn: unknown) => {
    if (typeof arn !== 'string' || !KMS_KEY_ARN.test(arn))
      throw new SynthSettingsError(
        `context "secretsKmsKeyArns" must list KMS key ARNs (arn:aws:kms:<region>:<account>:key/<id>), comma-separated; got ${JSON.stringify(arn)}`,
      );
    return arn;
  });
}

/**
 * Builds and synthesizes the app, then hands it to `afterSynth` (the cdk-nag check, infra/nag.ts);
 * an unusable config or context ends it with the problems listed and exit code 1.
 */
export function runApp(afterSynth?: (app: App) => void): void {
  try {
    const app = new App();
    buildSvcApp(app);
    app.synth();
    afterSynth?.(app);
  } catch (err) {
    if (!(err instanceof ConfigError) && !(err instanceof SynthSettingsError)) throw err;
    process.stderr.write(`${err.message}\n`);
    if (err instanceof ConfigError && err.issues.some((issue) => issue.message.startsWith('environment variable '))) {
      process.stderr.write(
        `  (\${env:NAME} is checked against the deployed functions' environment, not this machine's; for a secret write ${SECRET_REF_SYNTAX} instead)\n`,
      );
    }
    process.exitCode = 1;
  }
}

/** Runs the app as `cdk synth` does; an unusable config or context ends it with exit code 1. */
export function main(): void {
  runApp();
}

/** Whether the module at `moduleUrl` (its `import.meta.url`) is the script node was started with. */
export function isMainModule(moduleUrl: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(moduleUrl));
  } catch {
    return false;
  }
}

if (isMainModule(import.meta.url)) main();

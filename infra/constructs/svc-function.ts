/**
 * SvcFunction: a NodejsFunction with our Lambda defaults, so every Svc function is built and run the
 * same way — Node 22 on arm64, one minified ESM file with source maps, bundled by the local esbuild
 * (there is no Docker engine), the validated config file inside the bundle, logs with a retention.
 */
import { join, resolve } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat, type BundlingOptions, type NodejsFunctionProps } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV } from '../../functions/contract.js';
import { LAMBDA_BUNDLING } from './esbuild-options.js';
import { LOCK_FILE, REPO_ROOT, repoPath } from '../paths.js';

/**
 * Lambda's working directory and code location (LAMBDA_TASK_ROOT), where the bundle is unpacked.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
export const LAMBDA_TASK_ROOT = '/var/task';

/** Bundling options a function may add; format, target, minify, source maps and hooks are fixed. */
export type SvcBundlingOptions = Pick<BundlingOptions, 'externalModules' | 'nodeModules' | 'define' | 'loader' | 'esbuildArgs' | 'keepNames'>;

export interface SvcFunctionProps
  extends Omit<
    NodejsFunctionProps,
    'entry' | 'handler' | 'runtime' | 'architecture' | 'projectRoot' | 'depsLockFilePath' | 'bundling' | 'code' | 'logRetention' | 'logRetentionRole' | 'logRetentionRetryOptions'
  > {
  /** Entry file relative to the repository root, e.g. `functions/audit/lambda.ts`; it exports `handler`. */
  entry: string;
  /** The validated Svc config file; bundled as BUNDLED_CONFIG_FILE, its path given in SVC_CONFIG. */
  configFile: string;
  /** Retention of the function's log group (ignored when `logGroup` is given). Default one month. */
  logRetention?: RetentionDays;
  bundling?: SvcBundlingOptions;
}

export class SvcFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: SvcFunctionProps) {
    const { entry, configFile, logRetention, bundling, environment, ...rest } = props;
    super(scope, id, {
      memorySize: 512,
      timeout: Duration.seconds(10),
      tracing: Tracing.DISABLED,
      ...rest,
      logGroup: rest.logGroup ?? new LogGroup(scope, `${id}Logs`, { retention: logRetention ?? RetentionDays.ONE_MONTH }),
      entry: repoPath(entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      projectRoot: REPO_ROOT,
      depsLockFilePath: LOCK_FILE,
      environment: {
        // The bundle ships a source map; without this flag stack traces point into minified code.
        NODE_OPTIONS: '--enable-source-maps',
        [LAMBDA_ENV.config]: `${LAMBDA_TASK_ROOT}/${BUNDLED_CONFIG_FILE}`,
        ...environment,
      },
      bundling: {
        // The options bench/bundles.mjs bundles with too (esbuild-options.ts: the SDK is the runtime's).
        externalModules: [...LAMBDA_BUNDLING.externalModules],
        ...bundling,
        format: LAMBDA_BUNDLING.format === 'esm' ? OutputFormat.ESM : OutputFormat.CJS,
        target: LAMBDA_BUNDLING.target,
        mainFields: [...LAMBDA_BUNDLING.mainFields],
        banner: LAMBDA_BUNDLING.banner,
        minify: LAMBDA_BUNDLING.minify,
        sourceMap: LAMBDA_BUNDLING.sourceMap,
        sourcesContent: LAMBDA_BUNDLING.sourcesContent,
        forceDockerBundling: false,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_inputDir: string, outputDir: string) => [copyFileCommand(resolve(configFile), join(outputDir, BUNDLED_CONFIG_FILE))],
        },
      },
    });
  }
}

/**
 * A command that copies a file with Node, for a bundling hook. CDK runs local hooks with `bash -c`,
 * or `cmd /c` on Windows, so Node does the copying to behave the same on both.
 */
export function copyFileCommand(from: string, to: string, platform: NodeJS.Platform = process.platform): string {
  const script = "require('node:fs').copyFileSync(process.argv[1], process.argv[2])";
  return ['node', '-e', shellQuote(script, platform), shellQuote(from, platform), shellQuote(to, platform)].join(' ');
}

function shellQuote(arg: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return `'${arg.replaceAll("'", `'\\''`)}'`;
  // cmd has no escape for a double quote inside quotes, and expands %VAR% even there.
  if (/["%\r\n]/.test(arg)) throw new Error(`cannot pass ${JSON.stringify(arg)} to cmd: the path must not contain ", % or line breaks`);
  return `"${arg}"`;
}

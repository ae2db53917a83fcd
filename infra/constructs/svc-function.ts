/**
 * SvcFunction: a NodejsFunction with our Lambda defaults, so every Svc function is built and run the
 * same way — Node 22 on arm64, one minified ESM file with source maps, bundled by the local esbuild
 * (there is no Docker engine), the resolved config document inside the bundle, logs with a retention,
 * and an execution role of its own that may write to that log group and nothing else (grants add
 * the rest): no AWS managed policy, whose `logs:*` on every resource a least-privilege review flags.
 */
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import {
  type BundlingOptions,
  NodejsFunction,
  type NodejsFunctionProps,
  OutputFormat,
} from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { BuildOptions } from 'esbuild';
import { BUNDLED_CONFIG_FILE, LAMBDA_ENV } from '../../functions/contract.js';
import { LOCK_FILE, REPO_ROOT, repoPath } from '../paths.js';
import { acknowledgeNag } from './acknowledge.js';
import { LAMBDA_BUNDLING, secretFetchEsbuildOptions } from './esbuild-options.js';

/**
 * Lambda's working directory and code location (LAMBDA_TASK_ROOT), where the bundle is unpacked.
 * https://docs.aws.amazon.com/lambda/latest/dg/configuration-envvars.html#configuration-envvars-runtime
 */
export const LAMBDA_TASK_ROOT = '/var/task';

/**
 * What a function in a VPC needs to attach its network interfaces: the actions of AWS's
 * AWSLambdaVPCAccessExecutionRole. The EC2 Describe actions have no resource-level permissions and
 * Lambda checks the others against `*` when it creates the function, so AWS requires Resource `*`
 * here (https://docs.aws.amazon.com/lambda/latest/dg/configuration-vpc.html#configuration-vpc-permissions).
 */
export const VPC_ENI_ACTIONS = [
  'ec2:CreateNetworkInterface',
  'ec2:DescribeNetworkInterfaces',
  'ec2:DescribeSubnets',
  'ec2:DeleteNetworkInterface',
  'ec2:AssignPrivateIpAddresses',
  'ec2:UnassignPrivateIpAddresses',
] as const;

/** Bundling options a function may add; format, target, minify, source maps and hooks are fixed. */
export type SvcBundlingOptions = Pick<
  BundlingOptions,
  'externalModules' | 'nodeModules' | 'define' | 'loader' | 'esbuildArgs' | 'keepNames'
>;

export interface SvcFunctionProps
  extends Omit<
    NodejsFunctionProps,
    | 'entry'
    | 'handler'
    | 'runtime'
    | 'architecture'
    | 'projectRoot'
    | 'depsLockFilePath'
    | 'bundling'
    | 'code'
    | 'logRetention'
    | 'logRetentionRole'
    | 'logRetentionRetryOptions'
    | 'role'
    | 'logGroup'
  > {
  /** Entry file relative to the repository root, e.g. `functions/audit/lambda.ts`; it exports `handler`. */
  entry: string;
  /** Path of the resolved config document synth wrote (shared/config/resolved.ts); bundled as BUNDLED_CONFIG_FILE, its path given in SVC_CONFIG. */
  configDocument: string;
  /** Retention of the function's log group. Default one month. */
  logRetention?: RetentionDays;
  bundling?: SvcBundlingOptions;
}

export class SvcFunction extends NodejsFunction {
  /** The function's own execution role (grants add to it; acknowledgements of its policy's findings go on it). */
  readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: SvcFunctionProps) {
    const { entry, configDocument, logRetention, bundling, environment, ...rest } = props;
    const logGroup = new LogGroup(scope, `${id}Logs`, { retention: logRetention ?? RetentionDays.ONE_MONTH });
    const role = new Role(scope, `${id}Role`, { assumedBy: new ServicePrincipal('lambda.amazonaws.com') });
    // The log group exists (the stack creates it), so the function only adds streams and events to it.
    logGroup.grantWrite(role);
    if (rest.vpc) {
      role.addToPrincipalPolicy(new PolicyStatement({ actions: [...VPC_ENI_ACTIONS], resources: ['*'] }));
      acknowledgeNag(
        role,
        'IAM5[Resource::*]',
        "The network-interface actions a function in a VPC needs (AWSLambdaVPCAccessExecutionRole's): the EC2 Describe actions have no resource-level permissions and Lambda checks the others against * when it creates the function",
      );
    }
    super(scope, id, {
      memorySize: 512,
      timeout: Duration.seconds(10),
      tracing: Tracing.DISABLED,
      ...rest,
      role,
      logGroup,
      entry: repoPath(entry),
      handler: 'handler',
      runtime: Runtime.NODEJS_24_X,
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
        define: { ...bundling?.define, ...LAMBDA_BUNDLING.define },
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
          afterBundling: (_inputDir: string, outputDir: string) => [
            copyFileCommand(resolve(configDocument), join(outputDir, BUNDLED_CONFIG_FILE)),
            // The secret fetching, beside index.mjs (shared/config/function-bundle.ts says why).
            esbuildCommand(secretFetchEsbuildOptions(outputDir, REPO_ROOT)),
          ],
        },
      },
    });
    this.executionRole = role;
    acknowledgeNag(
      this,
      'L1',
      'Node.js 24 is the runtime Svc pins and tests on (docs/development.md); the functions move to a newer runtime with that pin, not ahead of it',
    );
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

/**
 * A command that runs esbuild's API with `options`, for a bundling hook: Node loads the esbuild
 * package NodejsFunction bundles with, so the options are the same object the bench passes, not a
 * translation into command-line flags. They travel base64-encoded: JSON's double quotes cannot be
 * passed to `cmd /c` (shellQuote), base64's letters need no quoting on either shell.
 */
export function esbuildCommand(options: BuildOptions, platform: NodeJS.Platform = process.platform): string {
  const script =
    "require(process.argv[1]).buildSync(JSON.parse(Buffer.from(process.argv[2], 'base64').toString('utf8')))";
  const encoded = Buffer.from(JSON.stringify(options), 'utf8').toString('base64');
  return [
    'node',
    '-e',
    shellQuote(script, platform),
    shellQuote(ESBUILD_MODULE, platform),
    shellQuote(encoded, platform),
  ].join(' ');
}

/** esbuild's CommonJS entry, from the repository's node_modules (the one NodejsFunction's local bundling finds). */
const ESBUILD_MODULE = createRequire(import.meta.url).resolve('esbuild');

function shellQuote(arg: string, platform: NodeJS.Platform): string {
  if (platform !== 'win32') return `'${arg.replaceAll("'", `'\\''`)}'`;
  // cmd has no escape for a double quote inside quotes, and expands %VAR% even there.
  if (/["%\r\n]/.test(arg))
    throw new Error(`cannot pass ${JSON.stringify(arg)} to cmd: the path must not contain ", % or line breaks`);
  return `"${arg}"`;
}

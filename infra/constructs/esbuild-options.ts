/**
 * How every Svc Lambda function is bundled: the esbuild options SvcFunction gives NodejsFunction, in
 * one place, so `bench/bundles.mjs` bundles exactly what `cdk synth` bundles. No runtime
 * dependencies (the bench imports this from dist/ without loading aws-cdk-lib).
 *
 * The AWS SDK is NOT bundled: the nodejs24.x runtime ships the SDK for JavaScript v3 (every
 * `@aws-sdk/client-*` and the `@smithy/*` packages they use, importable from an ES module handler),
 * and the SDK is most of a function's size — the SQS client alone bundles to about 310 KB minified,
 * above the audit function's 300 KB target before any of Svc's code. The functions use it only for
 * S3 (claim checks, parquet files; imported at first use) and the secret stores (secret-fetch.mjs).
 * SQS and DynamoDB, the calls of every audit request, go through Svc's lean JSON-protocol client
 * (shared/aws/: SigV4 on node:crypto, node:https), because importing the runtime's SQS and DynamoDB
 * clients costs ~90 ms of a cold start. `bench/bundles.mjs` checks that a bundle imports nothing
 * else from outside.
 * https://docs.aws.amazon.com/lambda/latest/dg/lambda-nodejs.html (runtime-included SDK versions)
 */
import { join } from 'node:path';
import type { BuildOptions } from 'esbuild';
import { LAMBDA_BUNDLE_FLAG, SECRET_FETCH_ENTRY, SECRET_FETCH_FILE } from '../../shared/config/function-bundle.js';

export { SECRET_FETCH_ENTRY, SECRET_FETCH_FILE };

/**
 * esbuild banner for ESM output: bundled CommonJS dependencies call `require` for Node built-ins,
 * which ESM does not define. The alias keeps the banner's import from clashing with a bundled
 * module's own `import { createRequire }`.
 */
export const ESM_REQUIRE_BANNER =
  "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);";

/** Packages left to the Lambda runtime (see above). */
export const RUNTIME_PROVIDED_MODULES = ['@aws-sdk/*', '@smithy/*'] as const;

/** The fixed options, in NodejsFunction's terms (SvcFunction) and esbuild's (the bench): one set of values. */
export const LAMBDA_BUNDLING = {
  format: 'esm',
  target: 'node24',
  platform: 'node',
  mainFields: ['module', 'main'],
  banner: ESM_REQUIRE_BANNER,
  minify: true,
  sourceMap: true,
  sourcesContent: false,
  externalModules: RUNTIME_PROVIDED_MODULES,
  // Tells the code it runs from a bundle, so it loads its sibling files (shared/config/function-bundle.ts).
  define: { [LAMBDA_BUNDLE_FLAG]: 'true' },
} as const;

/** The bundle's file name NodejsFunction writes for ESM output. */
export const BUNDLE_FILE = 'index.mjs';

/**
 * The esbuild build options NodejsFunction's local bundling passes on the command line for
 * LAMBDA_BUNDLING (`--bundle <entry> --target --platform --format --outfile --minify --sourcemap
 * --sources-content=false --external:… --banner:js --main-fields`), for esbuild's API.
 */
export function lambdaEsbuildOptions(entry: string, outfile: string): BuildOptions {
  const b = LAMBDA_BUNDLING;
  return {
    entryPoints: [entry],
    bundle: true,
    outfile,
    format: b.format,
    target: b.target,
    platform: b.platform,
    mainFields: [...b.mainFields],
    banner: { js: b.banner },
    minify: b.minify,
    sourcemap: b.sourceMap,
    sourcesContent: b.sourcesContent,
    external: [...b.externalModules],
    define: { ...b.define },
  };
}

/**
 * The second file of every function (shared/config/function-bundle.ts): the secret fetching,
 * bundled from SECRET_FETCH_ENTRY with the same options into `outDir`, beside index.mjs. Plain
 * JSON-able values: SvcFunction hands them to esbuild in a bundling hook command.
 */
export function secretFetchEsbuildOptions(outDir: string, absWorkingDir: string): BuildOptions {
  return {
    ...lambdaEsbuildOptions(SECRET_FETCH_ENTRY, join(outDir, SECRET_FETCH_FILE)),
    absWorkingDir,
    logLevel: 'warning',
  };
}

/**
 * The layout of a Lambda function's bundle that the code inside it relies on; the bundling options
 * (infra/constructs/esbuild-options.ts) build it. No imports: infra/ and the bench load this.
 *
 * The secret fetching (shared/secrets/fetch-refs.ts, with Powertools' Secrets Manager and SSM
 * providers) is a second file beside the function's index.mjs, imported only when the config has
 * secret references. In one file it cannot be lazy: esbuild's ESM output without code splitting
 * hoists the providers' static imports of the runtime's @aws-sdk/client-secrets-manager and
 * @aws-sdk/client-ssm to the top of the bundle, so every cold start loaded both clients.
 */

/** The entry of the secret-fetching bundle, relative to the repository root. */
export const SECRET_FETCH_ENTRY = 'shared/secrets/fetch-refs.ts';

/** Its file name beside the function's index.mjs. */
export const SECRET_FETCH_FILE = 'secret-fetch.mjs';

/**
 * The identifier esbuild defines as `true` in every Lambda bundle (esbuild-options.ts
 * LAMBDA_BUNDLING.define): how code knows it runs from a bundle, where its sibling files are.
 */
export const LAMBDA_BUNDLE_FLAG = 'SVC_LAMBDA_BUNDLE';

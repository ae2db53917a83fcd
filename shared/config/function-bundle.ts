/**
 * The layout of a Lambda function's bundle that the code inside it relies on; the bundling options
 * (infra/constructs/esbuild-options.ts) build it. No imports: infra/ and the bench load this.
 *
 * The secret fetching (shared/secrets/fetch-refs.ts, on the lean AWS client) is a second file beside
 * the function's index.mjs, imported only when the config has secret references: a function without
 * any does not load its code at all (esbuild's ESM output without code splitting cannot make one
 * file lazy).
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

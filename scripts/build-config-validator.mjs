/**
 * Part of `npm run build`, after tsc: writes the config validator's generated code
 * (shared/config/validator-source.ts) to dist/shared/config/, where shared/config/validate.ts
 * loads it instead of compiling the schema at every start. Generated at each build, never committed.
 *
 * Then V8's code cache of that file, next to it (GENERATED_CACHE_FILE), made by compiling it the way
 * a start does (runGenerated; the file is compiled whole at once, validator-source.ts says how). A
 * start given the cache does not compile the ≈ 1 MB function (validate.ts says what that cost). The
 * cache is made by the Node that builds; another Node version rejects it and compiles, with the
 * same result. The validator is run once on the smallest config, so a broken file fails the build.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../dist/shared/config/', import.meta.url);
const { configValidatorSource } = await import(new URL('validator-source.js', root).href);
const { GENERATED_CACHE_FILE, GENERATED_FILE, VALIDATOR_FUNCTIONS, runGenerated } = await import(
  new URL('validate.js', root).href
);
const file = fileURLToPath(new URL(GENERATED_FILE, root));
writeFileSync(file, configValidatorSource());

const { factory, producedCache } = runGenerated(readFileSync(file, 'utf8'), file, { produceCache: true });
const validate = factory(VALIDATOR_FUNCTIONS);
if (!validate({ Svc: {} }))
  throw new Error(`the generated validator rejects the smallest config: ${JSON.stringify(validate.errors)}`);
if (producedCache === undefined) throw new Error('V8 made no code cache of the generated validator');
writeFileSync(fileURLToPath(new URL(GENERATED_CACHE_FILE, root)), producedCache);

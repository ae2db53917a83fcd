/**
 * Part of `npm run build`, after tsc: writes the config validator's generated code
 * (shared/config/validator-source.ts) to dist/shared/config/, where shared/config/validate.ts
 * loads it instead of compiling the schema at every start. Generated at each build, never committed.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = new URL('../dist/shared/config/', import.meta.url);
const { configValidatorSource } = await import(new URL('validator-source.js', root).href);
const { GENERATED_FILE } = await import(new URL('validate.js', root).href);
const file = fileURLToPath(new URL(GENERATED_FILE, root));
writeFileSync(file, configValidatorSource());

/** Writes docs/configuration.md and config/full.yaml from the schema (`npm run docs:config`). */
import { writeFileSync } from 'node:fs';
import { renderConfigDocs } from './docs.js';
import { renderFullConfig } from './example.js';

const root = new URL('../../../', import.meta.url);
writeFileSync(new URL('docs/configuration.md', root), renderConfigDocs());
writeFileSync(new URL('config/full.yaml', root), renderFullConfig());
process.stdout.write('wrote docs/configuration.md and config/full.yaml\n');

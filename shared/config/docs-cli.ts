/** Writes the generated docs (configuration, data model) and config/full.yaml (`npm run docs:config`). */
import { writeFileSync } from 'node:fs';
import { renderDataModelDocs } from '../audit/datamodel-docs.js';
import { renderConfigDocs } from './docs.js';
import { renderFullConfig } from './example.js';

const root = new URL('../../../', import.meta.url);
writeFileSync(new URL('docs/configuration.md', root), renderConfigDocs());
writeFileSync(new URL('config/full.yaml', root), renderFullConfig());
writeFileSync(new URL('docs/data-model.md', root), renderDataModelDocs());
process.stdout.write('wrote docs/configuration.md, docs/data-model.md and config/full.yaml\n');

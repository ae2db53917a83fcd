/** Writes the read API's OpenAPI document to docs/api/openapi.json (`npm run docs:api`). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { apiDocumentText } from './router.js';

const root = new URL('../../../../../', import.meta.url);
mkdirSync(new URL('docs/api/', root), { recursive: true });
writeFileSync(new URL('docs/api/openapi.json', root), apiDocumentText());
process.stdout.write('wrote docs/api/openapi.json\n');

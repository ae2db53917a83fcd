/**
 * docs/api/openapi.json, the read API's OpenAPI document: the committed file is what the code makes
 * (`npm run docs:api` after a change), and it is a valid OpenAPI 3.1 document (checked against the
 * specification's JSON schema by a validator from npm), with every answer schema and parameter, and
 * the alerts' POSTs with their bodies.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { apiDocument, apiDocumentText } from '../../edge-agent/endpoints/web/api/router.js';
import { ANSWERS } from '../../shared/store/api-types.js';
import { REPO_ROOT } from '../support/build.js';

const FILE = join(REPO_ROOT, 'docs', 'api', 'openapi.json');

describe('docs/api/openapi.json', () => {
  it('is current (run npm run docs:api after changing the API)', () => {
    expect(readFileSync(FILE, 'utf8')).toBe(apiDocumentText());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const document: Record<string, unknown> = JSON.parse(readFileSync(FILE, 'utf8'));
    const result = await validator.validate(document);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('describes every answer of api-types.ts and the parameters of each endpoint', () => {
    interface Operation {
      parameters: { name: string }[];
    }
    const document: { paths: Record<string, { get?: Operation; post?: Operation & { requestBody?: unknown } }> } =
      JSON.parse(JSON.stringify(apiDocument()));
    const operation = (path: string): Operation => {
      const found = document.paths[path]?.get;
      if (!found) throw new Error(`no GET ${path}`);
      return found;
    };
    const gets = Object.entries(document.paths).filter(([, item]) => item.get !== undefined);
    expect(gets.map(([path]) => path.slice(1))).toEqual(Object.keys(ANSWERS));
    // The only POSTs: the alerts' silences, the new one with its JSON body.
    const posts = Object.entries(document.paths).filter(([, item]) => item.post !== undefined);
    expect(posts.map(([path]) => path)).toEqual(['/alerts/silences', '/alerts/silences/{id}/expire']);
    expect(document.paths['/alerts/silences']?.post?.requestBody).toMatchObject({
      content: { 'application/json': { schema: { properties: { rule: {}, matchers: {}, endsAt: {}, duration: {} } } } },
    });
    expect(operation('/log-events').parameters.map((parameter) => parameter.name)).toEqual([
      'from',
      'to',
      'limit',
      'cursor',
      'level',
      'source',
      'server',
      'category',
      'app',
      'q',
    ]);
    expect(operation('/servers/{serverName}/health').parameters[0]).toMatchObject({
      name: 'serverName',
      in: 'path',
      required: true,
    });
    expect(operation('/performance/top').parameters).toContainEqual(
      expect.objectContaining({
        name: 'by',
        required: true,
        schema: { type: 'string', enum: ['app', 'object', 'method'] },
      }),
    );
  });
});

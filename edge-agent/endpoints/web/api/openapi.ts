/**
 * The read API's OpenAPI 3.1 document, made from the endpoints' parameter definitions (params.ts)
 * and the answers' schemas (shared/store/api-types.ts): one source for the API and its description.
 * Served at `/api/v1/openapi.json` and kept in docs/api/openapi.json (scripts/api-docs.mjs).
 */
import type { TSchema } from '@sinclair/typebox';
import { ANSWERS, ApiErrorSchema } from '../../../../shared/store/api-types.js';
import type { Endpoint } from './endpoint.js';
import { type Parameter, parameterSchema } from './params.js';

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiError' } } },
});

/** A schema as plain JSON (TypeBox's symbol keys dropped). */
const plain = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema));

function queryParameter(parameter: Parameter) {
  return {
    name: parameter.name,
    in: 'query',
    description: parameter.description,
    required: parameter.required ?? false,
    schema: plain(parameterSchema(parameter)),
  };
}

/** A POST of the API (the alerts' silences), described. */
export interface PostDescription {
  path: string;
  summary: string;
  description: string;
  pathParameters?: Readonly<Record<string, string>>;
  /** The JSON body's schema, or undefined when it takes none. */
  body?: TSchema;
  /** The success status and its answer's schema. */
  status: '200' | '201';
  answer: TSchema;
  /** The refusals besides 403, 413, 429 and 500, by status. */
  refusals: Readonly<Record<string, string>>;
}

const operationId = (method: string, path: string) =>
  `${method}${path.replace(/[{}]/g, '').replace(/(?:^|[/-])(\w)/g, (_, letter: string) => letter.toUpperCase())}`;

const pathParametersOf = (described: Readonly<Record<string, string>> | undefined) =>
  Object.entries(described ?? {}).map(([name, description]) => ({
    name,
    in: 'path',
    required: true,
    description,
    schema: { type: 'string' },
  }));

function postOperation(post: PostDescription) {
  return {
    post: {
      operationId: operationId('post', post.path),
      summary: post.summary,
      description: post.description,
      parameters: pathParametersOf(post.pathParameters),
      ...(post.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: plain(post.body) } } } }
        : {}),
      responses: {
        [post.status]: { description: 'done', content: { 'application/json': { schema: plain(post.answer) } } },
        ...Object.fromEntries(Object.entries(post.refusals).map(([status, why]) => [status, errorResponse(why)])),
        '403': errorResponse(
          'not `content-type: application/json`, or not from the web view’s own pages (an `Origin` other than `http://<Host>` and no `Sec-Fetch-Site: same-origin`)',
        ),
        '413': errorResponse('a body larger than 16 KiB'),
        '429': { description: 'more than 300 requests a minute from one address (the web view’s limit)' },
        '500': errorResponse('the change failed (the reason is in Svc’s log)'),
      },
    },
  };
}

/** The OpenAPI 3.1 document of the endpoints and the POSTs. */
export function openApiDocument(endpoints: readonly Endpoint[], posts: readonly PostDescription[] = []): object {
  const paths: Record<string, object> = {};
  for (const endpoint of endpoints) {
    const answer = ANSWERS[endpoint.path];
    if (!answer) throw new Error(`api-types.ts ANSWERS has no schema for ${endpoint.path}`);
    const pathParameters = pathParametersOf(endpoint.pathParameters);
    paths[`/${endpoint.path}`] = {
      get: {
        operationId: endpoint.path
          .replace(/[{}]/g, '')
          .replace(/[/-](\w)/g, (_, letter: string) => letter.toUpperCase()),
        summary: endpoint.summary,
        description: endpoint.description,
        parameters: [...pathParameters, ...endpoint.parameters.map(queryParameter)],
        responses: {
          '200': { description: 'the answer', content: { 'application/json': { schema: plain(answer) } } },
          '400': errorResponse('a bad, unknown or repeated parameter (named in `parameter`)'),
          '404': errorResponse(
            pathParameters.length ? 'the store is off, or it has no server of that name' : 'the store is off',
          ),
          '429': { description: 'more than 300 requests a minute from one address (the web view’s limit)' },
          '500': errorResponse('the query failed (the reason is in Svc’s log)'),
        },
      },
    };
  }
  for (const post of posts) paths[`/${post.path}`] = postOperation(post);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Svc read API',
      version: '1',
      description:
        "The history Svc keeps in its embedded store, as JSON, on the web view's host and port (docs/api.md). Read-only (GET and HEAD) but for the alerts' silences (POST, JSON, from the web view's own pages), the web view's rate limit, no config secret in any answer. Times in answers are milliseconds since the epoch; lists are newest first and paged by cursor.",
    },
    servers: [{ url: '/api/v1' }],
    paths,
    components: { schemas: { ApiError: plain(ApiErrorSchema) } },
  };
}

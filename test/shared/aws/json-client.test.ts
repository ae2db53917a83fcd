/**
 * The lean AWS JSON client (shared/aws/) on the wire: retries, timeouts, errors, malformed answers,
 * endpoints and credentials. The happy paths run against the emulators in the adapters' suites
 * (fauxqs: test/shared/queue/sqs.test.ts; dynalite: ratelimit and idempotency tests). Neither
 * emulator can be made to throttle, fail with a 5xx, stall or answer garbage, so here a small local
 * HTTP server (test/support/recording-http.ts) answers as SQS and DynamoDB do in those cases: their
 * documented error bodies and headers, recorded requests to check what was sent.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type AwsCredentials,
  cachedCredentials,
  environmentCredentials,
  REFRESH_MARGIN_MS,
} from '../../../shared/aws/credentials.js';
import { dynamoDbEndpoint, isConditionalCheckFailed, LeanDynamoDbClient } from '../../../shared/aws/dynamodb.js';
import { AwsServiceError } from '../../../shared/aws/json-client.js';
import { LeanSqsClient } from '../../../shared/aws/sqs.js';
import { freePort } from '../../support/ports.js';
import { type RecordingServer, startRecordingServer } from '../../support/recording-http.js';

const KEYS = { accessKeyId: 'AKIDLOCAL', secretAccessKey: 'local-secret' };
const staticKeys =
  (keys: AwsCredentials = KEYS) =>
  () =>
    Promise.resolve(keys);

let server: RecordingServer;
beforeAll(async () => {
  server = await startRecordingServer();
});
afterEach(() => server.reset());
afterAll(async () => {
  await server?.stop();
});

const clients: { destroy(): void }[] = [];
afterAll(() => {
  for (const c of clients) c.destroy();
});
function sqs(options: Partial<ConstructorParameters<typeof LeanSqsClient>[0]> = {}): LeanSqsClient {
  const client = new LeanSqsClient({ region: 'eu-west-1', credentials: staticKeys(), ...options });
  clients.push(client);
  return client;
}
function dynamo(options: Partial<ConstructorParameters<typeof LeanDynamoDbClient>[0]> = {}): LeanDynamoDbClient {
  const client = new LeanDynamoDbClient({
    region: 'eu-west-1',
    credentials: staticKeys(),
    endpoint: server.url,
    env: {},
    ...options,
  });
  clients.push(client);
  return client;
}

const queueUrl = () => `${server.url}/123456789012/svc-tsdb`;
const batch = () => ({
  QueueUrl: queueUrl(),
  Entries: [
    { Id: 'm0', MessageBody: '{"v":1}', MessageAttributes: { kind: { DataType: 'String', StringValue: 'points' } } },
  ],
});
const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  body: JSON.stringify(body),
  headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': `req-${status}`, ...headers },
});
const sqsOk = json(200, { Successful: [{ Id: 'm0', MessageId: 'f00d', MD5OfMessageBody: 'x' }], Failed: [] });
/** SQS's answer when it throttles (JSON protocol, query-compatible code in a header). */
const sqsThrottled = json(
  400,
  { __type: 'com.amazonaws.sqs#RequestThrottled', message: 'Rate exceeded' },
  { 'x-amzn-query-error': 'AWS.SimpleQueueService.RequestThrottled;Sender' },
);
const updateOk = json(200, { Attributes: { count: { N: '3' } } });

async function rejection(promise: Promise<unknown>): Promise<AwsServiceError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AwsServiceError) return err;
    throw err;
  }
  throw new Error('expected a rejection');
}

describe('requests on the wire', () => {
  it('SendMessageBatch: a signed POST / to the queue URL origin, with the JSON 1.0 headers and the query-mode header', async () => {
    server.reply(sqsOk);
    const result = await sqs().sendMessageBatch(batch());
    expect(result).toEqual({ Successful: [{ Id: 'm0' }], Failed: [] });
    const [req] = server.requests;
    expect(req).toMatchObject({ method: 'POST', url: '/', body: batch() });
    expect(req?.headers).toMatchObject({
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': 'AmazonSQS.SendMessageBatch',
      'x-amzn-query-mode': 'true',
      host: `127.0.0.1:${server.port}`,
      connection: 'keep-alive',
    });
    expect(req?.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDLOCAL\/\d{8}\/eu-west-1\/sqs\/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-target;x-amzn-query-mode, Signature=[0-9a-f]{64}$/,
    );
    expect(req?.headers['x-amz-security-token']).toBeUndefined();
  });

  it('UpdateItem with a session token: the token is sent and signed; the output is checked and returned', async () => {
    server.reply(updateOk);
    const client = dynamo({ credentials: staticKeys({ ...KEYS, sessionToken: 'session-token' }) });
    const out = await client.updateItem({
      TableName: 't',
      Key: { pk: { S: 'k' } },
      UpdateExpression: 'ADD #c :one',
      ExpressionAttributeNames: { '#c': 'count' },
      ExpressionAttributeValues: { ':one': { N: '1' } },
      ReturnValues: 'UPDATED_NEW',
    });
    expect(out).toEqual({ Attributes: { count: { N: '3' } } });
    const [req] = server.requests;
    expect(req?.headers).toMatchObject({
      'x-amz-target': 'DynamoDB_20120810.UpdateItem',
      'x-amz-security-token': 'session-token',
    });
    expect(req?.headers['x-amzn-query-mode']).toBeUndefined();
    expect(req?.headers['authorization']).toContain(
      '/eu-west-1/dynamodb/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-amz-target,',
    );
  });

  it('a configured SQS endpoint wins over the queue URL', async () => {
    server.reply(sqsOk);
    // The queue URL names a port where nothing listens; the configured endpoint is the server.
    await sqs({ endpoint: server.url }).sendMessageBatch({
      ...batch(),
      QueueUrl: `http://127.0.0.1:${await freePort()}/123456789012/q`,
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe('retries (the SDK standard mode: throttling, transient errors, network errors)', () => {
  it('retries SQS throttling, then succeeds', async () => {
    server.reply(sqsThrottled, sqsOk);
    expect(await sqs().sendMessageBatch(batch())).toEqual({ Successful: [{ Id: 'm0' }], Failed: [] });
    expect(server.requests).toHaveLength(2);
    // The same request again, signed again.
    expect(server.requests[1]?.rawBody).toBe(server.requests[0]?.rawBody);
  });

  it('retries a DynamoDB 500, then succeeds', async () => {
    server.reply(
      json(500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'Internal server error' }),
      updateOk,
    );
    const out = await dynamo().updateItem({ TableName: 't', Key: { pk: { S: 'k' } }, UpdateExpression: 'ADD #c :one' });
    expect(out.Attributes).toEqual({ count: { N: '3' } });
    expect(server.requests).toHaveLength(2);
  });

  it('retries ProvisionedThroughputExceededException and an HTML 502 from a proxy', async () => {
    server.reply(
      json(400, {
        __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
        message: 'slow down',
      }),
      { status: 502, body: '<html>Bad Gateway</html>', headers: { 'content-type': 'text/html' } },
      updateOk,
    );
    await dynamo().updateItem({ TableName: 't', Key: { pk: { S: 'k' } }, UpdateExpression: 'ADD #c :one' });
    expect(server.requests).toHaveLength(3);
  });

  it('gives up after maxAttempts (default 3) with the last error: retryable, server fault, status and request id', async () => {
    server.setFallback(
      json(503, { __type: 'com.amazonaws.dynamodb.v20120810#ServiceUnavailable', message: 'try later' }),
    );
    const err = await rejection(dynamo().putItem({ TableName: 't', Item: { pk: { S: 'k' } } }));
    expect(server.requests).toHaveLength(3);
    expect(err).toMatchObject({
      name: 'ServiceUnavailable',
      message: 'try later',
      status: 503,
      requestId: 'req-503',
      retryable: true,
      fault: 'server',
      operation: 'DynamoDB.PutItem',
    });
  });

  it('retries a refused connection, and names the host and the errno code', async () => {
    const port = await freePort(); // nothing listens here
    const err = await rejection(
      dynamo({ endpoint: `http://127.0.0.1:${port}`, maxAttempts: 2, baseDelayMs: 1 }).putItem({
        TableName: 't',
        Item: { pk: { S: 'k' } },
      }),
    );
    expect(err).toMatchObject({
      name: 'ECONNREFUSED',
      code: 'ECONNREFUSED',
      retryable: true,
      fault: 'server',
      status: undefined,
    });
    expect(err.message).toContain(`DynamoDB.PutItem could not reach 127.0.0.1:${port}`);
  });

  it('times out a request that gets no answer, retries it, and reports a TimeoutError', async () => {
    server.setFallback({ ...updateOk, delayMs: 5_000 });
    const err = await rejection(
      dynamo({ requestTimeoutMs: 200, maxAttempts: 2, baseDelayMs: 1 }).updateItem({
        TableName: 't',
        Key: { pk: { S: 'k' } },
        UpdateExpression: 'ADD #c :one',
      }),
    );
    expect(err).toMatchObject({ name: 'TimeoutError', retryable: true, fault: 'server' });
    expect(err.message).toBe(`no answer from 127.0.0.1:${server.port} within 200 ms`);
    expect(server.requests).toHaveLength(2);
  });
});

describe('errors that are not retried', () => {
  it('a 400 validation error: one request, the message is what AWS said, client fault', async () => {
    const message = 'One or more parameter values were invalid: Missing the key pk in the item';
    server.setFallback(json(400, { __type: 'com.amazon.coral.validate#ValidationException', message }));
    const err = await rejection(dynamo().putItem({ TableName: 't', Item: {} }));
    expect(server.requests).toHaveLength(1);
    expect(err).toBeInstanceOf(AwsServiceError);
    expect(err).toMatchObject({
      name: 'ValidationException',
      message,
      status: 400,
      retryable: false,
      fault: 'client',
      requestId: 'req-400',
    });
  });

  it('ConditionalCheckFailedException is recognised by name', async () => {
    server.reply(
      json(400, {
        __type: 'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
        message: 'The conditional request failed',
      }),
    );
    const err = await rejection(
      dynamo().putItem({ TableName: 't', Item: { pk: { S: 'k' } }, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
    expect(isConditionalCheckFailed(err)).toBe(true);
    expect(isConditionalCheckFailed(new Error('ConditionalCheckFailedException'))).toBe(false);
    expect(server.requests).toHaveLength(1);
  });

  it("SQS's query-compatible error: the modelled name and the query code, Sender → client fault", async () => {
    server.reply(
      json(
        400,
        { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' },
        { 'x-amzn-query-error': 'AWS.SimpleQueueService.NonExistentQueue;Sender' },
      ),
    );
    const err = await rejection(sqs().sendMessageBatch(batch()));
    expect(err).toMatchObject({
      name: 'QueueDoesNotExist',
      code: 'AWS.SimpleQueueService.NonExistentQueue',
      message: 'The specified queue does not exist.',
      fault: 'client',
      retryable: false,
    });
    expect(server.requests).toHaveLength(1);
  });

  it('an error named only by the x-amzn-ErrorType header', async () => {
    server.reply({
      status: 400,
      body: '',
      headers: {
        'x-amzn-errortype': 'AccessDeniedException:http://internal.amazon.com/coral/com.amazon.coral.service/',
      },
    });
    const err = await rejection(dynamo().putItem({ TableName: 't', Item: { pk: { S: 'k' } } }));
    expect(err).toMatchObject({
      name: 'AccessDeniedException',
      message: 'HTTP 400 with no error message',
      retryable: false,
    });
  });
});

describe('malformed answers', () => {
  it('a 200 whose body is not JSON: a clear error quoting the body, not retried', async () => {
    server.reply({ status: 200, body: '<html>captive portal</html>', headers: { 'content-type': 'text/html' } });
    const err = await rejection(sqs().sendMessageBatch(batch()));
    expect(err.name).toBe('MalformedResponse');
    expect(err.message).toMatch(
      /^SQS\.SendMessageBatch answered HTTP 200 with a body that is not a JSON object \(.*\): <html>captive portal<\/html>$/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it('a 200 with the wrong shape: the member is named', async () => {
    server.reply(
      json(200, { Successful: 'all of them' }),
      json(200, { Successful: [], Failed: [{ Id: 'm0' }] }),
      json(200, { Attributes: { count: { N: 3 } } }),
      json(200, { Item: [] }),
      json(200, [1]),
    );
    await expect(sqs().sendMessageBatch(batch())).rejects.toThrow(
      'SQS.SendMessageBatch answered with a Successful that is not a list of objects',
    );
    await expect(sqs().sendMessageBatch(batch())).rejects.toThrow(
      'SQS.SendMessageBatch answered with Failed[0] without a string Id and Code',
    );
    await expect(dynamo().updateItem({ TableName: 't', Key: {}, UpdateExpression: 'x' })).rejects.toThrow(
      'DynamoDB.UpdateItem answered with Attributes.count whose S or N is not a string',
    );
    await expect(dynamo().getItem({ TableName: 't', Key: {} })).rejects.toThrow(
      'DynamoDB.GetItem answered with a Item that is not an object',
    );
    await expect(dynamo().putItem({ TableName: 't', Item: {} })).rejects.toThrow(
      /answered HTTP 200 with a body that is not a JSON object \(a JSON array\)/,
    );
  });

  it('an empty 200 (PutItem without return values) is an empty output', async () => {
    server.reply({ status: 200, body: '' });
    await expect(dynamo().putItem({ TableName: 't', Item: { pk: { S: 'k' } } })).resolves.toBeUndefined();
  });
});

describe('endpoints', () => {
  it('DynamoDB: configured, then AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL, then the regional endpoint', () => {
    const env = { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000', AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' };
    expect(dynamoDbEndpoint('eu-west-1', 'http://127.0.0.1:1', env)).toBe('http://127.0.0.1:1');
    expect(dynamoDbEndpoint('eu-west-1', undefined, env)).toBe('http://127.0.0.1:8000');
    expect(dynamoDbEndpoint('eu-west-1', undefined, { AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' })).toBe(
      'http://127.0.0.1:4566',
    );
    expect(dynamoDbEndpoint('eu-west-1', undefined, { ...env, AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' })).toBe(
      'https://dynamodb.eu-west-1.amazonaws.com',
    );
    expect(dynamoDbEndpoint('eu-west-1', undefined, {})).toBe('https://dynamodb.eu-west-1.amazonaws.com');
    expect(dynamoDbEndpoint('cn-north-1', undefined, {})).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn');
  });

  it('AWS_ENDPOINT_URL_DYNAMODB reaches the client', async () => {
    server.reply(updateOk);
    await dynamo({ endpoint: undefined, env: { AWS_ENDPOINT_URL_DYNAMODB: server.url } }).updateItem({
      TableName: 't',
      Key: {},
      UpdateExpression: 'x',
    });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses an endpoint that is not an http(s) URL, naming it', () => {
    expect(() => dynamo({ endpoint: 'dynamodb.local:8000' })).toThrow(
      'DynamoDB endpoint "dynamodb.local:8000" must be an http:// or https:// URL',
    );
    expect(() => sqs({ endpoint: 'not a url' })).toThrow('SQS endpoint "not a url" is not a URL');
  });
});

describe('credentials', () => {
  it('from the environment, read at each call; missing ones are named', async () => {
    const env: NodeJS.ProcessEnv = {};
    const provider = environmentCredentials(env);
    await expect(provider()).rejects.toThrow('no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set');
    env['AWS_ACCESS_KEY_ID'] = 'AKID';
    await expect(provider()).rejects.toThrow('no AWS credentials: AWS_SECRET_ACCESS_KEY not set');
    env['AWS_SECRET_ACCESS_KEY'] = 'secret';
    env['AWS_SESSION_TOKEN'] = 'token';
    expect(await provider()).toEqual({ accessKeyId: 'AKID', secretAccessKey: 'secret', sessionToken: 'token' });
  });

  it('a request without credentials fails with that message (retryable: they may come) and sends nothing', async () => {
    const err = await rejection(
      dynamo({ credentials: environmentCredentials({}), baseDelayMs: 1 }).putItem({ TableName: 't', Item: {} }),
    );
    expect(err).toMatchObject({ name: 'CredentialsError', retryable: true, fault: 'client' });
    expect(err.message).toMatch(
      /^DynamoDB\.PutItem: no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY not set/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it('cached until 5 minutes before they expire; callers share one fetch; a failed fetch is tried again', async () => {
    let now = Date.parse('2026-11-22T10:00:00Z');
    let calls = 0;
    let fail = false;
    const provider = cachedCredentials(
      () => {
        calls += 1;
        if (fail) return Promise.reject(new Error('no route to the credential source'));
        return Promise.resolve({ ...KEYS, sessionToken: `t${calls}`, expiration: new Date(now + 60 * 60_000) });
      },
      () => now,
    );
    const [a, b] = await Promise.all([provider(), provider()]);
    expect(calls).toBe(1);
    expect(a).toBe(b);
    now += 60 * 60_000 - REFRESH_MARGIN_MS - 1; // just before the margin: still cached
    expect((await provider()).sessionToken).toBe('t1');
    now += 2;
    fail = true;
    await expect(provider()).rejects.toThrow('no route to the credential source');
    fail = false;
    expect((await provider()).sessionToken).toBe('t3');
    expect(calls).toBe(3);
  });
});

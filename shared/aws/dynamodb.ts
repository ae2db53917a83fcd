/**
 * DynamoDB on the lean JSON client (json-client.ts): the DynamoApi port the rate limiter and the
 * idempotency store (shared/ratelimit/dynamodb.ts, shared/idempotency/dynamodb.ts) call. Only the
 * members Svc sends and reads are typed.
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_Operations_Amazon_DynamoDB.html
 *
 * Endpoint, as the AWS SDK resolves it: the configured one, else AWS_ENDPOINT_URL_DYNAMODB, else
 * AWS_ENDPOINT_URL (both ignored when AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true), else
 * `https://dynamodb.<region>.amazonaws.com` (`.amazonaws.com.cn` in China regions). Not done: the
 * SDK's FIPS and dual-stack variants and account-based endpoints (the environment Lambda gives has
 * no account id, so the SDK uses the regional endpoint there too).
 */

import { isRecord } from '../util/records.js';
import { type AwsClientSettings, AwsJsonClient, AwsServiceError, serviceEndpoint } from './json-client.js';

/** An attribute value, as far as Svc writes and reads them (strings and numbers). */
export interface AttributeValue {
  S?: string;
  N?: string;
  BOOL?: boolean;
  NULL?: boolean;
}

export type Item = Record<string, AttributeValue>;

interface ExpressionParts {
  ConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Item;
}

export interface UpdateItemInput extends ExpressionParts {
  TableName: string;
  Key: Item;
  UpdateExpression: string;
  ReturnValues?: 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW';
}

export interface PutItemInput extends ExpressionParts {
  TableName: string;
  Item: Item;
}

export interface GetItemInput {
  TableName: string;
  Key: Item;
  ConsistentRead?: boolean;
}

export interface DeleteItemInput extends ExpressionParts {
  TableName: string;
  Key: Item;
}

/** What the rate limiter and the idempotency store need of DynamoDB. */
export interface DynamoApi {
  updateItem(input: UpdateItemInput): Promise<{ Attributes?: Item }>;
  putItem(input: PutItemInput): Promise<void>;
  getItem(input: GetItemInput): Promise<{ Item?: Item }>;
  deleteItem(input: DeleteItemInput): Promise<void>;
}

/** A condition expression was false: DynamoDB's ConditionalCheckFailedException, recognised by name. */
export function isConditionalCheckFailed(err: unknown): boolean {
  return err instanceof AwsServiceError && err.name === 'ConditionalCheckFailedException';
}

/** `output[key]` as an Item when present: an object of attribute values whose S and N members are strings. */
export function checkItem(output: Record<string, unknown>, key: string, operation: string): Item | undefined {
  const value = output[key];
  if (value === undefined) return undefined;
  const bad = (what: string) =>
    new AwsServiceError({
      name: 'MalformedResponse',
      message: `${operation} answered with ${what}`,
      retryable: false,
      fault: 'server',
      operation,
    });
  if (!isRecord(value)) throw bad(`a ${key} that is not an object`);
  const item: Item = {};
  for (const [name, attribute] of Object.entries(value)) {
    if (!isRecord(attribute)) throw bad(`${key}.${name} that is not an attribute value`);
    const { S, N, BOOL, NULL } = attribute;
    if ((S !== undefined && typeof S !== 'string') || (N !== undefined && typeof N !== 'string'))
      throw bad(`${key}.${name} whose S or N is not a string`);
    item[name] = {
      ...(S !== undefined ? { S } : {}),
      ...(N !== undefined ? { N } : {}),
      ...(typeof BOOL === 'boolean' ? { BOOL } : {}),
      ...(NULL === true ? { NULL } : {}),
    };
  }
  return item;
}

/** DynamoDB's endpoint for `region`, from the configuration, the environment or the region (see the head of this file). */
export function dynamoDbEndpoint(region: string, configured?: string, env: NodeJS.ProcessEnv = process.env): string {
  return serviceEndpoint({ envName: 'DYNAMODB', host: 'dynamodb', name: 'DynamoDB' }, region, configured, env);
}

export interface LeanDynamoDbClientOptions extends AwsClientSettings {
  /** For the endpoint variables (default process.env). */
  env?: NodeJS.ProcessEnv;
}

export class LeanDynamoDbClient implements DynamoApi {
  private readonly client: AwsJsonClient;

  constructor(options: LeanDynamoDbClientOptions) {
    const { endpoint, env, ...rest } = options;
    this.client = new AwsJsonClient({
      ...rest,
      endpoint: dynamoDbEndpoint(options.region, endpoint, env),
      serviceName: 'DynamoDB',
      signingName: 'dynamodb',
      targetPrefix: 'DynamoDB_20120810',
    });
  }

  async updateItem(input: UpdateItemInput): Promise<{ Attributes?: Item }> {
    const attributes = checkItem(await this.client.call('UpdateItem', input), 'Attributes', 'DynamoDB.UpdateItem');
    return attributes ? { Attributes: attributes } : {};
  }

  async putItem(input: PutItemInput): Promise<void> {
    await this.client.call('PutItem', input);
  }

  async getItem(input: GetItemInput): Promise<{ Item?: Item }> {
    const item = checkItem(await this.client.call('GetItem', input), 'Item', 'DynamoDB.GetItem');
    return item ? { Item: item } : {};
  }

  async deleteItem(input: DeleteItemInput): Promise<void> {
    await this.client.call('DeleteItem', input);
  }

  destroy(): void {
    this.client.destroy();
  }
}

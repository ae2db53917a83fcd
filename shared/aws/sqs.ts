/**
 * SQS SendMessageBatch on the lean JSON client (json-client.ts): the SqsApi port SqsEventQueue
 * (shared/queue/sqs.ts) sends through. Only the members Svc sends and reads are typed.
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 *
 * Endpoint, as the AWS SDK's SQS client (useQueueUrlAsEndpoint, @aws-sdk/middleware-sdk-sqs): the
 * configured endpoint when there is one (`Svc.cloud.endpoint`), else the origin of the queue URL
 * (`https://sqs.<region>.amazonaws.com`, an emulator's, a VPC endpoint's). AWS_ENDPOINT_URL_SQS /
 * AWS_ENDPOINT_URL change nothing here, as with the SDK, whose queue-URL rule overrides them.
 */

import { isRecord } from '../util/records.js';
import { type AwsClientSettings, AwsJsonClient, AwsServiceError } from './json-client.js';

export interface SqsMessageAttribute {
  DataType: string;
  StringValue: string;
}

export interface SendMessageBatchEntry {
  Id: string;
  MessageBody: string;
  MessageAttributes?: Record<string, SqsMessageAttribute>;
}

export interface SendMessageBatchInput {
  QueueUrl: string;
  Entries: SendMessageBatchEntry[];
}

export interface SendMessageBatchResult {
  Successful: { Id: string }[];
  Failed: { Id: string; SenderFault: boolean; Code: string; Message?: string }[];
}

/** What SqsEventQueue needs of SQS. */
export interface SqsApi {
  sendMessageBatch(input: SendMessageBatchInput): Promise<SendMessageBatchResult>;
}

/** `endpoint`: where requests go instead of the queue URL's origin (an emulator, a VPC endpoint). */
export type LeanSqsClientOptions = AwsClientSettings;

/** The SendMessageBatch output's members Svc reads, checked; a wrong shape is an AwsServiceError naming the member. */
export function checkSendMessageBatchResult(
  output: Record<string, unknown>,
  operation = 'SQS.SendMessageBatch',
): SendMessageBatchResult {
  const bad = (what: string) =>
    new AwsServiceError({
      name: 'MalformedResponse',
      message: `${operation} answered with ${what}`,
      retryable: false,
      fault: 'server',
      operation,
    });
  const list = (key: string): Record<string, unknown>[] => {
    const value = output[key];
    if (value === undefined) return [];
    if (!Array.isArray(value) || !value.every(isRecord)) throw bad(`a ${key} that is not a list of objects`);
    return value;
  };
  const Successful = list('Successful').map((s, i) => {
    if (typeof s['Id'] !== 'string') throw bad(`Successful[${i}] without a string Id`);
    return { Id: s['Id'] };
  });
  const Failed = list('Failed').map((f, i) => {
    const { Id, SenderFault, Code, Message } = f;
    if (typeof Id !== 'string' || typeof Code !== 'string') throw bad(`Failed[${i}] without a string Id and Code`);
    if (SenderFault !== undefined && typeof SenderFault !== 'boolean')
      throw bad(`Failed[${i}].SenderFault that is not a boolean`);
    return { Id, SenderFault: SenderFault === true, Code, ...(typeof Message === 'string' ? { Message } : {}) };
  });
  return { Successful, Failed };
}

export class LeanSqsClient implements SqsApi {
  private readonly client: AwsJsonClient;
  private readonly endpoint: string | undefined;

  constructor(options: LeanSqsClientOptions) {
    const { endpoint, ...rest } = options;
    this.endpoint = endpoint;
    this.client = new AwsJsonClient({
      ...rest,
      ...(endpoint ? { endpoint } : {}),
      serviceName: 'SQS',
      signingName: 'sqs',
      targetPrefix: 'AmazonSQS',
      queryCompatible: true,
    });
  }

  async sendMessageBatch(input: SendMessageBatchInput): Promise<SendMessageBatchResult> {
    return checkSendMessageBatchResult(
      await this.client.call('SendMessageBatch', input, this.endpoint ?? input.QueueUrl),
    );
  }

  destroy(): void {
    this.client.destroy();
  }
}

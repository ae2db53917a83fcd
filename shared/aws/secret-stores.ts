/**
 * Secrets Manager's GetSecretValue and SSM Parameter Store's GetParameter on the lean JSON client
 * (json-client.ts, JSON protocol 1.1): the two calls of the secret references (`${aws-secret:…}`,
 * `${aws-ssm:…}`: shared/secrets/fetch-refs.ts). Without the AWS SDK's clients (and the Powertools
 * parameters utility over them), which brought 12 packages and 12 MB to the production install for
 * two POSTs made once per start. Only the members Svc reads are typed; a response is checked.
 * https://docs.aws.amazon.com/secretsmanager/latest/apireference/API_GetSecretValue.html
 * https://docs.aws.amazon.com/systems-manager/latest/APIReference/API_GetParameter.html
 *
 * Endpoints as the SDK resolves them (json-client.ts `serviceEndpoint`: the configured one,
 * AWS_ENDPOINT_URL_SECRETS_MANAGER / AWS_ENDPOINT_URL_SSM, AWS_ENDPOINT_URL, else the region's).
 */
import { isRecord } from '../util/records.js';
import { type AwsClientSettings, AwsJsonClient, serviceEndpoint } from './json-client.js';

export const SECRETS_MANAGER = { envName: 'SECRETS_MANAGER', host: 'secretsmanager', name: 'Secrets Manager' } as const;
export const SSM = { envName: 'SSM', host: 'ssm', name: 'SSM' } as const;

export interface SecretStoreClientOptions extends AwsClientSettings {
  /** For the endpoint variables (default process.env). */
  env?: NodeJS.ProcessEnv;
}

/** What a store holds under a name: its text, its bytes (a binary secret), or nothing. */
export type StoredValue = string | Uint8Array | undefined;

/** The two stores of one region. */
export class SecretStoreClient {
  private readonly secrets: AwsJsonClient;
  private readonly parameters: AwsJsonClient;

  constructor(options: SecretStoreClientOptions) {
    const { env = process.env, endpoint, ...settings } = options;
    this.secrets = new AwsJsonClient({
      ...settings,
      endpoint: serviceEndpoint(SECRETS_MANAGER, options.region, endpoint, env),
      serviceName: SECRETS_MANAGER.name,
      signingName: 'secretsmanager',
      targetPrefix: 'secretsmanager',
      jsonVersion: '1.1',
    });
    this.parameters = new AwsJsonClient({
      ...settings,
      endpoint: serviceEndpoint(SSM, options.region, endpoint, env),
      serviceName: SSM.name,
      signingName: 'ssm',
      targetPrefix: 'AmazonSSM',
      jsonVersion: '1.1',
    });
  }

  /**
   * The current version of a secret (by name or ARN): `SecretString`, else `SecretBinary` decoded,
   * else nothing (an empty `SecretString` counts as nothing, as the SDK's Powertools provider read it).
   */
  async secret(id: string): Promise<StoredValue> {
    const output = await this.secrets.call('GetSecretValue', { SecretId: id });
    const text = output['SecretString'];
    if (typeof text === 'string' && text !== '') return text;
    if (typeof output['SecretBinary'] === 'string')
      return new Uint8Array(Buffer.from(output['SecretBinary'], 'base64'));
    return undefined;
  }

  /** A parameter's value (by name or ARN), decrypted: a SecureString is what a secret parameter should be. */
  async parameter(name: string): Promise<StoredValue> {
    const output = await this.parameters.call('GetParameter', { Name: name, WithDecryption: true });
    const parameter = output['Parameter'];
    return isRecord(parameter) && typeof parameter['Value'] === 'string' ? parameter['Value'] : undefined;
  }

  /** Closes the kept-alive connections. */
  destroy(): void {
    this.secrets.destroy();
    this.parameters.destroy();
  }
}

/**
 * A local stand-in for AWS Secrets Manager and SSM Parameter Store: there is no local emulator of
 * either here (no npm package, no container engine), so this server speaks the part of their real
 * wire protocol that Svc uses — AWS JSON 1.1: `POST /` with `X-Amz-Target:
 * secretsmanager.GetSecretValue` or `AmazonSSM.GetParameter`, a JSON body, a JSON answer, and
 * errors as status 400 with `{"__type": "<ErrorName>", "message": …}` (ResourceNotFoundException,
 * ParameterNotFound, AccessDeniedException) — so Svc's client (shared/aws/secret-stores.ts), or the
 * AWS SDK's, runs unchanged, pointed here by `AWS_ENDPOINT_URL_SECRETS_MANAGER` /
 * `AWS_ENDPOINT_URL_SSM` or a client `endpoint`. Signatures are not verified; the region and
 * service of each request's SigV4 credential scope are recorded.
 *
 *   const aws = await startSecretStores();
 *   aws.putSecret('svc/tsdb', JSON.stringify({ password: 'pw' }));
 *   aws.putParameter('/svc/token', 'tok', 'SecureString');
 *   ... aws.requests ...  (every request, for counting fetches)
 *   await aws.stop();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOOPBACK } from './ports.js';

export const ACCOUNT = '123456789012';

export interface SecretStoreRequest {
  /** `secretsmanager.GetSecretValue`, `AmazonSSM.GetParameter`, … */
  target: string;
  body: Record<string, unknown>;
  /** From the Authorization header's credential scope. */
  region: string | undefined;
  service: string | undefined;
}

export interface SecretStores {
  /** `http://127.0.0.1:<port>`: the endpoint of both services. */
  readonly url: string;
  readonly requests: SecretStoreRequest[];
  /** Adds a secret (text or binary) named `name`; returns its ARN (name + `-` + six characters, as AWS makes it). */
  putSecret(name: string, value: string | Uint8Array, region?: string): string;
  /** Adds a parameter; returns its ARN. */
  putParameter(name: string, value: string, type?: 'String' | 'SecureString', region?: string): string;
  /** Answers AccessDeniedException for this secret or parameter name, as AWS does without a grant. */
  deny(name: string): void;
  /** Holds every answer until `count` requests are in flight (or 2 s passed): proves they are made in parallel. */
  holdUntilInFlight(count: number): void;
  /** The most requests that were in flight at once. */
  readonly maxInFlight: number;
  reset(): void;
  stop(): Promise<void>;
}

interface Stored {
  name: string;
  arn: string;
  value: string | Uint8Array;
  type: 'String' | 'SecureString';
}

const HOLD_LIMIT_MS = 2_000;

export async function startSecretStores(): Promise<SecretStores> {
  const secrets = new Map<string, Stored>();
  const parameters = new Map<string, Stored>();
  const denied = new Set<string>();
  const requests: SecretStoreRequest[] = [];
  let holdFor = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const held: (() => void)[] = [];

  const find = (store: Map<string, Stored>, id: unknown): Stored | undefined =>
    typeof id === 'string' ? (store.get(id) ?? [...store.values()].find((s) => s.arn === id)) : undefined;

  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'x-amzn-requestid': `req-${requests.length}`,
    });
    res.end(JSON.stringify(body));
  };

  const handle = (target: string, body: Record<string, unknown>, res: ServerResponse) => {
    if (target === 'secretsmanager.GetSecretValue') {
      const secret = find(secrets, body['SecretId']);
      if (!secret)
        return answer(res, 400, {
          __type: 'ResourceNotFoundException',
          message: "Secrets Manager can't find the specified secret.",
        });
      if (denied.has(secret.name)) {
        return answer(res, 400, {
          __type: 'AccessDeniedException',
          Message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/svc/fn is not authorized to perform: secretsmanager:GetSecretValue on resource: ${String(body['SecretId'])} because no identity-based policy allows the secretsmanager:GetSecretValue action`,
        });
      }
      const value =
        typeof secret.value === 'string'
          ? { SecretString: secret.value }
          : { SecretBinary: Buffer.from(secret.value).toString('base64') };
      return answer(res, 200, {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: 'v1',
        VersionStages: ['AWSCURRENT'],
        CreatedDate: 1_700_000_000,
        ...value,
      });
    }
    if (target === 'AmazonSSM.GetParameter') {
      const parameter = find(parameters, body['Name']);
      if (!parameter) return answer(res, 400, { __type: 'ParameterNotFound' });
      if (denied.has(parameter.name)) {
        return answer(res, 400, {
          __type: 'AccessDeniedException',
          message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/svc/fn is not authorized to perform: ssm:GetParameter on resource: ${parameter.arn}`,
        });
      }
      // Without WithDecryption, SSM answers a SecureString's ciphertext.
      const plain = String(parameter.value);
      const value =
        parameter.type === 'SecureString' && body['WithDecryption'] !== true
          ? Buffer.from(`kms:${plain.length}`).toString('base64')
          : plain;
      return answer(res, 200, {
        Parameter: {
          Name: parameter.name,
          ARN: parameter.arn,
          Type: parameter.type,
          Value: value,
          Version: 1,
          DataType: 'text',
          LastModifiedDate: 1_700_000_000,
        },
      });
    }
    return answer(res, 400, { __type: 'UnknownOperationException' });
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
          body = Object.fromEntries(Object.entries(parsed));
      } catch {
        return answer(res, 400, { __type: 'SerializationException' });
      }
      const scope = /Credential=[^/]+\/\d{8}\/([^/]+)\/([^/]+)\//.exec(String(req.headers.authorization ?? ''));
      requests.push({ target, body, region: scope?.[1], service: scope?.[2] });
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      const respond = () => {
        inFlight -= 1;
        handle(target, body, res);
      };
      if (holdFor > 0) {
        held.push(respond);
        const release = () => held.splice(0).forEach((r) => r());
        if (inFlight >= holdFor) release();
        else setTimeout(release, HOLD_LIMIT_MS).unref();
        return;
      }
      respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, LOOPBACK, resolve));
  const { port } = server.address() as AddressInfo;
  const suffix = () => Math.random().toString(36).slice(2, 8).padEnd(6, 'x');

  return {
    url: `http://${LOOPBACK}:${port}`,
    requests,
    get maxInFlight() {
      return maxInFlight;
    },
    putSecret(name, value, region = 'us-east-1') {
      const arn = `arn:aws:secretsmanager:${region}:${ACCOUNT}:secret:${name}-${suffix()}`;
      secrets.set(name, { name, arn, value, type: 'SecureString' });
      return arn;
    },
    putParameter(name, value, type = 'SecureString', region = 'us-east-1') {
      const arn = `arn:aws:ssm:${region}:${ACCOUNT}:parameter/${name.replace(/^\//, '')}`;
      parameters.set(name, { name, arn, value, type });
      return arn;
    },
    deny(name) {
      denied.add(name);
    },
    holdUntilInFlight(count) {
      holdFor = count;
    },
    reset() {
      requests.length = 0;
      denied.clear();
      holdFor = 0;
      maxInFlight = 0;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

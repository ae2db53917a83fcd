/**
 * dynalite is the local stand-in for DynamoDB in tests: an emulator of the DynamoDB HTTP API on an
 * in-memory LevelDB, started IN-PROCESS (no child process, no Java, no Docker) on a free loopback
 * port. Table state transitions are instant (createTableMs etc. = 0).
 *
 * Known gaps versus DynamoDB: no UpdateTimeToLive / TTL expiry (DescribeTimeToLive always says
 * DISABLED), no auth (any credentials are accepted).
 */
import type { Server } from 'node:http';
import { CreateTableCommand, DynamoDBClient, waitUntilTableExists } from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { afterAll, beforeAll } from 'vitest';
import { LeanDynamoDbClient } from '../../shared/aws/dynamodb.js';
import { freePort, isAddressInUse, LOOPBACK } from './ports.js';

export interface DynaliteHandle {
  endpoint: string;
  /** The AWS SDK's client, for the test's own look (creating tables, reading items back). */
  client: DynamoDBClient;
  /** Svc's own DynamoDB client (the audit Lambda's), no retries. */
  api: LeanDynamoDbClient;
  /** Closes the client and the server (idempotent). */
  stop(): Promise<void>;
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => {
      server.removeListener('listening', onListening);
      reject(err);
    };
    const onListening = (): void => {
      server.removeListener('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, LOOPBACK);
  });
}

function close(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
  });
}

/** Svc's own DynamoDB client for a local endpoint (dynalite, or a port where nothing listens): no retries, any credentials. */
export function localDynamoClient(endpoint: string): LeanDynamoDbClient {
  return new LeanDynamoDbClient({
    endpoint,
    region: 'us-east-1',
    credentials: () => Promise.resolve({ accessKeyId: 'local', secretAccessKey: 'local' }),
    maxAttempts: 1,
  });
}

/** Starts dynalite on a free port (retrying if the port is taken in between) and a client for it. */
export async function startDynalite(): Promise<DynaliteHandle> {
  let server: Server | undefined;
  let port = 0;
  for (let attempt = 1; server === undefined; attempt++) {
    port = await freePort();
    const candidate = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
    try {
      await listen(candidate, port);
      server = candidate;
    } catch (err) {
      // Best effort: dynalite closes its (in-memory) store only once a listening server closes.
      await close(candidate).catch(() => undefined);
      if (attempt >= 5 || !(err instanceof Error) || !isAddressInUse(err.message)) throw err;
    }
  }

  const endpoint = `http://${LOOPBACK}:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    // A local emulator either answers or is broken: no retries, so failures show up at once.
    maxAttempts: 1,
  });

  const api = localDynamoClient(endpoint);

  const running = server;
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      client.destroy(); // closes the keep-alive sockets, so server.close() need not wait for them
      api.destroy();
      await close(running);
    })();
    return stopped;
  };
  return { endpoint, client, api, stop };
}

/**
 * Creates a table keyed on the string attribute `partitionKey` (on-demand billing) and waits until it
 * is ACTIVE. On AWS the CDK stack owns the tables (and turns on their TTL, which dynalite lacks).
 */
export async function createTable(client: DynamoDBClient, tableName: string, partitionKey: string): Promise<void> {
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: [{ AttributeName: partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  // The waiter polls DescribeTable immediately, then backs off between minDelay and maxDelay.
  await waitUntilTableExists({ client, maxWaitTime: 120, minDelay: 1, maxDelay: 5 }, { TableName: tableName });
}

/** One dynalite for the calling suite, with `tables` (name → partition key) created; the getter throws until it runs. */
export function useDynalite(tables: Record<string, string>): () => DynaliteHandle {
  let dynamo: DynaliteHandle | undefined;
  beforeAll(async () => {
    dynamo = await startDynalite();
    for (const [name, key] of Object.entries(tables)) await createTable(dynamo.client, name, key);
  });
  afterAll(async () => {
    await dynamo?.stop();
  });
  return () => {
    if (dynamo === undefined) throw new Error('dynalite is not running (beforeAll failed?)');
    return dynamo;
  };
}

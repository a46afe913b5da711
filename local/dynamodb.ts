/**
 * The embedded default's DynamoDB: dynalite (a DynamoDB emulator on LevelDB) in this process, on
 * 127.0.0.1, with the limits table created. In memory by default; `dataDir` keeps the data on disk.
 * dynalite does not implement TTL: items keep their `expires_at` but are never deleted, which
 * only costs disk, as every key carries its period.
 */
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
import {
  LIMITS_TTL_ATTRIBUTE,
  limitsTableDefinition,
} from '../lambdas/adapters/dynamodb/limit-store';

interface DynaliteOptions {
  path?: string;
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}
// dynalite ships no type declarations; this is the one function of it we use.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite = require('dynalite') as (options: DynaliteOptions) => Server;

const DEFAULT_LIMITS_TABLE = 'groundwork-limits';
/**
 * Polling for a table status change, in seconds. dynalite makes it on a 0 ms timer, which on a
 * loaded machine can still run after the client's next request.
 */
const TABLE_WAIT = { minDelay: 0.01, maxDelay: 0.1, maxWaitTime: 10 };

export interface LocalDynamoOptions {
  /** 0 (default) picks a free port. */
  readonly port?: number;
  /** Folder for dynalite's LevelDB files; undefined keeps everything in memory. */
  readonly dataDir?: string;
  readonly tableName?: string;
}

export interface LocalDynamo {
  /** `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  /** A real SDK client for the emulator (dummy credentials). */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  stop(): Promise<void>;
}

/**
 * A client for a local endpoint: the SDK wants a region and credentials, dynalite ignores them.
 * More sockets than the SDK's 50, as local load tests run hundreds of requests at once.
 */
export function localDynamoClient(
  endpoint: string,
  config: { maxAttempts?: number } = {},
): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    requestHandler: { httpAgent: { keepAlive: true, maxSockets: 256 } },
    ...config,
  });
}

/** Starts dynalite and creates the limits table (kept if `dataDir` already holds it). */
export async function startLocalDynamo(options: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const server = dynalite({
    ...(options.dataDir ? { path: options.dataDir } : {}),
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  const client = localDynamoClient(endpoint);
  const tableName = options.tableName ?? DEFAULT_LIMITS_TABLE;
  let stopped: Promise<void> | undefined;
  // dynalite calls back once its LevelDB is closed, or with the reason it could not close it.
  const stop = () =>
    (stopped ??= new Promise<void>((resolve, reject) => {
      client.destroy();
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }));
  try {
    await ensureTable(client, tableName);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, client, tableName, stop };
}

/**
 * Returns once the table is ACTIVE. CreateTable answers while the table is CREATING, and until it
 * is ACTIVE every read and write fails with ResourceNotFoundException, which the limiter (failing
 * open by default) would admit uncounted. DeleteTable answers while the table is DELETING, and
 * until it is gone CreateTable fails with ResourceInUseException.
 */
async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const waiter = { client, ...TABLE_WAIT };
  const table = { TableName: tableName };
  try {
    const { Table } = await client.send(new DescribeTableCommand(table));
    const wanted = limitsTableDefinition(tableName).GlobalSecondaryIndexes ?? [];
    const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
    if (wanted.every((i) => present.has(i.IndexName))) {
      await waitUntilTableExists(waiter, table);
      return;
    }
    // A table from an older version: the counters are short-lived local state, so rebuilding
    // the table (losing this month's local counts) is simpler than migrating it.
    await client.send(new DeleteTableCommand(table));
    await waitUntilTableNotExists(waiter, table);
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  await client.send(new CreateTableCommand(limitsTableDefinition(tableName)));
  await waitUntilTableExists(waiter, table);
  try {
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: LIMITS_TTL_ATTRIBUTE, Enabled: true },
      }),
    );
  } catch (err) {
    // dynalite answers UnknownOperationException: it has no TTL. Real DynamoDB (or DynamoDB Local) does.
    if ((err as { name?: string }).name !== 'UnknownOperationException') throw err;
  }
}

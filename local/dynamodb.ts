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
  const stop = async () => {
    client.destroy();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };
  try {
    await ensureTable(client, tableName);
  } catch (err) {
    await stop();
    throw err;
  }
  return { endpoint, client, tableName, stop };
}

async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const wanted = limitsTableDefinition(tableName).GlobalSecondaryIndexes ?? [];
    const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((i) => i.IndexName));
    if (wanted.every((i) => present.has(i.IndexName))) return;
    // A table from an older version: the counters are short-lived local state, so rebuilding
    // the table (losing this month's local counts) is simpler than migrating it.
    await client.send(new DeleteTableCommand({ TableName: tableName }));
  } catch (err) {
    if (!(err instanceof ResourceNotFoundException)) throw err;
  }
  await client.send(new CreateTableCommand(limitsTableDefinition(tableName)));
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

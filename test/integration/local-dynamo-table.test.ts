/**
 * The local DynamoDB's limits table when dynalite changes table status late. dynalite answers
 * CreateTable while the table is CREATING and DeleteTable while it is DELETING, then changes the
 * status on a 0 ms timer; on a loaded machine that timer can run after the client's next request.
 * These tests make every 0 ms timer run late, so that window is always open.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DescribeTableCommand,
  PutItemCommand,
  waitUntilTableExists,
  waitUntilTableNotExists,
} from '@aws-sdk/client-dynamodb';
import { limitsTableDefinition } from '../../lambdas/adapters/dynamodb/limit-store';
import { startLocalDynamo } from '../../local/dynamodb';

const LATE_MS = 300;

/** From here on, every timer of 0 ms runs `LATE_MS` late, as on a busy event loop. */
function makeImmediateTimersLate(): void {
  const setTimeoutNow = globalThis.setTimeout;
  jest
    .spyOn(globalThis, 'setTimeout')
    .mockImplementation((callback, ms) => setTimeoutNow(callback, ms || LATE_MS));
}

afterEach(() => {
  jest.restoreAllMocks();
});

it('accepts writes as soon as it has started, though dynalite activates the table late', async () => {
  makeImmediateTimersLate();
  const dynamo = await startLocalDynamo();
  try {
    await expect(
      dynamo.client.send(
        new PutItemCommand({
          TableName: dynamo.tableName,
          Item: { pk: { S: 'user#acme#first' }, sk: { S: 'usage#2030-04' } },
        }),
      ),
    ).resolves.toBeDefined();
  } finally {
    await dynamo.stop();
  }
});

it('rebuilds a table from an older version, though dynalite removes the old one late', async () => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-dynamo-'));
  try {
    // A table as an older version left it in the data folder: no usage index.
    const old = await startLocalDynamo({ dataDir });
    const waiter = { client: old.client, minDelay: 0.01, maxDelay: 0.1, maxWaitTime: 10 };
    const table = { TableName: old.tableName };
    await old.client.send(new DeleteTableCommand(table));
    await waitUntilTableNotExists(waiter, table);
    const current = limitsTableDefinition(old.tableName);
    await old.client.send(
      new CreateTableCommand({
        ...current,
        AttributeDefinitions: current.AttributeDefinitions?.filter(
          (a) => a.AttributeName !== 'tenant_month',
        ),
        GlobalSecondaryIndexes: undefined,
      }),
    );
    await waitUntilTableExists(waiter, table);
    await old.stop();

    makeImmediateTimersLate();
    const dynamo = await startLocalDynamo({ dataDir });
    try {
      const { Table } = await dynamo.client.send(new DescribeTableCommand(table));
      expect(Table?.TableStatus).toBe('ACTIVE');
      expect(Table?.GlobalSecondaryIndexes?.map((i) => i.IndexName)).toEqual(
        current.GlobalSecondaryIndexes?.map((i) => i.IndexName),
      );
    } finally {
      await dynamo.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

/**
 * The limiter's `LimitStore` over one DynamoDB table (on-demand, keys `pk`/`sk`, TTL attribute
 * `expires_at`). Items:
 *
 * | pk              | sk                  | attributes                                             |
 * |-----------------|---------------------|--------------------------------------------------------|
 * | `user#<tenant>#<sub>` | `usage#<yyyy-mm>` | `answers`, `searches`, `rate_minute`, `rate_count`,    |
 * |                 |                     | `tenant_month` (`<tenant>#<yyyy-mm>`), `plan`          |
 * | `tenant#<id>`   | `cost#<yyyy-mm-dd>` | `micro_usd`                                            |
 * | `global`        | `cost#<yyyy-mm-dd>` | `micro_usd`                                            |
 *
 * The minute rate counter lives in the user's monthly item, so one conditional `UpdateItem`
 * checks and consumes both the rate limit and the quota. DynamoDB cannot branch inside an
 * update, so there are two forms: "same minute" (`ADD rate_count 1` if `rate_minute >= :m AND
 * rate_count < :limit`) and "new minute" (`SET rate_minute = :m, rate_count = 1` if
 * `rate_minute < :m`). Their minute conditions are complementary, so exactly one can succeed for
 * a given item state, and both carry the quota condition: no request is ever over-admitted. A
 * per-process hint (the minute this process last admitted the user in) picks the form to try
 * first; a wrong guess costs one more call, and only for the first request a process sees from a
 * user in a minute. DynamoDB returns the old item of a failed condition, which tells a refusal
 * from a wrong guess; dynalite does not, so there a refusal costs one `GetItem` more. Every month boundary is also a minute boundary, so a new month's item starts
 * a new rate window exactly when it should.
 */
import {
  BatchGetItemCommand,
  ConditionalCheckFailedException,
  GetItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  DynamoDBClient,
  type CreateTableCommandInput,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import type { QuotaKind } from '../../core/limits/config';
import type {
  ConsumeRequest,
  ConsumeResult,
  LimitStore,
  Spend,
  TenantUserUsage,
  UserUsage,
} from '../../core/limits/store';

/** The TTL attribute: enable TTL on it so rate windows and daily counters expire. */
export const LIMITS_TTL_ATTRIBUTE = 'expires_at';

/** The table's definition (local/ creates it from this; the CDK stack must match it). */
export function limitsTableDefinition(tableName: string): CreateTableCommandInput {
  return {
    TableName: tableName,
    BillingMode: 'PAY_PER_REQUEST',
    AttributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'tenant_month', AttributeType: 'S' },
    ],
    KeySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    GlobalSecondaryIndexes: [
      {
        IndexName: TENANT_USAGE_INDEX,
        KeySchema: [{ AttributeName: 'tenant_month', KeyType: 'HASH' }],
        Projection: {
          ProjectionType: 'INCLUDE',
          NonKeyAttributes: ['pk', 'plan', 'answers', 'searches'],
        },
      },
    ],
  };
}

/**
 * The index that lists a tenant's users with counters in a month (partition key
 * `tenant_month` = `<tenantId>#<yyyy-mm>`), for the admin statistics.
 */
export const TENANT_USAGE_INDEX = 'tenant-usage';

/**
 * A DynamoDB client for the limiter: short timeouts and one retry, so that an unreachable table
 * costs a request about a second (then `onStoreUnavailable` decides) rather than the SDK
 * defaults' long back-off. Create it once per process.
 */
export function createLimitsDynamoDbClient(config: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 500, requestTimeout: 1000 },
    ...config,
  });
}

export interface DynamoLimitStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Users whose last admitted minute this process remembers (the first-form hint). */
  readonly hintCapacity?: number;
}

type Item = Record<string, AttributeValue>;
type Form = 'same' | 'new';

const num = (n: number): AttributeValue => ({ N: String(n) });
const str = (s: string): AttributeValue => ({ S: s });
const numberOf = (item: Item | undefined, name: string): number => Number(item?.[name]?.N ?? 0);

const userKey = (subject: string, month: string): Item => ({
  pk: str(`user#${subject}`),
  sk: str(`usage#${month}`),
});
const costKeys = (day: string, tenantId: string) => ({
  global: { pk: str('global'), sk: str(`cost#${day}`) },
  tenant: { pk: str(`tenant#${tenantId}`), sk: str(`cost#${day}`) },
});

/** Rounds of (first form, second form, read) before giving up under extreme contention. */
const MAX_ROUNDS = 3;

export function createDynamoLimitStore(options: DynamoLimitStoreOptions): LimitStore {
  const { client, tableName } = options;
  const hintCapacity = options.hintCapacity ?? 10_000;
  const lastMinute = new Map<string, string>();

  function remember(userId: string, minute: string): void {
    lastMinute.delete(userId);
    lastMinute.set(userId, minute);
    if (lastMinute.size > hintCapacity) {
      const oldest = lastMinute.keys().next().value;
      if (oldest !== undefined) lastMinute.delete(oldest);
    }
  }

  /** One conditional update; `ok: false` carries the old item when DynamoDB returns it. */
  async function update(
    req: ConsumeRequest,
    form: Form,
  ): Promise<{ ok: true; item: Item } | { ok: false; item: Item | undefined }> {
    const names: Record<string, string> = {
      '#rm': 'rate_minute',
      '#rc': 'rate_count',
      '#exp': LIMITS_TTL_ATTRIBUTE,
    };
    const values: Item = { ':m': str(req.minute), ':one': num(1), ':exp': num(req.expiresAt) };
    // Who the counters belong to, for the tenant-usage index.
    let owner = '';
    if (req.tenantId !== undefined) {
      names['#tm'] = 'tenant_month';
      values[':tm'] = str(`${req.tenantId}#${req.month}`);
      owner += ', #tm = :tm';
    }
    if (req.plan !== undefined) {
      names['#plan'] = 'plan';
      values[':plan'] = str(req.plan);
      owner += ', #plan = :plan';
    }
    let quotaCondition = '';
    if (req.quota) {
      names['#q'] = req.quota.kind;
      if (req.quota.limit !== null) {
        values[':ql'] = num(req.quota.limit);
        quotaCondition = ' AND (attribute_not_exists(#q) OR #q < :ql)';
      }
    }
    let updateExpression: string;
    let condition: string;
    if (form === 'same') {
      values[':rl'] = num(req.rateLimit);
      updateExpression = `SET #exp = :exp${owner} ADD #rc :one${req.quota ? ', #q :one' : ''}`;
      condition = `#rm >= :m AND #rc < :rl${quotaCondition}`;
    } else {
      updateExpression = `SET #rm = :m, #rc = :one, #exp = :exp${owner}${req.quota ? ' ADD #q :one' : ''}`;
      condition = `(attribute_not_exists(#rm) OR #rm < :m)${quotaCondition}`;
    }
    try {
      const out = await client.send(
        new UpdateItemCommand({
          TableName: tableName,
          Key: userKey(req.subject, req.month),
          UpdateExpression: updateExpression,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'UPDATED_NEW',
          // DynamoDB returns the item on failure, which classifies it without a read (dynalite
          // ignores this, hence the read fallback below).
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      return { ok: true, item: out.Attributes ?? {} };
    } catch (err) {
      if (err instanceof ConditionalCheckFailedException) return { ok: false, item: err.Item };
      throw err;
    }
  }

  /** Why a consume failed, from the item; `null` when it is admissible (the other form will do). */
  function classify(req: ConsumeRequest, item: Item | undefined): ConsumeResult | null {
    const minute = item?.rate_minute?.S;
    const rateCount =
      minute !== undefined && minute >= req.minute ? numberOf(item, 'rate_count') : 0;
    if (req.quota && req.quota.limit !== null) {
      const used = numberOf(item, req.quota.kind);
      if (used >= req.quota.limit) return { outcome: 'quota_exceeded', rateCount, quotaUsed: used };
    }
    if (rateCount >= req.rateLimit) return { outcome: 'rate_limited', rateCount };
    return null;
  }

  async function readUser(userId: string, month: string): Promise<Item | undefined> {
    const out = await client.send(
      new GetItemCommand({
        TableName: tableName,
        Key: userKey(userId, month),
        ConsistentRead: true,
      }),
    );
    return out.Item;
  }

  return {
    async consume(req) {
      // `rate_minute` only moves forward, so once this process has admitted the user in this
      // minute the "new minute" form cannot succeed: a failed "same minute" form is a refusal.
      const hinted = lastMinute.get(req.subject) === req.minute;
      const forms: Form[] = hinted ? ['same'] : ['new', 'same'];
      for (let round = 0; round < MAX_ROUNDS; round++) {
        for (const form of forms) {
          const attempt = await update(req, form);
          if (attempt.ok) {
            remember(req.subject, req.minute);
            return {
              outcome: 'admitted',
              rateCount: numberOf(attempt.item, 'rate_count'),
              quotaUsed: req.quota ? numberOf(attempt.item, req.quota.kind) : null,
            };
          }
          if (attempt.item) {
            const refusal = classify(req, attempt.item);
            if (refusal) return refusal;
          }
        }
        // Every form failed and nothing said why (or a refund changed the item in between).
        const refusal = classify(req, await readUser(req.subject, req.month));
        if (refusal) return refusal;
      }
      // The item kept changing under us: shed this request rather than loop.
      return { outcome: 'rate_limited', rateCount: req.rateLimit, transient: true };
    },

    async refund(userId, month, kind: QuotaKind) {
      try {
        await client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: userKey(userId, month),
            UpdateExpression: 'ADD #q :minus',
            ConditionExpression: '#q > :zero',
            ExpressionAttributeNames: { '#q': kind },
            ExpressionAttributeValues: { ':minus': num(-1), ':zero': num(0) },
          }),
        );
        return true;
      } catch (err) {
        if (err instanceof ConditionalCheckFailedException) return false;
        throw err;
      }
    },

    async readUsage(userId, month): Promise<UserUsage> {
      const item = await readUser(userId, month);
      return {
        answers: numberOf(item, 'answers'),
        searches: numberOf(item, 'searches'),
        rateMinute: item?.rate_minute?.S ?? null,
        rateCount: numberOf(item, 'rate_count'),
      };
    },

    async tenantUsage(tenantId, month): Promise<TenantUserUsage[]> {
      const users: TenantUserUsage[] = [];
      let start: Record<string, AttributeValue> | undefined;
      do {
        const out = await client.send(
          new QueryCommand({
            TableName: tableName,
            IndexName: TENANT_USAGE_INDEX,
            KeyConditionExpression: '#tm = :tm',
            ExpressionAttributeNames: { '#tm': 'tenant_month' },
            ExpressionAttributeValues: { ':tm': str(`${tenantId}#${month}`) },
            ...(start ? { ExclusiveStartKey: start } : {}),
          }),
        );
        for (const item of out.Items ?? []) {
          users.push({
            // `user#<tenant>#<user>`: the user id is what follows the tenant.
            userId: (item.pk?.S ?? '').replace(/^user#[^#]*#/, ''),
            plan: item.plan?.S ?? null,
            answers: numberOf(item, 'answers'),
            searches: numberOf(item, 'searches'),
          });
        }
        start = out.LastEvaluatedKey;
      } while (start);
      return users;
    },

    async readSpend(day, tenantId): Promise<Spend> {
      const keys = costKeys(day, tenantId);
      const found: Item[] = [];
      let pending: Item[] = [keys.global, keys.tenant];
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt === MAX_ROUNDS) throw new Error('BatchGetItem left keys unprocessed');
        const out = await client.send(
          new BatchGetItemCommand({
            RequestItems: { [tableName]: { Keys: pending, ConsistentRead: true } },
          }),
        );
        found.push(...(out.Responses?.[tableName] ?? []));
        pending = out.UnprocessedKeys?.[tableName]?.Keys ?? [];
      }
      const spendOf = (pk: string) =>
        numberOf(
          found.find((i) => i.pk?.S === pk),
          'micro_usd',
        );
      return { global: spendOf('global'), tenant: spendOf(`tenant#${tenantId}`) };
    },

    async addSpend(day, tenantId, microUsd, expiresAt): Promise<Spend> {
      const keys = costKeys(day, tenantId);
      const add = async (key: Item) => {
        const out = await client.send(
          new UpdateItemCommand({
            TableName: tableName,
            Key: key,
            UpdateExpression: 'SET #exp = :exp ADD #c :c',
            ExpressionAttributeNames: { '#c': 'micro_usd', '#exp': LIMITS_TTL_ATTRIBUTE },
            ExpressionAttributeValues: { ':c': num(microUsd), ':exp': num(expiresAt) },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
        return numberOf(out.Attributes, 'micro_usd');
      };
      const [global, tenant] = await Promise.all([add(keys.global), add(keys.tenant)]);
      return { global, tenant };
    },
  };
}

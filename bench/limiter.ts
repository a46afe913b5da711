/**
 * The limiter measured against one dynalite, in one run, with the real AWS SDK client:
 *  1. DynamoDB calls per admitted request (a middleware on the client counts every command):
 *     searches from one process, searches from two processes serving the same users, answers
 *     (admit + settle with token usage);
 *  2. over-admission when two processes race for one user's counters, 5,000 requests each:
 *     against a monthly quota of 3,000 and against the rate limit of 60 a minute.
 * The second process is a child forked from this file (`--child`); the clock is fixed so that
 * every request of a phase falls in the same minute.
 *
 *   node -r tsx/cjs bench/limiter.ts
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createDynamoLimitStore } from '../lambdas/adapters/dynamodb/limit-store';
import type { LimitsConfigInput } from '../lambdas/core/limits/config';
import { parseLimitsConfig } from '../lambdas/core/limits/config';
import { createLimiter } from '../lambdas/core/limits/limiter';
import { AppError } from '../lambdas/core/errors';
import { localDynamoClient, startLocalDynamo } from '../local/dynamodb';

/** One process's share of a phase. */
interface WorkloadSpec {
  readonly endpoint: string;
  readonly tableName: string;
  readonly config: LimitsConfigInput;
  /** The fixed clock (ISO 8601). */
  readonly now: string;
  readonly users: readonly string[];
  readonly requests: number;
  readonly concurrency: number;
  readonly route: string;
  /** Settle each admitted request with this token usage (answers). */
  readonly usage?: {
    readonly inputTokens: number;
    readonly outputTokens: number;
    readonly modelId: string;
  };
}

interface WorkloadResult {
  readonly requests: number;
  readonly admitted: number;
  readonly refused: Record<string, number>;
  /** SDK commands sent (retries of one command are not counted again). */
  readonly calls: number;
  readonly callsByCommand: Record<string, number>;
  readonly ms: number;
}

interface PhaseResult extends WorkloadResult {
  readonly name: string;
  readonly processes: number;
  readonly callsPerAdmitted: number;
}

export interface LimiterBenchResult {
  readonly callsPerAdmitted: {
    readonly searchOneProcess: PhaseResult;
    readonly searchTwoProcesses: PhaseResult;
    readonly answerOneProcess: PhaseResult;
  };
  readonly overAdmission: {
    readonly quota: PhaseResult & {
      readonly limit: number;
      readonly stored: number;
      readonly overAdmitted: number;
    };
    readonly rate: PhaseResult & {
      readonly limit: number;
      readonly stored: number;
      readonly overAdmitted: number;
    };
  };
}

/** Runs one process's share of a phase with its own client, store and limiter (one "container"). */
async function runWorkload(spec: WorkloadSpec): Promise<WorkloadResult> {
  const client = localDynamoClient(spec.endpoint);
  let calls = 0;
  const callsByCommand: Record<string, number> = {};
  client.middlewareStack.add(
    (next, context) => async (args) => {
      calls++;
      callsByCommand[context.commandName ?? '?'] =
        (callsByCommand[context.commandName ?? '?'] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'countDynamoCalls' },
  );
  const limiter = createLimiter({
    store: createDynamoLimitStore({ client, tableName: spec.tableName }),
    config: parseLimitsConfig(spec.config),
    clock: { now: () => new Date(spec.now) },
  });
  let admitted = 0;
  const refused: Record<string, number> = {};
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < spec.requests) {
      const i = next++;
      const userId = spec.users[i % spec.users.length] ?? 'bench';
      try {
        const admission = await limiter.admit(
          { userId, tenantId: 'bench', plan: null, isAdmin: false },
          spec.route,
        );
        admitted++;
        if (spec.usage) {
          await limiter.settle(admission, {
            status: 200,
            usage: spec.usage,
            modelId: spec.usage.modelId,
          });
        }
      } catch (err) {
        const code = err instanceof AppError ? err.code : String(err);
        refused[code] = (refused[code] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const ms = performance.now() - started;
  client.destroy();
  return { requests: spec.requests, admitted, refused, calls, callsByCommand, ms };
}

function sum(results: readonly WorkloadResult[], name: string): PhaseResult {
  const merge = (pick: (r: WorkloadResult) => Record<string, number>) => {
    const out: Record<string, number> = {};
    for (const r of results)
      for (const [k, v] of Object.entries(pick(r))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  const admitted = results.reduce((n, r) => n + r.admitted, 0);
  const calls = results.reduce((n, r) => n + r.calls, 0);
  return {
    name,
    processes: results.length,
    requests: results.reduce((n, r) => n + r.requests, 0),
    admitted,
    refused: merge((r) => r.refused),
    calls,
    callsByCommand: merge((r) => r.callsByCommand),
    ms: Math.max(...results.map((r) => r.ms)),
    callsPerAdmitted: admitted === 0 ? Number.NaN : calls / admitted,
  };
}

/** The child process: loads, says ready, runs the workloads it is sent until told to stop. */
function startChild(): Promise<{ run(spec: WorkloadSpec): Promise<WorkloadResult>; stop(): void }> {
  const child: ChildProcess = fork(__filename, ['--child'], {
    execArgv: ['-r', 'tsx/cjs'],
    stdio: 'inherit',
  });
  const pending: ((r: WorkloadResult) => void)[] = [];
  child.on('message', (message: { type: string; result?: WorkloadResult }) => {
    if (message.type === 'result' && message.result) pending.shift()?.(message.result);
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`bench child exited early (${code})`)));
    child.once('message', () => {
      child.removeAllListeners('exit');
      resolve({
        run: (spec) =>
          new Promise((done) => {
            pending.push(done);
            child.send({ type: 'run', spec });
          }),
        stop: () => child.send({ type: 'stop' }),
      });
    });
  });
}

/** Runs the benchmark, prints its report (as every part of `npm run bench` does) and returns it. */
export async function benchLimiter(): Promise<LimiterBenchResult> {
  const result = await measureLimiter();
  report(result);
  return result;
}

/** Runs every phase against a fresh dynalite and returns the measured figures. */
async function measureLimiter(): Promise<LimiterBenchResult> {
  const dynamo = await startLocalDynamo();
  const child = await startChild();
  const base = { endpoint: dynamo.endpoint, tableName: dynamo.tableName, concurrency: 16 };
  const users = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const both = async (spec: WorkloadSpec) => Promise.all([runWorkload(spec), child.run(spec)]);
  try {
    // 100 users x 10 searches, all under their limits.
    const searchOne = sum(
      [
        await runWorkload({
          ...base,
          config: {},
          now: '2030-01-15T10:00:00Z',
          users: users('one', 100),
          requests: 1000,
          route: 'search',
        }),
      ],
      'search, 1 process',
    );
    const searchTwo = sum(
      await both({
        ...base,
        config: {},
        now: '2030-01-15T10:00:00Z',
        users: users('two', 100),
        requests: 1000,
        route: 'search',
      }),
      'search, 2 processes, same users',
    );
    const answerOne = sum(
      [
        await runWorkload({
          ...base,
          config: {},
          now: '2030-01-15T10:00:00Z',
          users: users('answer', 50),
          requests: 200,
          route: 'answer',
          usage: {
            inputTokens: 1500,
            outputTokens: 300,
            modelId: 'bedrock/anthropic.claude-3-haiku-20240307-v1:0',
          },
        }),
      ],
      'answer (admit + settle), 1 process',
    );

    const store = createDynamoLimitStore({ client: dynamo.client, tableName: dynamo.tableName });
    const quotaLimit = 3000;
    const quotaPhase = sum(
      await both({
        ...base,
        concurrency: 32,
        config: { plans: { free: { searchesPerMonth: quotaLimit, requestsPerMinute: 1_000_000 } } },
        now: '2030-02-01T00:00:00Z',
        users: ['race-quota'],
        requests: 5000,
        route: 'search',
      }),
      `quota ${quotaLimit}, 2 processes x 5000, one user`,
    );
    const quotaStored = (await store.readUsage('race-quota', '2030-02')).searches;

    const rateLimit = 60;
    const ratePhase = sum(
      await both({
        ...base,
        concurrency: 32,
        config: {},
        now: '2030-02-01T00:00:30Z',
        users: ['race-rate'],
        requests: 5000,
        route: 'search',
      }),
      `rate ${rateLimit}/min, 2 processes x 5000, one user`,
    );
    const rateStored = (await store.readUsage('race-rate', '2030-02')).rateCount;

    return {
      callsPerAdmitted: {
        searchOneProcess: searchOne,
        searchTwoProcesses: searchTwo,
        answerOneProcess: answerOne,
      },
      overAdmission: {
        quota: {
          ...quotaPhase,
          limit: quotaLimit,
          stored: quotaStored,
          overAdmitted: Math.max(0, quotaPhase.admitted - quotaLimit),
        },
        rate: {
          ...ratePhase,
          limit: rateLimit,
          stored: rateStored,
          overAdmitted: Math.max(0, ratePhase.admitted - rateLimit),
        },
      },
    };
  } finally {
    child.stop();
    await dynamo.stop();
  }
}

function report(result: LimiterBenchResult): void {
  const line = (p: PhaseResult, per: 'admitted' | 'request') =>
    `${p.name.padEnd(44)} ${String(p.requests).padStart(6)} req ${String(p.admitted).padStart(6)} admitted ` +
    `${String(p.calls).padStart(6)} calls  ` +
    (per === 'admitted'
      ? `${p.callsPerAdmitted.toFixed(3)} calls/admitted`
      : `${(p.calls / p.requests).toFixed(3)} calls/request`) +
    `  ${Math.round(p.ms)} ms  ${JSON.stringify(p.callsByCommand)}` +
    (Object.keys(p.refused).length > 0 ? `  refused ${JSON.stringify(p.refused)}` : '');
  console.log('DynamoDB calls per admitted request (target 1 for a search)');
  for (const p of Object.values(result.callsPerAdmitted)) console.log('  ' + line(p, 'admitted'));
  console.log('Over-admission (target 0)');
  for (const p of Object.values(result.overAdmission)) {
    console.log('  ' + line(p, 'request'));
    console.log(
      `    limit ${p.limit}, admitted ${p.admitted}, counter in DynamoDB ${p.stored}, over-admitted ${p.overAdmitted}`,
    );
  }
}

if (require.main === module) {
  if (process.argv[2] === '--child') {
    process.on('message', (message: { type: string; spec?: WorkloadSpec }) => {
      if (message.type === 'stop') process.exit(0);
      if (message.type === 'run' && message.spec) {
        void runWorkload(message.spec).then((result) => process.send?.({ type: 'result', result }));
      }
    });
    process.send?.({ type: 'ready' });
  } else {
    benchLimiter().catch((err: unknown) => {
      console.error(err);
      process.exitCode = 1;
    });
  }
}

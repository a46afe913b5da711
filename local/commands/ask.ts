/** `groundwork ask "<question>" [--thread <id>]`: the answer, its confidence and its citations. */
import { parseArgs } from 'node:util';
import type { AnswerResponseBody } from '../../lambdas/rag-answer/schema';
import { callApi, openApiSession } from '../client';
import type { LocalEnv } from '../config';
import { DEMO_TENANT, DEMO_USER } from './start';

function formatAnswer(res: AnswerResponseBody): string {
  const lines = [
    res.answer.text,
    '',
    `confidence: ${res.answer.confidence ?? 'n/a'} (avg relevance ${res.context_used.avg_relevance})  model: ${res.answer.model}  status: ${res.status}`,
  ];
  // A source is listed under the numbers that cite it in the text ("[2]" may be the first listed).
  res.citations.forEach((c, i) =>
    lines.push(
      `[${c.markers?.length ? c.markers.join(', ') : i + 1}] ${c.source_title ?? c.source_uri}  ${c.source_uri}  (relevance ${c.relevance_score})`,
    ),
  );
  lines.push(`thread: ${res.thread_id}`);
  return lines.join('\n');
}

export async function askCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      thread: { type: 'string' },
      tenant: { type: 'string', default: DEMO_TENANT },
      user: { type: 'string', default: DEMO_USER },
      profile: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const question = positionals.join(' ').trim();
  if (!question) {
    console.error(
      'Usage: groundwork ask "<question>" [--thread <id>] [--tenant <id>] [--user <id>] [--json]',
    );
    return 2;
  }
  const session = await openApiSession(env, 'ask');
  try {
    const res = await callApi<AnswerResponseBody>(
      session,
      session.token(values.user, values.tenant),
      'POST',
      '/api/rag/answer',
      {
        query_text: question,
        ...(values.thread ? { thread_id: values.thread } : {}),
        ...(values.profile ? { profile: values.profile } : {}),
      },
    );
    console.log(values.json ? JSON.stringify(res, null, 2) : formatAnswer(res));
    return 0;
  } finally {
    await session.close();
  }
}

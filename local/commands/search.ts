/** `groundwork search "<question>"`: ranked results with titles, scores and snippets. */
import { parseArgs } from 'node:util';
import { callApi, openApiSession } from '../client';
import type { LocalEnv } from '../config';
import type { SearchResponseBody } from '../../lambdas/rag-search/schema';
import { DEMO_TENANT, DEMO_USER } from './start';

function formatSearch(res: SearchResponseBody): string {
  if (res.results.length === 0) return 'no results';
  return res.results
    .map(
      (r) =>
        `${String(r.rank).padStart(2)}. ${r.score.toFixed(3)}  ${r.source_title ?? r.source_uri}\n    ${r.snippet.replace(/\s+/g, ' ').trim()}\n    ${r.source_uri} [${r.start_offset}-${r.end_offset}]`,
    )
    .join('\n');
}

export async function searchCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string', default: DEMO_TENANT },
      user: { type: 'string', default: DEMO_USER },
      mode: { type: 'string', default: 'hybrid' },
      'top-k': { type: 'string', default: '5' },
      json: { type: 'boolean', default: false },
    },
  });
  const question = positionals.join(' ').trim();
  if (!question) {
    console.error(
      'Usage: groundwork search "<question>" [--tenant <id>] [--mode hybrid|vector|keyword] [--top-k N] [--json]',
    );
    return 2;
  }
  const session = await openApiSession(env, 'search');
  try {
    const res = await callApi<SearchResponseBody>(
      session,
      session.token(values.user, values.tenant),
      'POST',
      '/api/rag/search',
      {
        query_text: question,
        top_k: Number(values['top-k']),
        mode: values.mode,
      },
    );
    console.log(values.json ? JSON.stringify(res, null, 2) : formatSearch(res));
    return 0;
  } finally {
    await session.close();
  }
}

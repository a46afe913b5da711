/**
 * `groundwork harness "<question>" --tenant <id>`: what an answer to the question would be made
 * of in that tenant (the retrieved chunks with their scores, the context blocks with their
 * sources, the evidence with its citations, the confidence gate and the prompt preview), without
 * calling the LLM. It asks POST /api/admin/harness, as a tenant admin, of the running server or
 * of the embedded default started for the one command; the route runs the answer pipeline's own
 * preparation step (lambdas/core/answer/harness.ts).
 */
import { parseArgs } from 'node:util';
import type { HarnessResponseBody } from '../../lambdas/rag-answer/harness-schema';
import { callApi, openApiSession } from '../client';
import type { LocalEnv } from '../config';
import { DEMO_TENANT } from './start';

const USAGE =
  'Usage: groundwork harness "<question>" [--tenant <id>] [--user <id>] [--profile p] [--top-k N] [--source-type t]... [--json]';

/** What the answer route does after the preparation, in words. */
const NEXT_STEP: Readonly<Record<HarnessResponseBody['next_step'], string>> = {
  conversational: 'a greeting: the answer route replies without retrieval',
  generate_without_context: 'retrieval failed: the LLM would answer without context',
  insufficient_context: 'confidence is low: no LLM call, the closest passages are listed',
  extract: 'the extractive answerer would quote the context (no LLM configured)',
  generate: 'the LLM would be called with the prompt below',
};

const oneLine = (text: string, max: number) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

function formatHarness(res: HarnessResponseBody): string {
  const lines: string[] = [];
  lines.push(`question: ${res.query_text}`);
  if (res.standalone_query !== res.query_text) lines.push(`standalone: ${res.standalone_query}`);
  lines.push(`tenant: ${res.tenant_id}  profile: ${res.profile}`);
  const policy = res.source_types;
  lines.push(
    policy
      ? `source types: ${policy.mode}, ${policy.allowed ? `allowed ${policy.allowed.join(', ')}` : 'every type allowed'}` +
          `${policy.effective && policy.effective !== policy.allowed ? `, retrieved ${policy.effective.join(', ')}` : ''}` +
          `${policy.dropped.length > 0 ? `, dropped ${policy.dropped.join(', ')}` : ''}`
      : 'source types: retrieval did not run',
  );

  lines.push(
    '',
    `retrieved chunks (${res.chunks.length})${res.retrieval_failed ? ': retrieval failed' : ''}`,
  );
  for (const c of res.chunks) {
    lines.push(
      `${String(c.rank).padStart(3)}. score ${c.score.toFixed(3)}  fused ${c.fused_score.toFixed(3)}  ` +
        `keyword ${c.keyword_score.toFixed(3)}${c.rerank_score === undefined ? '' : `  rerank ${c.rerank_score.toFixed(3)}`}` +
        `  [${c.source_type}] ${c.source_title ?? c.source_uri}`,
      `     ${oneLine(c.text, 160)}`,
      `     ${c.source_uri} [${c.start_offset}-${c.end_offset}]  chunk ${c.chunk_id}`,
    );
  }

  lines.push('', `context blocks (${res.context_blocks.length})`);
  for (const b of res.context_blocks) {
    lines.push(
      `  [${b.index}] ${b.source_title ?? b.source_uri}  [${b.source_type}]  score ${b.score.toFixed(3)}  ${b.tokens} tokens`,
      `      source ${b.source_uri} (${b.source_id})`,
    );
    for (const p of b.passages)
      lines.push(
        `      ${p.start}-${p.end} (${p.chunk_ids.length} chunks): ${oneLine(p.text, 140)}`,
      );
  }

  lines.push('', `evidence (${res.evidence.length})`);
  for (const e of res.evidence) {
    lines.push(
      `  ${e.marker} ${e.citation.source_title ?? e.citation.source_uri}  relevance ${e.citation.relevance_score}  chunks ${e.chunk_ids.join(', ')}`,
      `      ${e.citation.source_uri}: "${oneLine(e.citation.snippet, 120)}"`,
    );
  }

  lines.push(
    '',
    `confidence: ${res.confidence.level ?? 'n/a'} (avg relevance ${res.confidence.avg_relevance}, ${res.confidence.evidence_chunks} evidence chunks)`,
    `next: ${res.next_step}: ${NEXT_STEP[res.next_step]}`,
    '',
    'prompt preview',
    '-'.repeat(72),
    res.prompt.rendered,
    '-'.repeat(72),
  );
  return lines.join('\n');
}

export async function harnessCommand(
  args: string[],
  env: LocalEnv & { dataDir: string },
): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      tenant: { type: 'string', default: DEMO_TENANT },
      user: { type: 'string', default: 'harness-admin' },
      profile: { type: 'string' },
      'top-k': { type: 'string' },
      'source-type': { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
    },
  });
  const question = positionals.join(' ').trim();
  const topK = values['top-k'] === undefined ? undefined : Number(values['top-k']);
  if (!question || (topK !== undefined && !Number.isInteger(topK))) {
    console.error(USAGE);
    return 2;
  }
  const session = await openApiSession(env, 'harness');
  try {
    const res = await callApi<HarnessResponseBody>(
      session,
      session.token(values.user, values.tenant, { admin: true }),
      'POST',
      '/api/admin/harness',
      {
        query_text: question,
        ...(values.profile ? { profile: values.profile } : {}),
        ...(topK !== undefined ? { top_k: topK } : {}),
        ...(values['source-type'] ? { filters: { source_type: values['source-type'] } } : {}),
      },
    );
    console.log(values.json ? JSON.stringify(res, null, 2) : formatHarness(res));
    return 0;
  } finally {
    await session.close();
  }
}

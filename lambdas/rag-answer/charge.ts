/** What an answer costs its caller, for every route that answers (POST /api/rag/answer, the chat route). */
import type { AnswerResult } from '../core/answer/answer';
import type { Admission } from '../core/limits/limiter';

/**
 * What an answer costs its caller: the LLM's token usage is recorded for the daily spend, and a
 * greeting answered without retrieval gives its quota unit back.
 */
export function chargeAnswer(
  result: AnswerResult,
  admission: Pick<Admission, 'recordUsage' | 'waiveQuota'> | undefined,
): void {
  if (!admission) return;
  if (result.usage && result.answer.model) admission.recordUsage(result.usage, result.answer.model);
  if (result.flags.conversational) admission.waiveQuota();
}

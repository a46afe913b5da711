/**
 * The answer's conversation steps: the thread it belongs to, the thread's history, the question
 * stored with its vector (the caller's memory) and the answer stored with its model, tokens,
 * latency and flags. Storing degrades: a question or an answer that cannot be stored is logged
 * and counted (`PersistErrors`), and the caller still gets the answer.
 */
import { randomUUID } from 'node:crypto';
import { NotFoundError } from '../errors';
import type { AnswerRequest, PipelineDeps } from './answer';
import type { NewAssistantMessage, Owner, ThreadRecord } from './conversations';
import type { ChatMessage } from './llm';
import type { Timeline } from './timeline';

/** Messages of the thread's history read for a follow-up and the prompt. */
const HISTORY_MESSAGES = 10;

/**
 * The thread the question belongs to: the caller's `threadId` (a 404 when it is missing or
 * another owner's, unless `missingThread` says what to open instead), else a new thread titled
 * by the question.
 */
export async function openThread(
  deps: PipelineDeps,
  timeline: Timeline,
  identity: Owner,
  request: AnswerRequest,
  question: string,
): Promise<ThreadRecord> {
  const { conversations } = deps;
  const title = question.replace(/\s+/g, ' ').slice(0, 80);
  return timeline.step(
    'thread',
    async () => {
      if (!request.threadId) return conversations.createThread(identity, title);
      const openOrCreate = async (id: string) =>
        (await conversations.openThread(identity, id, title)) ??
        // Created at the same moment by another request of the same owner.
        (await conversations.getThread(identity, id));
      const createAs = request.missingThread?.createAs ?? [];
      // The caller's thread `threadId`, unless opening (or starting) it comes first anyway.
      let found =
        createAs[0] === request.threadId
          ? null
          : await conversations.getThread(identity, request.threadId);
      for (const id of createAs) found ??= await openOrCreate(id);
      if (!found) throw new NotFoundError('thread_id: no such thread');
      return found;
    },
    (t) => ({ id: t.id }),
  );
}

/** The thread's last messages, oldest first: none for a new thread or when they cannot be read. */
export async function threadHistory(
  deps: PipelineDeps,
  identity: Owner,
  request: AnswerRequest,
  threadId: string,
): Promise<ChatMessage[]> {
  if (!request.threadId) return [];
  const messages = await deps.conversations
    .messages(identity, threadId, HISTORY_MESSAGES)
    .catch((err: unknown) => {
      deps.log.error('could not read thread history', { err });
      return [];
    });
  return messages.map((m) => ({ role: m.role, content: m.content }));
}

/** The question's vector, stored with it and reused by retrieval; null when embedding fails. */
async function embedQuestion(
  deps: PipelineDeps,
  timeline: Timeline,
  question: string,
): Promise<number[] | null> {
  return timeline
    .step('embed_question', async () => (await deps.embedder.embed([question], 'query'))[0] ?? null)
    .catch((err: unknown) => {
      deps.log.error('question embedding failed', { err });
      deps.metrics.count('EmbeddingErrors');
      return null;
    });
}

/**
 * Stores the question with its vector, for the caller's memory (a greeting, which is not
 * retrieved for, is not embedded); a failure to store it is logged.
 */
export async function recordQuestion(
  deps: PipelineDeps,
  timeline: Timeline,
  identity: Owner,
  threadId: string,
  question: string,
  embed: boolean,
): Promise<{ readonly id: string; readonly embedding: number[] | null }> {
  const id = randomUUID();
  const embedding = embed ? await embedQuestion(deps, timeline, question) : null;
  await timeline
    .step('store_question', () =>
      deps.conversations.addUserMessage(identity, threadId, { id, content: question, embedding }),
    )
    .catch((err: unknown) => {
      deps.log.error('could not store the question', { err });
      deps.metrics.count('PersistErrors');
    });
  return { id, embedding };
}

/**
 * Stores the answer, eligible for training when the caller consented (a consent that cannot be
 * read is no consent); a failure is logged and the caller still gets the answer.
 */
export async function storeAnswer(
  deps: PipelineDeps,
  timeline: Timeline,
  identity: Owner,
  threadId: string,
  message: Omit<NewAssistantMessage, 'trainingEligible'>,
): Promise<void> {
  const trainingEligible = await deps.conversations.trainingConsent(identity).catch(() => false);
  await timeline
    .step('store_answer', () =>
      deps.conversations.addAssistantMessage(identity, threadId, { ...message, trainingEligible }),
    )
    .catch((err: unknown) => {
      deps.log.error('could not store the answer; answering anyway', { err });
      deps.metrics.count('PersistErrors');
    });
}

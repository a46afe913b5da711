/** Ports for what the answer pipeline remembers: threads, messages, prompt configs, consent. */
import type { ConfidenceLevel } from './confidence';

export interface Owner {
  readonly tenantId: string;
  readonly userId: string;
}

export interface ThreadRecord {
  readonly id: string;
  readonly title: string;
  readonly status: 'active' | 'archived';
  readonly createdAt: Date;
  readonly updatedAt: Date;
  /** Messages appended to the thread, user and assistant (kept by the store as they are appended). */
  readonly messageCount: number;
  /** When its latest message was appended; its creation time until then. */
  readonly lastMessageAt: Date;
}

export interface AnswerFlags {
  readonly used_rag: boolean;
  readonly fallback_to_generic: boolean;
  readonly insufficient_context: boolean;
  readonly conversational: boolean;
  readonly retrieval_failed: boolean;
}

export interface StoredCitation {
  readonly source_id: string;
  readonly source_type: string;
  readonly source_title: string | null;
  readonly source_uri: string;
  readonly snippet: string;
  readonly relevance_score: number;
  readonly meta: Readonly<Record<string, unknown>>;
  readonly sentences: { start: number; end: number }[];
  /**
   * The numbers in the answer's text that cite this source ("[2]"); none for the closest sources
   * a refusal lists. Absent from answers stored before citations kept them.
   */
  readonly markers?: number[];
}

export interface MessageRecord {
  readonly id: string;
  readonly threadId: string;
  readonly role: 'user' | 'assistant';
  readonly content: string;
  readonly createdAt: Date;
  readonly profile: string | null;
  readonly confidence: ConfidenceLevel | null;
  readonly avgRelevance: number | null;
  readonly citations: readonly StoredCitation[];
  readonly modelId: string | null;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly latencyMs: number | null;
  readonly flags: Partial<AnswerFlags>;
  readonly feedback: { rating: string; comment: string | null } | null;
}

export interface NewAssistantMessage {
  readonly id: string;
  readonly content: string;
  readonly standaloneQuery: string | null;
  readonly profile: string;
  readonly confidence: ConfidenceLevel | null;
  readonly avgRelevance: number | null;
  readonly citations: readonly StoredCitation[];
  readonly modelId: string;
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
  readonly latencyMs: number;
  readonly flags: AnswerFlags;
  readonly prompt: string | null;
  readonly trainingEligible: boolean;
}

/**
 * Conversations. Deletion is soft: a deleted thread and its messages keep their rows, stamped
 * `deleted_at`, and no read of this port returns or retrieves them (thread list and view,
 * memory, feedback) nor does the training export or the admin review
 * (docs/decisions/0142-thread-counters-and-soft-deletion.md).
 */
export interface ConversationStore {
  createThread(owner: Owner, title: string): Promise<ThreadRecord>;
  /**
   * The owner's thread `threadId` (a UUID the caller chose), created with `title` if no thread
   * has that id yet; null if another owner's thread has it, or the owner's deleted one (callers
   * answer 404).
   */
  openThread(owner: Owner, threadId: string, title: string): Promise<ThreadRecord | null>;
  /**
   * The thread if it exists, is not deleted and belongs to `owner`, else null (callers answer
   * 404 either way).
   */
  getThread(owner: Owner, threadId: string): Promise<ThreadRecord | null>;
  /** The owner's threads, most recent `lastMessageAt` first. */
  listThreads(
    owner: Owner,
    options: { limit: number; includeArchived: boolean },
  ): Promise<ThreadRecord[]>;
  /**
   * Deletes an owned thread and its messages softly, in one transaction; the deletion time, or
   * null if there is no such live thread of `owner`.
   */
  deleteThread(owner: Owner, threadId: string): Promise<Date | null>;
  /** Messages of an owned thread, oldest first; the last `limit` when given. */
  messages(owner: Owner, threadId: string, limit?: number): Promise<MessageRecord[]>;
  addUserMessage(
    owner: Owner,
    threadId: string,
    message: { id: string; content: string; embedding: readonly number[] | null },
  ): Promise<void>;
  addAssistantMessage(owner: Owner, threadId: string, message: NewAssistantMessage): Promise<void>;
  /** The owner's own past user messages most similar to `embedding`, best first. */
  similarMessages(
    owner: Owner,
    embedding: readonly number[],
    limit: number,
    excludeMessageId: string,
  ): Promise<{ content: string; score: number }[]>;
  /**
   * Upserts the owner's rating of a live assistant message in one of their threads, with an
   * optional free-text comment; false if not found.
   */
  setFeedback(
    owner: Owner,
    messageId: string,
    rating: 'positive' | 'negative' | 'neutral',
    comment: string | null,
  ): Promise<boolean>;
  trainingConsent(owner: Owner): Promise<boolean>;
}

/** What a profile asks of retrieval and of its own selection (`prompt_configs.constraints`). */
export interface ProfileConstraints {
  /** Hits kept for the context. */
  readonly top_k?: number;
  /** Candidates ranked before `top_k` are kept, for the ordering policies to choose from. */
  readonly candidates?: number;
  /** The caller's own documents first among the candidates (retrieval/owner-first.ts). */
  readonly owner_first?: boolean;
  /** Only documents whose source date is at most this many days old, unless the request sets `date_from`. */
  readonly max_age_days?: number;
  readonly allowed_source_types?: string[];
  /**
   * Phrases that select the profile when a request names none; `a & b` needs both parts (see
   * chooseProfile).
   */
  readonly keywords?: string[];
  /**
   * The family the profile is chosen within: a request chooses among one family's profiles
   * (those without a family when it names none).
   */
  readonly family?: string;
  /** Detection order within the family, lowest first (default 100; then by name). */
  readonly priority?: number;
  /** The family's profile when no other one's keywords occur. */
  readonly fallback?: boolean;
}

export interface PromptConfig {
  readonly id: string;
  readonly name: string;
  readonly profile: string;
  readonly version: number;
  readonly instructions: string;
  readonly constraints: ProfileConstraints;
  readonly active: boolean;
}

export interface PromptStore {
  /**
   * The active version of every profile (including `_system`): the tenant's own where it has
   * activated one, else the built-in default. Without a tenant, the defaults only.
   */
  activeConfigs(tenantId?: string): Promise<PromptConfig[]>;
}

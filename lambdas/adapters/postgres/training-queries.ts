/** Consent and export of training data: answers of opted-in tenants or users, with their feedback. */
import type { Database } from './database';

/** Records consent for a whole tenant (`userId` '*') or one user. */
export async function setTrainingConsent(
  db: Database,
  tenantId: string,
  userId: string,
  optedIn: boolean,
): Promise<void> {
  await db.query(
    `INSERT INTO training_consent (tenant_id, user_id, opted_in) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id, user_id) DO UPDATE SET opted_in = EXCLUDED.opted_in, updated_at = now()`,
    [tenantId, userId, optedIn],
  );
}

export interface TrainingExample {
  message_id: string;
  tenant_id: string;
  user_id: string;
  created_at: Date;
  question: string | null;
  prompt: string;
  answer: string;
  model_id: string | null;
  confidence: string | null;
  sources: unknown;
  feedback: { rating: string; comment: string | null } | null;
}

/**
 * Training-eligible answers (optionally of one tenant), oldest first, with their question and
 * feedback; soft-deleted messages are left out.
 */
export async function trainingExamples(
  db: Database,
  tenantId: string | null,
): Promise<TrainingExample[]> {
  const { rows } = await db.query<TrainingExample>(
    `SELECT a.id AS message_id, a.tenant_id, a.user_id, a.created_at,
            (SELECT q.content FROM messages q
              WHERE q.thread_id = a.thread_id AND q.role = 'user' AND q.created_at <= a.created_at
                AND q.deleted_at IS NULL
              ORDER BY q.created_at DESC LIMIT 1) AS question,
            a.prompt, a.content AS answer, a.model_id, a.confidence, a.sources,
            CASE WHEN f.rating IS NULL THEN NULL ELSE jsonb_build_object('rating', f.rating, 'comment', f.comment) END AS feedback
       FROM messages a
       LEFT JOIN feedback f ON f.message_id = a.id AND f.user_id = a.user_id
      WHERE a.role = 'assistant' AND a.training_eligible AND a.prompt IS NOT NULL AND a.deleted_at IS NULL
        AND ($1::text IS NULL OR a.tenant_id = $1)
      ORDER BY a.created_at`,
    [tenantId],
  );
  return rows;
}

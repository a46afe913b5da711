/**
 * POST /api/chat/conversations/{conversationId}/messages (seed 003, the chat with memory): its
 * request and its Server-Sent Events, exactly as the seed writes them.
 */
import * as z from '../core/zod';

/** The seed's bound on a chat message (`userMessage`: 1 to 10,000 characters). */
const MAX_CHAT_MESSAGE_LENGTH = 10_000;

export const chatMessageRequestSchema = z.strictObject({
  content: z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_CHAT_MESSAGE_LENGTH)),
});
export type ChatMessageRequestBody = z.infer<typeof chatMessageRequestSchema>;

/**
 * A conversation id as a client names it: a thread id (a UUID), or the client's own id for the
 * conversation (the seed's example is `abc-123`), from which the caller's thread id is derived.
 */
export const conversationIdSchema = z.union([
  z.uuid(),
  z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/)),
]);

/**
 * One event of the stream: `{"type":"chunk","text":...}` (answer text as it is produced),
 * `{"type":"complete","messageId":...}` (the last event: the id of the stored answer) or
 * `{"type":"error","error":{...}}` (a failure after the first event, when the status is sent).
 */
export type ChatEvent =
  | { readonly type: 'chunk'; readonly text: string }
  | { readonly type: 'complete'; readonly messageId: string }
  | {
      readonly type: 'error';
      readonly error: {
        readonly code: string;
        readonly message: string;
        readonly retryable: boolean;
        readonly details?: unknown;
      };
    };

/**
 * POST /api/chat/conversations/{conversationId}/messages (seed 003, the chat with memory): its
 * request and its Server-Sent Events, exactly as the seed writes them.
 */
import * as z from '../core/zod';

/** The seed's bound on a chat message (`userMessage`: 1 to 10,000 characters). */
export const MAX_CHAT_MESSAGE_LENGTH = 10_000;

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

/** `data: {"type":"chunk","text":...}`: answer text as it is produced. */
export const chatChunkEventSchema = z.object({ type: z.literal('chunk'), text: z.string() });
/** `data: {"type":"complete","messageId":...}`: the last event; the id of the stored answer. */
export const chatCompleteEventSchema = z.object({
  type: z.literal('complete'),
  messageId: z.string(),
});
/** `data: {"type":"error","error":{...}}`: a failure after the first event (the status is sent). */
export const chatErrorEventSchema = z.object({
  type: z.literal('error'),
  error: z.object({
    code: z.string(),
    message: z.string(),
    retryable: z.boolean(),
    details: z.optional(z.unknown()),
  }),
});
export const chatEventSchema = z.union([
  chatChunkEventSchema,
  chatCompleteEventSchema,
  chatErrorEventSchema,
]);
export type ChatEvent = z.infer<typeof chatEventSchema>;

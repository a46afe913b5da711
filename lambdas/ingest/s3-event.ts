/**
 * The shape of an SQS message body carrying an S3 event notification (or S3's test event,
 * sent once when a notification is configured, which we ignore).
 */
import * as z from '../core/zod';

const s3EventRecordSchema = z.object({
  eventName: z.string(),
  s3: z.object({
    bucket: z.object({ name: z.string().check(z.minLength(1)) }),
    object: z.object({
      key: z.string().check(z.minLength(1)),
      size: z.optional(z.number()),
      sequencer: z.optional(z.string()),
    }),
  }),
});

/** S3 sends this once when a notification is configured; it names no object. */
export const s3TestEventSchema = z.object({ Event: z.literal('s3:TestEvent') });

export const s3EventMessageSchema = z.object({ Records: z.array(s3EventRecordSchema) });

/** What the schedule sends to run the lease sweep (lib/constructs/ingest-recovery.ts). */
export const leaseSweepEventSchema = z.object({ groundwork: z.literal('lease-sweep') });

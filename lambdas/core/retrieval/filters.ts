/**
 * Search filters as the API accepts them, including a metadata filter language in the style of
 * Bedrock Knowledge Bases (`equals`, `in`, `andAll`, ...). The schema is the contract: anything
 * it rejects (an unknown operator, a malformed value) is a 422, and anything it accepts compiles
 * to parameterised SQL in the search adapter.
 */
import * as z from 'zod';

const key = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9_.:-]+$/, 'metadata keys use letters, digits and _ . : -');
const scalar = z.union([z.string().max(1000), z.number(), z.boolean()]);
const comparable = z.union([z.string().max(1000), z.number()]);
const comparison = <V extends z.ZodType>(value: V) => z.object({ key, value }).strict();

export type MetadataFilter =
  | { equals: { key: string; value: string | number | boolean } }
  | { notEquals: { key: string; value: string | number | boolean } }
  | { in: { key: string; value: (string | number | boolean)[] } }
  | { notIn: { key: string; value: (string | number | boolean)[] } }
  | { greaterThan: { key: string; value: string | number } }
  | { greaterThanOrEquals: { key: string; value: string | number } }
  | { lessThan: { key: string; value: string | number } }
  | { lessThanOrEquals: { key: string; value: string | number } }
  | { startsWith: { key: string; value: string } }
  | { andAll: MetadataFilter[] }
  | { orAll: MetadataFilter[] };

/** One operator per object; nested up to the depth the schema is applied to. */
export const metadataFilterSchema: z.ZodType<MetadataFilter> = z.lazy(() =>
  z.union(
    [
      z.object({ equals: comparison(scalar) }).strict(),
      z.object({ notEquals: comparison(scalar) }).strict(),
      z.object({ in: comparison(z.array(scalar).min(1).max(100)) }).strict(),
      z.object({ notIn: comparison(z.array(scalar).min(1).max(100)) }).strict(),
      z.object({ greaterThan: comparison(comparable) }).strict(),
      z.object({ greaterThanOrEquals: comparison(comparable) }).strict(),
      z.object({ lessThan: comparison(comparable) }).strict(),
      z.object({ lessThanOrEquals: comparison(comparable) }).strict(),
      z.object({ startsWith: comparison(z.string().min(1).max(1000)) }).strict(),
      z.object({ andAll: z.array(metadataFilterSchema).min(1).max(20) }).strict(),
      z.object({ orAll: z.array(metadataFilterSchema).min(1).max(20) }).strict(),
    ],
    {
      error:
        'unknown or malformed metadata filter: use one of equals, notEquals, in, notIn, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, startsWith, andAll, orAll',
    },
  ),
);

const oneOrMany = z
  .union([z.string().min(1).max(64), z.array(z.string().min(1).max(64)).min(1).max(50)])
  .transform((v) => (Array.isArray(v) ? v : [v]));

export const searchFiltersSchema = z
  .object({
    source_type: oneOrMany.optional(),
    lang: oneOrMany.optional(),
    org_id: z.string().min(1).max(64).optional(),
    date_from: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
    date_to: z.iso.datetime({ offset: true }).or(z.iso.date()).optional(),
    document_ids: z.array(z.uuid()).min(1).max(100).optional(),
    metadata: metadataFilterSchema.optional(),
  })
  .strict();
export type SearchFilters = z.infer<typeof searchFiltersSchema>;

/** Depth of nested andAll/orAll; deeper filters are rejected to bound the generated SQL. */
export function filterDepth(filter: MetadataFilter): number {
  if ('andAll' in filter) return 1 + Math.max(...filter.andAll.map(filterDepth));
  if ('orAll' in filter) return 1 + Math.max(...filter.orAll.map(filterDepth));
  return 1;
}

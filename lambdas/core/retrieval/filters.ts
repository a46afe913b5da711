/**
 * Search filters as the API accepts them, including a metadata filter language in the style of
 * Bedrock Knowledge Bases (`equals`, `in`, `andAll`, ...). The schema is the contract: anything
 * it rejects (an unknown operator, a malformed value) is a 422, and anything it accepts compiles
 * to parameterised SQL in the search adapter.
 */
import * as z from '../zod';

const key = z
  .string()
  .check(
    z.minLength(1),
    z.maxLength(100),
    z.regex(/^[A-Za-z0-9_.:-]+$/, 'metadata keys use letters, digits and _ . : -'),
  );
const scalar = z.union([z.string().check(z.maxLength(1000)), z.number(), z.boolean()]);
const comparable = z.union([z.string().check(z.maxLength(1000)), z.number()]);
const comparison = <V extends z.ZodMiniType>(value: V) => z.strictObject({ key, value });
/** The values of `in` and `notIn`. */
const scalars = () => z.array(scalar).check(z.minLength(1), z.maxLength(100));
/** The operands of `andAll` and `orAll` (built inside the lazy schema, which they refer to). */
const nested = () => z.array(metadataFilterSchema).check(z.minLength(1), z.maxLength(20));

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
export const metadataFilterSchema: z.ZodMiniType<MetadataFilter> = z.lazy(() =>
  z.union(
    [
      z.strictObject({ equals: comparison(scalar) }),
      z.strictObject({ notEquals: comparison(scalar) }),
      z.strictObject({ in: comparison(scalars()) }),
      z.strictObject({ notIn: comparison(scalars()) }),
      z.strictObject({ greaterThan: comparison(comparable) }),
      z.strictObject({ greaterThanOrEquals: comparison(comparable) }),
      z.strictObject({ lessThan: comparison(comparable) }),
      z.strictObject({ lessThanOrEquals: comparison(comparable) }),
      z.strictObject({
        startsWith: comparison(z.string().check(z.minLength(1), z.maxLength(1000))),
      }),
      z.strictObject({ andAll: nested() }),
      z.strictObject({ orAll: nested() }),
    ],
    {
      error:
        'unknown or malformed metadata filter: use one of equals, notEquals, in, notIn, greaterThan, greaterThanOrEquals, lessThan, lessThanOrEquals, startsWith, andAll, orAll',
    },
  ),
);

const shortString = () => z.string().check(z.minLength(1), z.maxLength(64));
const oneOrMany = z.pipe(
  z.union([shortString(), z.array(shortString()).check(z.minLength(1), z.maxLength(50))]),
  z.transform((v: string | string[]) => (Array.isArray(v) ? v : [v])),
);
/** An ISO 8601 date-time with an offset, or a plain date. */
const isoDateOrDateTime = () => z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

export const searchFiltersSchema = z.strictObject({
  source_type: z.optional(oneOrMany),
  lang: z.optional(oneOrMany),
  org_id: z.optional(shortString()),
  date_from: z.optional(isoDateOrDateTime()),
  date_to: z.optional(isoDateOrDateTime()),
  document_ids: z.optional(z.array(z.uuid()).check(z.minLength(1), z.maxLength(100))),
  metadata: z.optional(metadataFilterSchema),
});
export type SearchFilters = z.infer<typeof searchFiltersSchema>;

/** Depth of nested andAll/orAll; deeper filters are rejected to bound the generated SQL. */
export function filterDepth(filter: MetadataFilter): number {
  if ('andAll' in filter) return 1 + Math.max(...filter.andAll.map(filterDepth));
  if ('orAll' in filter) return 1 + Math.max(...filter.orAll.map(filterDepth));
  return 1;
}

/** How deep `andAll` / `orAll` may nest in a request's metadata filter. */
export const MAX_FILTER_DEPTH = 5;

/**
 * The check a request schema with `filters` adds: its metadata filter nests at most
 * MAX_FILTER_DEPTH levels (a 422 at `filters.metadata` otherwise).
 */
export const filterDepthCheck = z.refine<{ filters: SearchFilters }>(
  (request) =>
    !request.filters.metadata || filterDepth(request.filters.metadata) <= MAX_FILTER_DEPTH,
  {
    message: `metadata filters nest at most ${MAX_FILTER_DEPTH} levels deep`,
    path: ['filters', 'metadata'],
  },
);

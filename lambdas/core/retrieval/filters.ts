/**
 * Search filters as the API accepts them, including a metadata filter language in the style of
 * Bedrock Knowledge Bases (`equals`, `in`, `andAll`, ...). The schema is the contract: anything
 * it rejects (an unknown operator, a malformed value) is a 422, and anything it accepts compiles
 * to parameterised SQL in the search adapter.
 *
 * A metadata filter is bounded before it is parsed: at most MAX_FILTER_DEPTH levels of `andAll` /
 * `orAll` and MAX_FILTER_CONDITIONS operators in all, counted by an iterative walk of the raw
 * value, so that neither the recursive schema nor the SQL compiler ever sees a larger one (each
 * operator costs at most two bind parameters).
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
/** One key equal to one value: the operand of `equals`, and a declared filter index's value. */
export const metadataEqualsSchema = comparison(scalar);
export type MetadataEquals = z.infer<typeof metadataEqualsSchema>;
/** How many values the list of `in` and `notIn` may hold. */
const MAX_FILTER_VALUES = 100;
/** The values of `in` and `notIn`. */
const scalars = () =>
  z
    .array(scalar)
    .check(
      z.minLength(1, 'at least 1 value'),
      z.maxLength(MAX_FILTER_VALUES, `at most ${MAX_FILTER_VALUES} values`),
    );
/** The operands of `andAll` and `orAll` (built inside the lazy schema, which they refer to). */
const nested = () => z.array(metadataFilterNodeSchema).check(z.minLength(1), z.maxLength(20));

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

/**
 * How many levels deep a request's metadata filter may be, its comparisons included: `andAll` /
 * `orAll` nest at most one level fewer around a comparison.
 */
export const MAX_FILTER_DEPTH = 5;

/** How many operators (comparisons, `andAll` and `orAll` alike) one metadata filter may hold. */
export const MAX_FILTER_CONDITIONS = 100;

/**
 * Whether a raw (unparsed) metadata filter stays within MAX_FILTER_DEPTH and
 * MAX_FILTER_CONDITIONS: a message saying which it exceeds, or null. Iterative, and it stops at
 * the first bound crossed, so a filter nested a million levels deep costs a few steps.
 */
function filterBudgetExceeded(raw: unknown): string | null {
  const stack: { node: unknown; depth: number }[] = [{ node: raw, depth: 1 }];
  let operators = 0;
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue; // the schema refuses it
    if (++operators > MAX_FILTER_CONDITIONS)
      return `metadata filters hold at most ${MAX_FILTER_CONDITIONS} operators`;
    for (const op of ['andAll', 'orAll'] as const) {
      const operands = (node as Record<string, unknown>)[op];
      if (!Array.isArray(operands)) continue;
      if (depth + 1 > MAX_FILTER_DEPTH && operands.length > 0)
        return `metadata filters are at most ${MAX_FILTER_DEPTH} levels deep, comparisons included (andAll / orAll nest at most ${MAX_FILTER_DEPTH - 1} levels)`;
      for (const child of operands) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return null;
}

/**
 * The operators, in the order of the union's branches in {@link metadataFilterNodeSchema}
 * (http-handler.test.ts checks that each malformed operator is judged by its own branch).
 */
export const FILTER_OPERATORS = [
  'equals',
  'notEquals',
  'in',
  'notIn',
  'greaterThan',
  'greaterThanOrEquals',
  'lessThan',
  'lessThanOrEquals',
  'startsWith',
  'andAll',
  'orAll',
] as const;

const UNKNOWN_FILTER = `unknown or malformed metadata filter: use one of ${FILTER_OPERATORS.join(', ')}`;
/** The start of a message {@link describeFilterIssue} made: an operator's path. */
const OPERATOR_PATH = new RegExp(`^(${FILTER_OPERATORS.join('|')})[.:]`);

/**
 * The message of a metadata filter no branch of the union accepts. A filter that names exactly one
 * known operator is judged by that operator's branch alone, so the caller reads what is wrong with
 * it (`in.value: at most 100 values`), not that every other operator is missing; a nested filter's
 * message extends the path (`andAll.0.in.value: ...`). Anything else is an unknown filter.
 */
function describeFilterIssue(issue: {
  readonly input?: unknown;
  readonly errors?: readonly (readonly z.core.$ZodIssue[])[];
}): string {
  const input = issue.input;
  const keys =
    typeof input === 'object' && input !== null && !Array.isArray(input) ? Object.keys(input) : [];
  const branch = keys.length === 1 ? FILTER_OPERATORS.indexOf(keys[0] as never) : -1;
  const first = branch === -1 ? undefined : issue.errors?.[branch]?.[0];
  if (!first) return UNKNOWN_FILTER;
  const path = first.path.map(String).join('.');
  if (path === '') return first.message;
  // A nested filter's message made here starts with its own path, which continues this one.
  return OPERATOR_PATH.test(first.message)
    ? `${path}.${first.message}`
    : `${path}: ${first.message}`;
}

/** One operator per object, nested; bounded by {@link metadataFilterSchema}, which wraps it. */
export const metadataFilterNodeSchema: z.ZodMiniType<MetadataFilter> = z.lazy(() =>
  z.union(
    [
      z.strictObject({ equals: metadataEqualsSchema }),
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
    { error: describeFilterIssue },
  ),
);

/**
 * A metadata filter, its depth and size checked ({@link filterBudgetExceeded}) before the
 * recursive schema parses it.
 */
const metadataFilterSchema = z.pipe(
  z.transform((raw: unknown, ctx) => {
    const exceeded = filterBudgetExceeded(raw);
    if (exceeded) ctx.issues.push({ code: 'custom', message: exceeded, input: raw });
    return raw;
  }),
  metadataFilterNodeSchema,
);

const shortString = () => z.string().check(z.minLength(1), z.maxLength(64));
const oneOrMany = z.pipe(
  z.union([shortString(), z.array(shortString()).check(z.minLength(1), z.maxLength(50))]),
  z.transform((v: string | string[]) => (Array.isArray(v) ? v : [v])),
);
/** A UTC offset at the end of a date-time, as `+hh:mm` or `-hh:mm`. */
const OFFSET = /[+-](\d{2}):\d{2}$/;

/**
 * An ISO 8601 date-time with an offset, or a plain date, that PostgreSQL can store: from year
 * 0001 on (it has no year 0 and would refuse `0000-01-01` as out of range), with an offset of at
 * most 15:59 hours (it refuses `+16:00` and beyond). A value it would refuse is the caller's 422
 * naming the field, not a failed retrieval.
 */
export const isoInstantSchema = () =>
  z.union([z.iso.datetime({ offset: true }), z.iso.date()]).check(
    z.refine((v: string) => !v.startsWith('0000'), 'years start at 0001'),
    z.refine(
      (v: string) => Number(OFFSET.exec(v)?.[1] ?? 0) <= 15,
      'UTC offsets are at most 15:59 hours',
    ),
  );

export const searchFiltersSchema = z.strictObject({
  source_type: z.optional(oneOrMany),
  lang: z.optional(oneOrMany),
  org_id: z.optional(shortString()),
  date_from: z.optional(isoInstantSchema()),
  date_to: z.optional(isoInstantSchema()),
  document_ids: z.optional(z.array(z.uuid()).check(z.minLength(1), z.maxLength(100))),
  metadata: z.optional(metadataFilterSchema),
});
export type SearchFilters = z.infer<typeof searchFiltersSchema>;

/**
 * The `equals` comparisons that every match of `filter` satisfies: the filter's own, or those of
 * its `andAll` operands, at any depth of `andAll`. (Under `orAll` or a negation, none is required.)
 */
export function requiredEquals(filter: MetadataFilter): MetadataEquals[] {
  if ('equals' in filter) return [filter.equals];
  if ('andAll' in filter) return filter.andAll.flatMap(requiredEquals);
  return [];
}

/**
 * `filter` less its required comparison `e` (each place {@link requiredEquals} finds it): what is
 * left to test of a chunk known to hold `e`. Undefined when nothing is left.
 */
export function withoutRequired(
  filter: MetadataFilter,
  e: MetadataEquals,
): MetadataFilter | undefined {
  if ('equals' in filter)
    return filter.equals.key === e.key && filter.equals.value === e.value ? undefined : filter;
  if ('andAll' in filter) {
    const rest = filter.andAll.flatMap((f) => withoutRequired(f, e) ?? []);
    return rest.length > 0 ? { andAll: rest } : undefined;
  }
  return filter;
}

/**
 * Compiles validated search filters to SQL predicates. Every value (and every metadata key)
 * becomes a parameter; the SQL text only ever contains fixed fragments chosen here.
 */
import {
  requiredEquals,
  withoutRequired,
  type MetadataEquals,
  type MetadataFilter,
  type SearchFilters,
} from '../../core/retrieval/filters';
import type { SearchScope } from '../../core/retrieval/types';
import type { SqlParams } from './sql-params';
import { readerTenantsSql, searchableDocumentSql } from './visibility-sql';

/** The metadata a filter sees: the document's attributes overlaid by the chunk's. */
export const CHUNK_METADATA = `(d.metadata || c.metadata)`;
/**
 * The document's attributes alone: what a chunk without metadata of its own sees, so a filter
 * over it can select documents before their chunks are read.
 */
export const DOCUMENT_METADATA = `d.metadata`;

function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (m) => `\\${m}`);
}

function compare(
  op: '>' | '>=' | '<' | '<=',
  key: string,
  value: string | number,
  p: SqlParams,
  meta: string,
): string {
  const k = p.add(key, 'text');
  if (typeof value === 'number') {
    // Only numeric metadata compares numerically; anything else simply does not match.
    return `(CASE WHEN jsonb_typeof(${meta} -> ${k}) = 'number' THEN (${meta} ->> ${k})::numeric END) ${op} ${p.add(value, 'numeric')}`;
  }
  return `(CASE WHEN jsonb_typeof(${meta} -> ${k}) = 'string' THEN ${meta} ->> ${k} END) ${op} ${p.add(value, 'text')}`;
}

/** One metadata filter to a boolean SQL expression over the metadata `meta` names. */
export function metadataFilterSql(
  filter: MetadataFilter,
  p: SqlParams,
  meta: string = CHUNK_METADATA,
): string {
  if ('andAll' in filter)
    return `(${filter.andAll.map((f) => metadataFilterSql(f, p, meta)).join(' AND ')})`;
  if ('orAll' in filter)
    return `(${filter.orAll.map((f) => metadataFilterSql(f, p, meta)).join(' OR ')})`;
  // `equals` and `in` as containment, which for a scalar value holds exactly when the key's value
  // equals it (an array or object under the key contains no scalar at that path), and which a
  // GIN index on the documents' metadata can serve (migrations/0010).
  if ('equals' in filter)
    return `${meta} @> ${p.add(JSON.stringify({ [filter.equals.key]: filter.equals.value }), 'jsonb')}`;
  // The negations are exactly that: a key that is missing, or holds anything else, matches.
  if ('notEquals' in filter)
    return `NOT (${metadataFilterSql({ equals: filter.notEquals }, p, meta)})`;
  if ('in' in filter) {
    const { key, value } = filter.in;
    return `${meta} @> ANY(${p.add(
      value.map((v) => JSON.stringify({ [key]: v })),
      'jsonb[]',
    )})`;
  }
  if ('notIn' in filter) return `NOT (${metadataFilterSql({ in: filter.notIn }, p, meta)})`;
  if ('greaterThan' in filter)
    return compare('>', filter.greaterThan.key, filter.greaterThan.value, p, meta);
  if ('greaterThanOrEquals' in filter)
    return compare('>=', filter.greaterThanOrEquals.key, filter.greaterThanOrEquals.value, p, meta);
  if ('lessThan' in filter)
    return compare('<', filter.lessThan.key, filter.lessThan.value, p, meta);
  if ('lessThanOrEquals' in filter)
    return compare('<=', filter.lessThanOrEquals.key, filter.lessThanOrEquals.value, p, meta);
  if ('startsWith' in filter) {
    return `(${meta} ->> ${p.add(filter.startsWith.key, 'text')}) LIKE ${p.add(escapeLike(filter.startsWith.value), 'text')} || '%' ESCAPE '\\'`;
  }
  const exhaustive: never = filter;
  throw new Error(`unsupported filter ${JSON.stringify(exhaustive)}`);
}

/**
 * What the caller may search: the visibility rule's searchable documents (visibility-sql.ts),
 * in two parts. `chunkTenants` restricts the chunk rows to the scope's tenants (the tenant
 * b-tree can serve it); `documents` is the rule itself. Both are always AND-ed with each other
 * and with the request's filters.
 */
export function visibilityParts(
  scope: SearchScope,
  p: SqlParams,
): {
  readonly chunkTenants: string;
  readonly documents: string;
} {
  const documents = searchableDocumentSql('d', scope, p);
  return { chunkTenants: readerTenantsSql('c.tenant_id', scope, p), documents };
}

/** {@link visibilityParts} as one predicate. */
export function visibilitySql(scope: SearchScope, p: SqlParams): string {
  const { chunkTenants, documents } = visibilityParts(scope, p);
  return `${documents} AND ${chunkTenants}`;
}

/**
 * Request filters and tenant policy to one predicate (over `c` chunks and `d` documents), with
 * metadata filters over `meta` ({@link DOCUMENT_METADATA} for a predicate over `d` alone).
 */
export function filtersSql(
  filters: SearchFilters,
  allowedSourceTypes: readonly string[] | null,
  p: SqlParams,
  meta: string = CHUNK_METADATA,
): string {
  const parts: string[] = [];
  if (filters.source_type)
    parts.push(`d.source_type = ANY(${p.add(filters.source_type, 'text[]')})`);
  if (allowedSourceTypes)
    parts.push(`d.source_type = ANY(${p.add([...allowedSourceTypes], 'text[]')})`);
  if (filters.lang) parts.push(`d.language = ANY(${p.add(filters.lang, 'text[]')})`);
  if (filters.date_from)
    parts.push(`d.source_updated_at >= ${p.add(filters.date_from, 'timestamptz')}`);
  if (filters.date_to) {
    // A date alone includes that whole day (UTC).
    parts.push(
      /^\d{4}-\d{2}-\d{2}$/.test(filters.date_to)
        ? `d.source_updated_at < (${p.add(filters.date_to, 'date')} + 1)::timestamp AT TIME ZONE 'UTC'`
        : `d.source_updated_at <= ${p.add(filters.date_to, 'timestamptz')}`,
    );
  }
  if (filters.document_ids) parts.push(`d.id = ANY(${p.add(filters.document_ids, 'uuid[]')})`);
  if (filters.metadata) parts.push(metadataFilterSql(filters.metadata, p, meta));
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}

/** Where the metadata expression goes in compiled filters (no fixed fragment contains it). */
const META_SLOT = '/*meta*/';

/** Filters compiled once: their parameters added once, their SQL rendered over any metadata. */
export interface CompiledFilters {
  /** Whether there is anything to filter by (the SQL is `true` otherwise). */
  readonly filtered: boolean;
  /** The predicate with metadata filters over `meta` ({@link CHUNK_METADATA} by default). */
  sql(meta?: string): string;
}

/**
 * {@link filtersSql} compiled once per request: a statement that filters both documents and
 * chunks renders the same predicate twice over the same parameters, so a filter's size counts
 * once against the protocol's parameter limit and is compiled once.
 */
export function compileFilters(
  filters: SearchFilters,
  allowedSourceTypes: readonly string[] | null,
  p: SqlParams,
): CompiledFilters {
  const text = filtersSql(filters, allowedSourceTypes, p, META_SLOT);
  return {
    filtered: text !== 'true',
    sql: (meta = CHUNK_METADATA) => text.replaceAll(META_SLOT, meta),
  };
}

/**
 * The chunk's own test for a value with a filter index (migrations/0026), when the filter requires
 * one (`equals`, alone or under `andAll`): `c.indexed_metadata @> {key: value}`, which the
 * triggers keep true exactly when the chunk's metadata (its document's overlaid by its own) holds
 * the value, and which is the predicate of the value's partial indexes, so the planner reads those
 * instead of the whole ones. It replaces the filter's own test of the value (`rest` is the request's
 * filters without it): beside it, the planner took the chunks the full test would pass for a
 * guessed fraction of the value's, and at 300k chunks read the whole of a 2 % value's graph in a
 * hash join (50 ms against 5). With it, the chunks the value's index holds. Null when no declared
 * value is required.
 */
export function indexedFilterSql(
  filters: SearchFilters,
  filterIndexes: readonly (MetadataEquals & { readonly chunks?: number })[] | undefined,
  p: SqlParams,
): {
  readonly sql: string;
  readonly chunks: number | undefined;
  readonly rest: SearchFilters;
} | null {
  if (!filters.metadata || !filterIndexes || filterIndexes.length === 0) return null;
  for (const e of requiredEquals(filters.metadata)) {
    const served = filterIndexes.find((f) => f.key === e.key && f.value === e.value);
    if (served) {
      const rest: SearchFilters = { ...filters, metadata: withoutRequired(filters.metadata, e) };
      if (!rest.metadata) delete rest.metadata;
      return {
        sql: `c.indexed_metadata @> ${p.add(JSON.stringify({ [e.key]: e.value }), 'jsonb')}`,
        chunks: served.chunks,
        rest,
      };
    }
  }
  return null;
}

/** Reading PostgreSQL's `EXPLAIN (FORMAT JSON)` output in plan tests. */
import type { Database, LocalSettings } from '../../lambdas/adapters/postgres/database';

/** A node of a plan, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string;
  'Actual Loops'?: number;
  'Actual Rows'?: number;
  'Index Name'?: string;
  'Relation Name'?: string;
  Filter?: string;
  'One-Time Filter'?: string;
  'Rows Removed by Filter'?: number;
  'Subplan Name'?: string;
  'CTE Name'?: string;
  'Parent Relationship'?: string;
  Plans?: PlanNode[];
}

/** A node and every node under it, depth first. */
export function* walk(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* walk(child);
}

/** The row `EXPLAIN (FORMAT JSON)` returns: JSON on PostgreSQL's driver, text on PGlite's. */
export type ExplainRow<T> = { 'QUERY PLAN': [T] | string };

/** The one plan of `EXPLAIN (FORMAT JSON)`'s rows, whichever database returned them. */
export function explained<T>(rows: readonly ExplainRow<T>[]): T {
  const raw = rows[0]!['QUERY PLAN'];
  return (typeof raw === 'string' ? (JSON.parse(raw) as [T]) : raw)[0];
}

/**
 * Runs a search statement with its transaction settings, then `EXPLAIN ANALYZE`s it the same way:
 * its hits' chunk ids, and the index scans its plan ran (node type and index name).
 */
export async function runExplained(
  db: Database,
  stmt: { readonly text: string; readonly values: unknown[] },
  settings: LocalSettings,
): Promise<{ ids: string[]; scans: { type: string; index: string }[] }> {
  const { rows } = await db.transaction(
    (tx) => tx.query<{ chunk_id: string }>(stmt.text, stmt.values),
    settings,
  );
  const plan = await db.transaction(
    (tx) =>
      tx.query<ExplainRow<{ Plan: PlanNode }>>(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${stmt.text}`,
        stmt.values,
      ),
    settings,
  );
  const scans = [...walk(explained(plan.rows).Plan)]
    .filter((n) => n['Actual Loops'] !== 0 && n['Index Name'])
    .map((n) => ({ type: n['Node Type'], index: n['Index Name']! }));
  return { ids: rows.map((r) => r.chunk_id), scans };
}

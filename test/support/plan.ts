/** Reading PostgreSQL's `EXPLAIN (FORMAT JSON)` output in plan tests. */

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

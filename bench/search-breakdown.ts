/** The search benchmark's breakdown of the hybrid statement: time per CTE (EXPLAIN ANALYZE). */
import type { Database } from '../lambdas/adapters/postgres/database';
import { SEARCH_ROLE } from '../lambdas/adapters/postgres/search-repository';
import { CteTiming } from './search-config';
import { Statement, PlanNode, explain, walk, mean, localSettings } from './search-measure';
import { hybridSettings } from './search-latency';

/** Mean self time and rows per CTE over EXPLAIN ANALYZE of the given statements. */
export async function cteBreakdown(db: Database, stmts: readonly Statement[], tableChunks: number) {
  const self = new Map<string, number[]>();
  const rows = new Map<string, number[]>();
  const peak = new Map<string, number[]>();
  const executions: number[] = [];
  const plannings: number[] = [];
  // A CTE is evaluated where it is first scanned, so a node's time includes the CTEs it reads:
  // subtract the CTE Scan nodes below it (not crossing into other CTEs' subplans) for its own
  // time. Its widest node's row count shows how many rows it worked through.
  const inside = (node: PlanNode): PlanNode[] => {
    const out: PlanNode[] = [];
    const visit = (n: PlanNode) => {
      for (const child of n.Plans ?? []) {
        if (child['Subplan Name']?.startsWith('CTE ')) continue;
        out.push(child);
        if (child['Node Type'] !== 'CTE Scan') visit(child);
      }
    };
    visit(node);
    return out;
  };
  const total = (n: PlanNode) => (n['Actual Total Time'] ?? 0) * (n['Actual Loops'] ?? 1);
  const rowsOf = (n: PlanNode) => (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1);
  const record = (name: string, node: PlanNode) => {
    const nodes = inside(node);
    const nested = nodes
      .filter((n) => n['Node Type'] === 'CTE Scan')
      .reduce((sum, n) => sum + total(n), 0);
    self.set(name, [...(self.get(name) ?? []), Math.max(0, total(node) - nested)]);
    rows.set(name, [...(rows.get(name) ?? []), rowsOf(node)]);
    peak.set(name, [
      ...(peak.get(name) ?? []),
      Math.max(rowsOf(node), ...nodes.filter((n) => n['Node Type'] !== 'CTE Scan').map(rowsOf)),
    ]);
  };
  for (const stmt of stmts) {
    // As the search repository runs it: under its role's row-level security policies.
    const plan = await db.transaction(async (tx) => explain(tx, stmt, true), {
      ...localSettings(hybridSettings(tableChunks)),
      role: SEARCH_ROLE,
    });
    executions.push(plan['Execution Time'] ?? 0);
    plannings.push(plan['Planning Time'] ?? 0);
    for (const node of walk(plan.Plan)) {
      const name = node['Subplan Name'];
      if (name?.startsWith('CTE ')) record(name.slice(4), node);
    }
    record('(main query)', plan.Plan);
  }
  const ctes: CteTiming[] = [...self.entries()]
    .map(([cte, times]) => ({
      cte,
      selfMs: mean(times),
      rows: mean(rows.get(cte) ?? []),
      peakRows: mean(peak.get(cte) ?? []),
    }))
    .sort((a, b) => b.selfMs - a.selfMs);
  return { ctes, planningMs: mean(plannings), executionMs: mean(executions) };
}

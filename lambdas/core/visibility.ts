/**
 * Who reads which document: the reader every document read takes, and the one default of the
 * publishing tenants. The rule itself is one SQL fragment builder that every reader uses
 * (lambdas/adapters/postgres/visibility-sql.ts); why it reads as it does is
 * docs/decisions/0146-one-visibility-rule.md.
 */

/**
 * The tenants whose `global` documents every tenant reads, when configuration names none
 * (`publishingTenants` in the CDK config, `PUBLISHING_TENANTS` in a Lambda,
 * `GROUNDWORK_PUBLISHING_TENANTS` for the embedded default).
 */
export const DEFAULT_PUBLISHING_TENANTS: readonly string[] = ['global'];

/** The caller a read serves. Every document read takes one; there is no unscoped read. */
export interface Reader {
  readonly tenantId: string;
  readonly userId: string;
  /** The publishing tenants: whose indexed `global` documents every tenant reads. */
  readonly globalTenants: readonly string[];
}

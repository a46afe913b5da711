/**
 * The visibility rule has one home (lambdas/adapters/postgres/visibility-sql.ts,
 * docs/decisions/0146-one-visibility-rule.md): no other module of the database adapters writes a
 * predicate on a document's `visibility`, the readers build theirs there, the conversation
 * store (memory) reads no document, and the publishing tenants have one default.
 * test/integration/visibility-rule.test.ts checks what each reader returns.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const HOME = 'lambdas/adapters/postgres/visibility-sql.ts';

/** The TypeScript sources under `dir` (relative to the repository), tests left out. */
function sources(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => path.posix.join(dir, f.split(path.sep).join('/')));
}
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** A SQL comparison of the visibility column: `visibility = '...'`, `<> $1`, `IN (...)`. */
const VISIBILITY_PREDICATE = /\bvisibility\s*(?:=|<>|!=)\s*['$]|\bvisibility\s+(?:NOT\s+)?IN\b/i;

/**
 * Comparisons that decide nothing about who reads a document, each with its reason: the search's
 * planning estimate counts the documents its partial indexes hold (their predicates must match
 * migrations/0006 word for word), and ingestion looks for a duplicate in the same scope.
 */
const NOT_A_READER_RULE: Readonly<Record<string, readonly RegExp[]>> = {
  'lambdas/adapters/postgres/search-preparation.ts': [
    /NOT \(d\.visibility = 'tenant' AND d\.status = 'indexed'\)/,
    /NOT \(d\.visibility = 'global' AND d\.status = 'indexed'\)/,
  ],
  'lambdas/adapters/postgres/document-repository.ts': [/AND visibility = \$4 AND owner_user_id/],
};

/** Lines of `text` comparing the visibility column that no exemption of `file` covers. */
function ownRules(file: string, text: string): string[] {
  const exempt = NOT_A_READER_RULE[file] ?? [];
  return text
    .split('\n')
    .filter((line) => VISIBILITY_PREDICATE.test(line))
    .filter((line) => !exempt.some((e) => e.test(line)))
    .map((line) => `${file}: ${line.trim()}`);
}

describe('the visibility rule', () => {
  it('is written only in its home: no adapter compares `visibility` in a reader of its own', () => {
    const found = sources('lambdas/adapters')
      .filter((f) => f !== HOME)
      .flatMap((f) => ownRules(f, read(f)));
    expect(found).toEqual([]);
  });

  it('catches a reader that writes its own rule', () => {
    // The check above, against the predicate the documents API once had.
    const copy =
      "AND ((tenant_id = $2 AND (visibility <> 'user' OR owner_user_id = $3)) OR visibility = 'global')";
    expect(ownRules('lambdas/adapters/postgres/document-queries.ts', copy)).toHaveLength(1);
    expect(
      ownRules('lambdas/adapters/postgres/x.ts', "WHERE d.visibility IN ('tenant')"),
    ).toHaveLength(1);
    expect(ownRules('lambdas/adapters/postgres/x.ts', "doc.visibility === 'user'")).toEqual([]);
  });

  it.each([
    ['search', 'lambdas/adapters/postgres/filter-sql.ts', 'searchableDocumentSql('],
    [
      'get, list and passages',
      'lambdas/adapters/postgres/document-queries.ts',
      'visibleDocumentSql(',
    ],
    ['statistics', 'lambdas/adapters/postgres/admin-queries.ts', 'tenantHoldingsSql('],
  ])('is what %s reads through', (_, file, builder) => {
    const text = read(file);
    expect(text).toContain("from './visibility-sql'");
    expect(text).toContain(builder);
  });

  it('leaves memory (the conversation store) without any read of documents or chunks', () => {
    const text = read('lambdas/adapters/postgres/conversation-repository.ts');
    expect(text).not.toMatch(/\b(?:FROM|JOIN)\s+(?:documents|chunks)\b/i);
    // The control: the documents API's reads match the same pattern.
    expect(read('lambdas/adapters/postgres/document-queries.ts')).toMatch(
      /\b(?:FROM|JOIN)\s+(?:documents|chunks)\b/i,
    );
  });

  it('has one default set of publishing tenants', () => {
    const literal = /\[\s*'global'\s*\]/;
    const found = [...sources('lambdas'), ...sources('lib'), ...sources('local')].filter(
      (f) => f !== 'lambdas/core/visibility.ts' && literal.test(read(f)),
    );
    expect(found).toEqual([]);
    expect(read('lambdas/core/visibility.ts')).toMatch(literal);
  });
});

/** Fails the integration run early, with the fix, when the PostgreSQL test server is not ready. */
import { Client } from 'pg';
import { TEST_DATABASE_URL } from '../support/databases';

export default async function globalSetup(): Promise<void> {
  const client = new Client({ connectionString: TEST_DATABASE_URL, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string | null }>(
      "SELECT (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS v",
    );
    if (!rows[0]?.v) throw new Error('the vector extension is not installed in the test database');
  } catch (err) {
    throw new Error(
      `PostgreSQL + pgvector test server not ready at ${TEST_DATABASE_URL.replace(/:[^:@/]+@/, ':***@')}: ` +
        `${err instanceof Error ? err.message : String(err)}. Run \`npm run setup:db\` (needs root or sudo).`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

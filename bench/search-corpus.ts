/**
 * The search benchmark's corpus in its schema: loading it once, its sizes, and the buffer cache
 * warmed.
 */
import { Client } from 'pg';
import type { Database } from '../lambdas/adapters/postgres/database';
import { ensureEmbeddingModel } from '../lambdas/adapters/postgres/embedding-guard';
import { loadMigrations, migrate } from '../lambdas/adapters/postgres/migrate';
import { createPgDatabase } from '../lambdas/adapters/postgres/pg-database';
import {
  createWorld,
  generateDocuments,
  GENERATOR,
  type DocumentBatch,
  type World,
} from './search-data';
import { BENCH_DATABASE_URL, DOCUMENTS_PER_BATCH, SearchBenchResult } from './search-config';

export function openSchema(url: string, schema: string, max = 2): Database {
  // Tables in the benchmark's schema; the vector type from public, where the extension lives.
  return createPgDatabase({
    connectionString: url,
    options: `-c search_path=${schema},public`,
    max,
  });
}

async function withAdmin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The model the corpus's vectors stand for: the local model's dimension, or another model's. */
const BENCH_MODEL_ID =
  GENERATOR.dimension === 512 ? 'local/use-lite-512' : `bench/synthetic-${GENERATOR.dimension}`;

const INSERT_DOCUMENTS = `
  INSERT INTO documents (id, tenant_id, source_uri, title, source_type, language, visibility, status,
                         chunk_count, embedding_model, content_hash, attributes_hash, source_updated_at)
  SELECT t.id, t.tenant, t.uri, t.title, 'doc', 'en', 'tenant', 'indexed', $5, $6,
         t.uri, t.uri, '2024-01-01T00:00:00Z'
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) AS t(id, tenant, uri, title)`;

// The same columns and full-text vector as the document repository writes (title, newline, text).
const INSERT_CHUNKS = `
  INSERT INTO chunks (document_id, tenant_id, chunk_index, text, start_offset, end_offset,
                      token_count, embedding, fts)
  SELECT t.doc, t.tenant, t.idx, t.txt, t.s, t.s + length(t.txt), t.tok, t.emb::vector,
         to_tsvector('english'::regconfig, t.title || E'\\n' || t.txt)
  FROM unnest($1::uuid[], $2::text[], $3::int[], $4::text[], $5::int[], $6::int[], $7::text[], $8::text[])
       AS t(doc, tenant, idx, txt, s, tok, emb, title)`;

async function insertBatch(db: Database, batch: DocumentBatch): Promise<void> {
  const offsets = new Map<string, number>();
  await db.transaction(async (tx) => {
    await tx.query(INSERT_DOCUMENTS, [
      batch.documents.map((d) => d.id),
      batch.documents.map((d) => d.tenantId),
      batch.documents.map((d) => d.sourceUri),
      batch.documents.map((d) => d.title),
      GENERATOR.chunksPerDocument,
      BENCH_MODEL_ID,
    ]);
    await tx.query(INSERT_CHUNKS, [
      batch.chunks.map((c) => c.documentId),
      batch.chunks.map((c) => c.tenantId),
      batch.chunks.map((c) => c.index),
      batch.chunks.map((c) => c.text),
      batch.chunks.map((c) => {
        const start = offsets.get(c.documentId) ?? 0;
        offsets.set(c.documentId, start + c.text.length + 1);
        return start;
      }),
      batch.chunks.map((c) => c.tokenCount),
      batch.chunks.map((c) => c.embedding),
      batch.chunks.map((c) => c.title),
    ]);
  });
}

/** Generates documents in slices, yielding between them so that the previous insert's I/O proceeds. */
async function generateYielding(world: World, from: number, to: number): Promise<DocumentBatch> {
  const out: DocumentBatch = { documents: [], chunks: [] };
  for (let start = from; start < to; start += 50) {
    const part = generateDocuments(world, start, Math.min(to, start + 50));
    out.documents.push(...part.documents);
    out.chunks.push(...part.chunks);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

export const seconds = (t0: number) => (performance.now() - t0) / 1000;

/** The schema that holds a corpus of `chunks` chunks (of another dimension than 512: its own). */
function corpusSchema(chunks: number): string {
  return `bench_search_${chunks}${GENERATOR.dimension === 512 ? '' : `_d${GENERATOR.dimension}`}`;
}

/**
 * The benchmark's corpus for a benchmark part that works on it (`search`, `search-graph`,
 * `search-covering`): loaded, or reused when a previous run completed it, and a connection to its
 * schema. The size is a multiple of 5,000, so that the 10 %, 1 % and 0.1 % tenants are exact.
 */
export async function openCorpus(options: {
  readonly chunks?: number;
  readonly databaseUrl?: string;
  readonly log?: (line: string) => void;
}): Promise<{
  db: Database;
  world: World;
  schema: string;
  chunks: number;
  load: SearchBenchResult['load'];
  log: (line: string) => void;
}> {
  const chunks = options.chunks ?? 100_000;
  if (!Number.isInteger(chunks) || chunks <= 0 || chunks % 5000 !== 0)
    throw new Error(
      `chunks must be a positive multiple of 5,000 (so the 10%, 1% and 0.1% tenants are exact), got ${chunks}`,
    );
  const url = options.databaseUrl ?? BENCH_DATABASE_URL;
  const log = options.log ?? ((line: string) => console.log(line));
  const schema = corpusSchema(chunks);
  const world = createWorld();
  const load = await ensureCorpus(url, schema, chunks, world, log);
  return { db: openSchema(url, schema, 2), world, schema, chunks, load, log };
}

/** Loads the corpus into its schema unless a previous run completed it (marker row). */
export async function ensureCorpus(
  url: string,
  schema: string,
  chunks: number,
  world: World,
  log: (line: string) => void,
): Promise<SearchBenchResult['load']> {
  // A new or changed migration means a new schema: the data is reloaded rather than migrated.
  const migrations = (await loadMigrations()).map((m) => `${m.version}:${m.checksum}`);
  const marker = JSON.stringify({ generator: GENERATOR, chunks, migrations });
  const existing = await withAdmin(url, async (admin) => {
    const { rows } = await admin.query<{ exists: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS exists',
      [`${schema}.bench_meta`],
    );
    if (!rows[0]?.exists) return 'absent or incomplete';
    // Compared as jsonb: key order is not preserved by the jsonb column.
    const meta = await admin.query<{ same: boolean }>(
      `SELECT value = $1::jsonb AS same FROM ${schema}.bench_meta WHERE key = 'complete'`,
      [marker],
    );
    if (!meta.rows[0]) return 'absent or incomplete';
    return meta.rows[0].same ? 'complete' : 'made by another generator version or schema';
  });
  if (existing === 'complete') {
    log(`data: reusing schema ${schema} (complete, same generator)`);
    return {
      reused: true,
      loadSeconds: null,
      ginIndexSeconds: null,
      hnswIndexSeconds: null,
      analyzeSeconds: null,
    };
  }

  log(`data: building schema ${schema} (${existing})`);
  await withAdmin(url, async (admin) => {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.query(`CREATE SCHEMA ${schema}`);
  });
  const db = openSchema(url, schema, 3);
  try {
    await migrate(db);
    // The migrations declare 512 dimensions; the first model recorded fits the columns.
    await ensureEmbeddingModel(db, { modelId: BENCH_MODEL_ID, dimension: GENERATOR.dimension });
    await db.exec('CREATE TABLE bench_meta (key text PRIMARY KEY, value jsonb NOT NULL)');
    // Both indexes are rebuilt after the load: far cheaper than maintaining them row by row.
    const { rows: indexes } = await db.query<{ indexname: string; indexdef: string }>(
      `SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1
         AND indexname IN ('chunks_embedding_hnsw_idx', 'chunks_tenant_lexemes_idx')`,
      [schema],
    );
    const hnswDef = indexes.find((i) => i.indexname === 'chunks_embedding_hnsw_idx')?.indexdef;
    const ginDef = indexes.find((i) => i.indexname === 'chunks_tenant_lexemes_idx')?.indexdef;
    if (!hnswDef || !ginDef)
      throw new Error(
        'the migrations no longer create chunks_embedding_hnsw_idx and chunks_tenant_lexemes_idx',
      );
    await db.exec('DROP INDEX chunks_embedding_hnsw_idx; DROP INDEX chunks_tenant_lexemes_idx');

    const documents = chunks / GENERATOR.chunksPerDocument;
    let t0 = performance.now();
    let pending: Promise<void> = Promise.resolve();
    let reported = 0;
    for (let from = 0; from < documents; from += DOCUMENTS_PER_BATCH) {
      const batch = await generateYielding(
        world,
        from,
        Math.min(documents, from + DOCUMENTS_PER_BATCH),
      );
      await pending;
      pending = insertBatch(db, batch);
      const done = Math.floor(((from + batch.documents.length) / documents) * 10);
      if (done > reported) {
        reported = done;
        log(
          `  generated ${(from + batch.documents.length) * GENERATOR.chunksPerDocument} chunks (${seconds(t0).toFixed(1)} s)`,
        );
      }
    }
    await pending;
    const loadSeconds = seconds(t0);

    t0 = performance.now();
    await db.exec(ginDef);
    const ginIndexSeconds = seconds(t0);
    t0 = performance.now();
    await db.transaction(async (tx) => {
      // The graph of 1M vectors of 512 dimensions takes about 3 GB; a build that outgrows
      // maintenance_work_mem goes on far more slowly.
      await tx.exec(`SET LOCAL maintenance_work_mem = '6GB'`);
      await tx.exec(hnswDef);
    });
    const hnswIndexSeconds = seconds(t0);
    t0 = performance.now();
    // VACUUM also sets hint bits and the visibility map, the steady state of a live table.
    for (const table of ['documents', 'chunks', 'term_stats', 'tenant_stats'])
      await db.exec(`VACUUM (ANALYZE) ${table}`);
    const analyzeSeconds = seconds(t0);
    await db.query(`INSERT INTO bench_meta (key, value) VALUES ('complete', $1::jsonb)`, [marker]);
    return { reused: false, loadSeconds, ginIndexSeconds, hnswIndexSeconds, analyzeSeconds };
  } finally {
    await db.close();
  }
}

/** Table and index sizes of the loaded corpus, and the server's buffer cache. */
export async function corpusSizes(db: Database): Promise<Record<string, string>> {
  const { rows } = await db.query<Record<string, string>>(
    `SELECT pg_size_pretty(pg_total_relation_size('chunks') - pg_indexes_size('chunks')) AS "chunks (heap+TOAST)",
            pg_size_pretty(pg_relation_size('chunks_embedding_hnsw_idx')) AS "HNSW index",
            pg_size_pretty(pg_relation_size('chunks_tenant_lexemes_idx')) AS "GIN index",
            pg_size_pretty(pg_indexes_size('chunks')) AS "chunk indexes in all",
            pg_size_pretty(pg_total_relation_size('documents') + pg_total_relation_size('term_stats')
                           + pg_total_relation_size('tenant_stats')) AS "documents and term statistics",
            current_setting('shared_buffers') AS "shared_buffers"`,
  );
  return rows[0] ?? {};
}

/**
 * Loads the product's tables, their TOAST tables and their indexes in the schema into
 * shared_buffers (`pg_prewarm`, created in the bench database by scripts/setup-postgres.sh), so
 * that the latency runs measure a server serving its working set from memory, as a production
 * database sized for its index does, rather than reads through the OS cache on their first touch
 * of each page. The benchmark's own tables (`bench_*`: section 7's side table and its two graphs,
 * kept with the corpus) are left out: with them the 1M corpus outgrows a 14 GB cache, and what a
 * full cache evicts is what was loaded first. For the same reason the TOAST tables, of which a
 * search reads only its top_k rows' text, are loaded first and the rest after them. Returns what
 * was loaded, or why nothing was.
 */
export async function prewarm(db: Database, schema: string): Promise<string> {
  const { rows: ext } = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_prewarm'");
  if (ext.length === 0) return 'not prewarmed (pg_prewarm is not installed in this database)';
  const { rows } = await db.query<{ blocks: string; fits: boolean; size: string }>(
    `WITH tables AS (
       SELECT c.oid, c.reltoastrelid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r' AND c.relname NOT LIKE 'bench\\_%'),
     rels AS (
       SELECT oid, 1 AS pass FROM tables
       UNION ALL
       SELECT x.indexrelid, 1 FROM tables t JOIN pg_index x ON x.indrelid = t.oid
       UNION ALL
       SELECT reltoastrelid, 0 FROM tables WHERE reltoastrelid <> 0
       UNION ALL
       SELECT x.indexrelid, 0 FROM tables t JOIN pg_index x ON x.indrelid = t.reltoastrelid),
     ordered AS (SELECT oid FROM rels ORDER BY pass, oid)
     SELECT sum(pg_prewarm(oid))::text AS blocks,
            sum(pg_relation_size(oid)) <= pg_size_bytes(current_setting('shared_buffers')) AS fits,
            pg_size_pretty(sum(pg_relation_size(oid))) AS size
       FROM ordered`,
    [schema],
  );
  const r = rows[0];
  return r
    ? `prewarmed ${r.size} (${r.blocks} blocks) into shared_buffers${r.fits ? '' : ', more than it holds'}`
    : 'not prewarmed';
}

/**
 * `groundwork ingest <folder> --tenant <id>` run again after a file was deleted from the folder:
 * the report names the document the folder no longer holds, which stays indexed, and `--prune`
 * removes it, so that a folder can be kept in step with its tenant.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../support/cli';

process.env.POWERTOOLS_METRICS_DISABLED = 'true';

describe('groundwork ingest', () => {
  let dir: string;
  let docs: string;
  const saved = { ...process.env };

  const run = runCli;

  /** The sources a keyword search for `query` returns in the tenant. */
  const sources = async (query: string): Promise<string[]> => {
    const res = await run(['search', query, '--tenant', 'acme', '--mode', 'keyword', '--json']);
    expect(res.code).toBe(0);
    const body = JSON.parse(res.stdout) as { results: { source_uri: string }[] };
    return body.results.map((r) => r.source_uri);
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-ingest-'));
    Object.assign(process.env, {
      GROUNDWORK_DATA_DIR: path.join(dir, 'data'),
      GROUNDWORK_EMBED_THREADS: '1',
      GROUNDWORK_LOG_LEVEL: 'SILENT',
    });
    docs = path.join(dir, 'docs');
    await mkdir(docs);
    await writeFile(path.join(docs, 'refunds.md'), '# Refunds\n\nRefunds take fourteen days.');
    await writeFile(path.join(docs, 'kennels.md'), '# Kennels\n\nStray dogs go to the kennels.');
    const first = await run(['ingest', docs, '--tenant', 'acme']);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('documents: 2  indexed: 2');
  }, 180_000);
  afterAll(async () => {
    process.env = saved;
    await rm(dir, { recursive: true, force: true });
  });

  it('names a document deleted from the folder and keeps it until --prune removes it', async () => {
    await rm(path.join(docs, 'kennels.md'));
    const again = await run(['ingest', docs, '--tenant', 'acme']);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      '1 document under this tenant and prefix is not in the folder and still indexed (--prune removes them):\n  tenants/acme/kennels.md',
    );
    expect((await sources('kennels')).some((s) => s.endsWith('/kennels.md'))).toBe(true);

    const pruned = await run(['ingest', docs, '--tenant', 'acme', '--prune']);
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toContain(
      'removed 1 document no longer in the folder:\n  tenants/acme/kennels.md',
    );
    expect(await sources('kennels')).toEqual([]);
    expect((await sources('refunds')).some((s) => s.endsWith('/refunds.md'))).toBe(true);

    // In step now: nothing more to name.
    const last = await run(['ingest', docs, '--tenant', 'acme']);
    expect(last.stdout).not.toContain('not in the folder');
  }, 240_000);
});

/**
 * `groundwork ingest <folder> --tenant <id>`: uploads a folder to the local emulator's bucket,
 * shows progress, waits for indexing and reports documents, chunks and failures with their
 * reasons, and the documents under the same prefix that the folder no longer holds (removed with
 * `--prune`).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SingleBar, Presets } from 'cli-progress';
import { isApiUploadKey } from '../../lambdas/core/documents/documents';
import { EXTENSIONS, UPLOAD_CONTENT_TYPES } from '../../lambdas/core/ingestion/formats';
import { isSidecarKey, TENANT_ID_PATTERN } from '../../lambdas/core/ingestion/object-attributes';
import { callApi, unreachable, type ApiSession } from '../client';
import { localS3Client } from '../stack';

/** The content type a file is uploaded with: its format's, read from its extension. */
function contentType(file: string): string {
  // A metadata sidecar is JSON; a document is read by the format its extension names.
  if (isSidecarKey(file)) return 'application/json';
  const format = EXTENSIONS[path.extname(file).slice(1).toLowerCase()];
  return format ? UPLOAD_CONTENT_TYPES[format] : 'application/octet-stream';
}

/** Every regular, non-hidden file below `root`, as paths relative to it (with `/`). */
async function listFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(dir: string): Promise<void> {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (entry.isFile()) out.push(path.relative(root, full).split(path.sep).join('/'));
    }
  }
  await walk(root);
  return out.sort();
}

export interface IngestReport {
  documents: number;
  indexed: number;
  chunks: number;
  failed: { key: string; reason: string }[];
  /**
   * Keys of documents under the folder's prefix that the folder does not hold (deleted from it
   * since an earlier run, or uploaded otherwise): still indexed, unless `pruned`.
   */
  notInFolder: string[];
  /** Whether the documents of `notInFolder` were removed (`--prune`). */
  pruned: boolean;
}

export interface UploadTarget {
  client: S3Client;
  bucket: string;
}

/** What {@link uploadFolder} did: the keys of the documents uploaded (not sidecars), and the files it skipped. */
export interface FolderUpload {
  readonly keys: string[];
  /** Files listed but gone before they were read (removed or renamed meanwhile), by key. */
  readonly vanished: string[];
}

/**
 * Uploads the folder's files under `tenants/<tenant>/[prefix/]`. A file removed after the folder
 * was listed is skipped and reported, not fatal: the rest of the folder is still uploaded.
 */
export async function uploadFolder(
  folder: string,
  tenant: string,
  target: UploadTarget,
  options: { prefix?: string; progress?: boolean } = {},
): Promise<FolderUpload> {
  if (!TENANT_ID_PATTERN.test(tenant))
    throw new Error(`--tenant "${tenant}" is not a valid tenant id (letters, digits, - and _).`);
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new Error(`${folder} is not a folder.`);
  const files = await listFiles(folder);
  const prefix = `tenants/${tenant}/${options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : ''}`;
  const bar = options.progress
    ? new SingleBar(
        { format: 'uploading {bar} {value}/{total} files', stream: process.stderr },
        Presets.shades_classic,
      )
    : null;
  bar?.start(files.length, 0);
  // Sidecars first, so that the document's own event sees its metadata.
  const ordered = [...files.filter(isSidecarKey), ...files.filter((f) => !isSidecarKey(f))];
  const keys: string[] = [];
  const vanished: string[] = [];
  for (const file of ordered) {
    const body = await readFile(path.join(folder, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw err;
    });
    if (body === null) {
      vanished.push(prefix + file);
      bar?.increment();
      continue;
    }
    await target.client.send(
      new PutObjectCommand({
        Bucket: target.bucket,
        Key: prefix + file,
        Body: body,
        ContentType: contentType(file),
      }),
    );
    if (!isSidecarKey(file)) keys.push(prefix + file);
    bar?.increment();
  }
  bar?.stop();
  return { keys, vanished };
}

/** Waits until the ingest queue is empty, showing indexing progress. */
async function waitForQueue(
  stats: () => Promise<{ pending: number; inFlight: number }>,
  total: number,
  progress: boolean,
): Promise<void> {
  const bar = progress
    ? new SingleBar(
        { format: 'indexing  {bar} {value}/{total} events', stream: process.stderr },
        Presets.shades_classic,
      )
    : null;
  bar?.start(total, 0);
  let quiet = 0;
  // Two consecutive empty readings: an upload's event is queued before its PUT returns.
  while (quiet < 2) {
    const s = await stats();
    const remaining = s.pending + s.inFlight;
    bar?.update(Math.max(0, total - remaining));
    quiet = remaining === 0 ? quiet + 1 : 0;
    if (quiet < 2) await new Promise((r) => setTimeout(r, 200));
  }
  bar?.update(total);
  bar?.stop();
}

/** Why a file of the folder was not uploaded: it was gone when its turn came. */
const VANISHED_REASON = 'removed from the folder while it was being uploaded; not uploaded';

/** Uploads a folder through the serving stack's S3 endpoint, waits for indexing and reports. */
export async function ingestFolder(
  session: ApiSession,
  bucket: string,
  folder: string,
  tenant: string,
  options: { prefix?: string; progress?: boolean; userId?: string; prune?: boolean } = {},
): Promise<IngestReport> {
  const client = localS3Client(session.s3Endpoint, session.s3Credentials);
  try {
    const { keys, vanished } = await uploadFolder(
      folder,
      tenant,
      { client, bucket },
      options,
    ).catch((err: unknown) => {
      // The server (and its S3 endpoint) went away mid-upload: say which, as for the API.
      const code = networkErrorCode(err);
      if (code) throw new Error(unreachable(session.url, { cause: { code } }));
      throw err;
    });
    const token = session.token(options.userId ?? 'cli', tenant);
    const stack = session.stack;
    await waitForQueue(
      stack
        ? async () => stack.queue.stats()
        : () => callApi(session, token, 'GET', '/local/ingest-queue'),
      keys.length,
      options.progress ?? false,
    );
    const wanted = new Set(keys.map((k) => `s3://${bucket}/${k}`));
    const prefix = `s3://${bucket}/tenants/${tenant}/${options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : ''}`;
    const rows: DocumentSummary[] = [];
    const listed: DocumentSummary[] = [];
    let cursor: string | null = null;
    do {
      const page: { documents: DocumentSummary[]; next_cursor: string | null } = await callApi(
        session,
        token,
        'GET',
        `/api/documents?limit=100&prefix=${encodeURIComponent(prefix)}${cursor ? `&cursor=${cursor}` : ''}`,
      );
      rows.push(...page.documents.filter((d) => wanted.has(d.source_uri)));
      listed.push(...page.documents);
      cursor = page.next_cursor;
    } while (cursor);
    // Removed only when asked, as a tenant admin (a document the folder's upload made has no owner).
    const notInFolder = documentsNotInFolder(
      listed,
      wanted,
      new Set(vanished.map((k) => `s3://${bucket}/${k}`)),
    );
    if (options.prune) {
      const admin = session.token(options.userId ?? 'cli', tenant, { admin: true });
      for (const d of notInFolder)
        await callApi(session, admin, 'DELETE', `/api/documents/${encodeURIComponent(d.id)}`);
    }
    const indexed = rows.filter((r) => r.status === 'indexed');
    return {
      documents: keys.length + vanished.filter((k) => !isSidecarKey(k)).length,
      indexed: indexed.length,
      chunks: indexed.reduce((sum, r) => sum + r.chunk_count, 0),
      failed: [
        ...vanished.map((key) => ({ key, reason: VANISHED_REASON })),
        ...rows
          .filter((r) => r.status === 'failed')
          .map((r) => ({
            key: r.source_uri.replace(`s3://${bucket}/`, ''),
            reason: r.failure_reason ?? 'unknown',
          })),
      ],
      notInFolder: notInFolder.map((d) => d.source_uri.replace(`s3://${bucket}/`, '')),
      pruned: options.prune === true,
    };
  } finally {
    client.destroy();
  }
}

/** A document as `GET /api/documents` lists it, the fields the report reads. */
export interface DocumentSummary {
  id: string;
  source_uri: string;
  status: string;
  failure_reason: string | null;
  chunk_count: number;
}

/**
 * The listed documents (under the folder's prefix) that the folder no longer holds: files of an
 * earlier run since deleted from it. Not those this run uploaded or found vanished, not removed
 * ones or metadata sidecars, and not those uploaded through the documents API (under the keys it
 * chooses), which no folder holds.
 */
export function documentsNotInFolder(
  listed: readonly DocumentSummary[],
  uploaded: ReadonlySet<string>,
  vanished: ReadonlySet<string>,
): DocumentSummary[] {
  return listed.filter(
    (d) =>
      !uploaded.has(d.source_uri) &&
      !vanished.has(d.source_uri) &&
      d.status !== 'deleted' &&
      !isApiUploadKey(d.source_uri.replace(/^s3:\/\/[^/]+\//, '')) &&
      !isSidecarKey(d.source_uri),
  );
}

export function formatReport(report: IngestReport): string {
  const lines = [
    `documents: ${report.documents}  indexed: ${report.indexed}  chunks: ${report.chunks}  failed: ${report.failed.length}`,
  ];
  for (const f of report.failed) lines.push(`  failed ${f.key}: ${f.reason}`);
  if (report.notInFolder.length > 0) {
    const n = report.notInFolder.length;
    lines.push(
      report.pruned
        ? `removed ${n} document${n === 1 ? '' : 's'} no longer in the folder:`
        : `${n} document${n === 1 ? '' : 's'} under this tenant and prefix ${n === 1 ? 'is' : 'are'} not in the folder and still indexed (--prune removes them):`,
    );
    for (const key of report.notInFolder) lines.push(`  ${key}`);
  }
  return lines.join('\n');
}

/**
 * The code of an error of the connection itself (refused, reset, timed out), or null for an answer
 * of S3. The SDK may wrap the socket's error, keeping its code only in the message.
 */
function networkErrorCode(err: unknown): string | null {
  if (typeof err !== 'object' || err === null) return null;
  const e = err as { $metadata?: { httpStatusCode?: unknown }; code?: unknown; message?: unknown };
  if (typeof e.$metadata?.httpStatusCode === 'number') return null;
  if (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code)) return e.code;
  const m =
    typeof e.message === 'string'
      ? /\b(E(?:CONN[A-Z]+|TIMEDOUT|PIPE|HOSTUNREACH|NOTFOUND|AI_AGAIN))\b/.exec(e.message)
      : null;
  return m ? m[1]! : null;
}

/**
 * `groundwork ingest <folder> --tenant <id>`: uploads a folder to the bucket (the local emulator,
 * or a real bucket with `--bucket`), shows progress, waits for indexing and reports documents,
 * chunks and failures with their reasons.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SingleBar, Presets } from 'cli-progress';
import { findDocumentStatuses } from '../../lambdas/adapters/postgres/document-queries';
import { TENANT_ID_PATTERN } from '../../lambdas/core/ingestion/object-attributes';
import type { LocalStack } from '../stack';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.markdown': 'text/markdown; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.pdf': 'application/pdf',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.json': 'application/json',
};

/** Every regular, non-hidden file below `root`, as paths relative to it (with `/`). */
export async function listFiles(root: string): Promise<string[]> {
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
}

export interface UploadTarget {
  client: S3Client;
  bucket: string;
}

/** Uploads the folder's files under `tenants/<tenant>/[prefix/]`; returns the keys of documents (not sidecars). */
export async function uploadFolder(
  folder: string,
  tenant: string,
  target: UploadTarget,
  options: { prefix?: string; progress?: boolean } = {},
): Promise<string[]> {
  if (!TENANT_ID_PATTERN.test(tenant)) throw new Error(`--tenant "${tenant}" is not a valid tenant id (letters, digits, - and _).`);
  const info = await stat(folder).catch(() => null);
  if (!info?.isDirectory()) throw new Error(`${folder} is not a folder.`);
  const files = await listFiles(folder);
  const prefix = `tenants/${tenant}/${options.prefix ? `${options.prefix.replace(/^\/+|\/+$/g, '')}/` : ''}`;
  const bar = options.progress ? new SingleBar({ format: 'uploading {bar} {value}/{total} files', stream: process.stderr }, Presets.shades_classic) : null;
  bar?.start(files.length, 0);
  // Sidecars first, so that the document's own event sees its metadata.
  const ordered = [...files.filter((f) => f.endsWith('.metadata.json')), ...files.filter((f) => !f.endsWith('.metadata.json'))];
  for (const file of ordered) {
    const body = await readFile(path.join(folder, file));
    await target.client.send(
      new PutObjectCommand({
        Bucket: target.bucket,
        Key: prefix + file,
        Body: body,
        ContentType: CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
      }),
    );
    bar?.increment();
  }
  bar?.stop();
  return ordered.filter((f) => !f.endsWith('.metadata.json')).map((f) => prefix + f);
}

/** Uploads to the in-process stack, waits until its queue drains, and reports. */
export async function ingestFolderLocally(
  stack: LocalStack,
  folder: string,
  tenant: string,
  options: { prefix?: string; progress?: boolean } = {},
): Promise<IngestReport> {
  const keys = await uploadFolder(folder, tenant, { client: stack.s3.client, bucket: stack.s3.bucket }, options);
  await stack.queue.idle();
  const rows = await findDocumentStatuses(
    stack.db,
    tenant,
    keys.map((k) => `s3://${stack.s3.bucket}/${k}`),
  );
  const failed = rows
    .filter((r) => r.status === 'failed')
    .map((r) => ({ key: r.source_uri.replace(`s3://${stack.s3.bucket}/`, ''), reason: r.failure_reason ?? 'unknown' }));
  const indexed = rows.filter((r) => r.status === 'indexed');
  return {
    documents: keys.length,
    indexed: indexed.length,
    chunks: indexed.reduce((sum, r) => sum + r.chunk_count, 0),
    failed,
  };
}

export function formatReport(report: IngestReport): string {
  const lines = [
    `documents: ${report.documents}  indexed: ${report.indexed}  chunks: ${report.chunks}  failed: ${report.failed.length}`,
  ];
  for (const f of report.failed) lines.push(`  failed ${f.key}: ${f.reason}`);
  return lines.join('\n');
}

/**
 * Repairs the S3 emulator's folder before the emulator starts. s3rver writes an object as three
 * files, one after the other and each in place: the content (`<name>._S3rver_object`), its MD5
 * (`.md5`) and its metadata (`<name>._S3rver_metadata.json`). A process killed between or during
 * those writes leaves an object that S3 would never show, and s3rver then fails every listing of
 * its bucket (and every HEAD of the bucket, which lists it) on the torn metadata, so the local
 * stack could not start again. An object is torn when its metadata is missing or is not JSON, or
 * when its content was written after its metadata and no longer has the recorded MD5 (a new
 * version cut short over an old one). Torn objects are removed, as S3 keeps no part of an upload
 * that did not complete; reconciliation at start then treats the key as removed.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readdir, readFile, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { writeFileWhole } from './write-whole';

const OBJECT_SUFFIX = '._S3rver_object';
const METADATA_SUFFIX = '._S3rver_metadata.json';

async function md5Of(file: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function readOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Whether the object whose content is at `objectFile` was left incomplete by its writer. Its
 * content is checked against the recorded MD5 when it was written after its metadata, and when
 * its metadata was written at or after `verifySince` (ms since the epoch).
 */
async function isTorn(objectFile: string, verifySince: number | undefined): Promise<boolean> {
  const base = objectFile.slice(0, -OBJECT_SUFFIX.length);
  const metadataFile = `${base}${METADATA_SUFFIX}`;
  const metadata = await readOrNull(metadataFile);
  if (metadata === null) return true;
  try {
    JSON.parse(metadata);
  } catch {
    return true;
  }
  const [content, written] = await Promise.all([stat(objectFile), stat(metadataFile)]);
  // The usual case: the content was written before its metadata, so its writer finished. But
  // s3rver writes the metadata (and answers the upload) once the body has passed its MD5, while
  // the content file may still be written: so an object written since the emulator last
  // started (by a process that may have been killed) is checked too.
  const recent = verifySince !== undefined && written.mtimeMs >= verifySince;
  if (content.mtimeMs <= written.mtimeMs && !recent) return false;
  // Written after its metadata: a new version cut short, unless it still has the recorded MD5
  // (a folder copied without its files' times).
  const recorded = await readOrNull(`${objectFile}.md5`);
  return recorded === null || recorded.trim() !== (await md5Of(objectFile));
}

async function* objectFiles(dir: string): AsyncGenerator<string> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* objectFiles(full);
    else if (entry.isFile() && entry.name.endsWith(OBJECT_SUFFIX)) yield full;
  }
}

/**
 * Removes the torn objects of every bucket under `s3Dir` (s3rver's `directory`); returns their
 * keys as `bucket/key`, sorted. A folder that does not exist yet holds nothing to repair. With
 * `verifySince`, every object whose metadata was written since then also has its content checked
 * against its MD5 ({@link repairEmulatorFolder}).
 */
export async function removeTornObjects(
  s3Dir: string,
  options: { readonly verifySince?: number } = {},
): Promise<string[]> {
  let buckets;
  try {
    buckets = await readdir(s3Dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const removed: string[] = [];
  for (const bucket of buckets) {
    if (!bucket.isDirectory()) continue;
    const bucketDir = path.join(s3Dir, bucket.name);
    for await (const file of objectFiles(bucketDir)) {
      if (!(await isTorn(file, options.verifySince))) continue;
      const base = file.slice(0, -OBJECT_SUFFIX.length);
      await Promise.all(
        [file, `${file}.md5`, `${base}${METADATA_SUFFIX}`].map((f) => rm(f, { force: true })),
      );
      const key = path.relative(bucketDir, base).split(path.sep).join('/');
      removed.push(`${bucket.name}/${key}`);
    }
  }
  return removed.sort();
}

/**
 * Repairs the emulator's folder at start ({@link removeTornObjects}). With `startFile` (a file
 * beside the folder that keeps when the emulator last started), the objects written since the
 * last start, those a process that did not stop cleanly may have left short, are also read
 * against their MD5, from a second before it for file systems that keep coarse times. The new
 * start is recorded once the repair is done, so a start killed during it checks the same objects
 * again.
 */
export async function repairEmulatorFolder(
  s3Dir: string,
  startFile: string | null,
): Promise<string[]> {
  const startedAt = Date.now();
  const previous = startFile ? Number.parseInt((await readOrNull(startFile)) ?? '', 10) : NaN;
  const removed = await removeTornObjects(
    s3Dir,
    Number.isFinite(previous) ? { verifySince: previous - 1000 } : {},
  );
  if (startFile) await writeFileWhole(startFile, String(startedAt));
  return removed;
}

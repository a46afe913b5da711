/** Writing a small file so that no reader ever sees it half written. */
import { rename, writeFile } from 'node:fs/promises';

/**
 * Writes `data` to `file` under another name in the same folder, then renames it over `file`: a
 * reader sees the old content or the new, and a process killed while writing leaves at most a
 * stray `.tmp` file beside it, never a half-written `file`.
 */
export async function writeFileWhole(file: string, data: string, mode?: number): Promise<void> {
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, data, mode === undefined ? undefined : { mode });
  await rename(partial, file);
}

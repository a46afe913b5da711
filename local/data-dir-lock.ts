/**
 * One process at a time owns a data folder: PGlite is single-process, and two writers would
 * corrupt it. The lock file records the owner's pid and, for a running server, its URLs, so
 * that other commands can talk to it instead.
 */
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

export interface LockInfo {
  readonly pid: number;
  readonly command: string;
  readonly httpUrl?: string;
  readonly s3Endpoint?: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function readLock(dataDir: string): Promise<LockInfo | null> {
  try {
    const info = JSON.parse(await readFile(path.join(dataDir, 'lock.json'), 'utf8')) as LockInfo;
    return alive(info.pid) && info.pid !== process.pid ? info : null;
  } catch {
    return null;
  }
}

/** Takes the lock or throws, naming the process that holds it. */
export async function acquireLock(
  dataDir: string,
  info: Omit<LockInfo, 'pid'>,
): Promise<{ update(extra: Partial<LockInfo>): Promise<void>; release(): Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const holder = await readLock(dataDir);
  if (holder) {
    throw new Error(
      `${dataDir} is in use by "groundwork ${holder.command}" (pid ${holder.pid}). ` +
        'Stop it first, or set GROUNDWORK_DATA_DIR to another folder.',
    );
  }
  const file = path.join(dataDir, 'lock.json');
  let current: LockInfo = { ...info, pid: process.pid };
  await writeFile(file, JSON.stringify(current));
  return {
    async update(extra) {
      current = { ...current, ...extra };
      await writeFile(file, JSON.stringify(current));
    },
    async release() {
      await rm(file, { force: true });
    },
  };
}

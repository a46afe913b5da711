/**
 * One process at a time owns a data folder: PGlite is single-process, and two writers would
 * corrupt it. The lock file records the owner's pid and, for a running server, its URLs, so
 * that other commands can talk to it instead.
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
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

/** How long a lock file may stay unreadable while its owner is still writing it. */
const UNREADABLE_GRACE_MS = 10_000;

/**
 * A lock file is stale when it names a process that has exited (or this one), or when it has
 * stayed unreadable past the grace period; one just created by a command still starting is not.
 */
async function isStale(file: string): Promise<boolean> {
  try {
    const info = JSON.parse(await readFile(file, 'utf8')) as LockInfo;
    return typeof info.pid !== 'number' || !alive(info.pid) || info.pid === process.pid;
  } catch {
    try {
      return Date.now() - (await stat(file)).mtimeMs > UNREADABLE_GRACE_MS;
    } catch {
      return true;
    }
  }
}

/**
 * Takes the lock or throws, naming the process that holds it. The lock file is created
 * exclusively, so of two commands started at once only one gets it; a lock left by a process that
 * has died is taken over.
 */
export async function acquireLock(
  dataDir: string,
  info: Omit<LockInfo, 'pid'>,
): Promise<{ update(extra: Partial<LockInfo>): Promise<void>; release(): Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, 'lock.json');
  let current: LockInfo = { ...info, pid: process.pid };
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, JSON.stringify(current), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = await readLock(dataDir);
      if (holder || attempt > 0 || !(await isStale(file))) {
        throw new Error(
          `${dataDir} is in use by "groundwork ${holder?.command ?? 'another command'}"` +
            `${holder ? ` (pid ${holder.pid})` : ''}. Stop it first, or set GROUNDWORK_DATA_DIR to another folder.`,
        );
      }
      await rm(file, { force: true });
    }
  }
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

/**
 * One process at a time owns a data folder: PGlite is single-process, and two writers would
 * corrupt it. The lock file records the owner's pid (and, where the system tells it, which process
 * had that pid) and, for a running server, its URLs, so that other commands can talk to it
 * instead.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileWhole } from './write-whole';

/** The lock's file inside the data folder it locks. */
export const LOCK_FILE = 'lock.json';

export interface LockInfo {
  readonly pid: number;
  /** Which process had the pid ({@link processIdentity}), where the system tells it. */
  readonly started?: string;
  readonly command: string;
  readonly httpUrl?: string;
  readonly s3Endpoint?: string;
}

/** Whether a process is running; one of another user's, which may not be signalled, is. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Which process has a pid, on Linux: the machine's boot and the process's start time. A pid that
 * a crashed holder left and a later process (or, after a reboot, any process) has taken gives
 * another identity, so its lock is stale although the pid is alive. Null where /proc does not
 * tell it (other systems), and the pid alone decides.
 */
export function processIdentity(pid: number): string | null {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (the second field) may hold spaces and parentheses; the fields after it
    // start past the last ')': the state (field 3) first, the start time (field 22) twentieth.
    const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return startTime ? `${boot}:${startTime}` : null;
  } catch {
    return null;
  }
}

/** Whether the process that wrote a lock is no longer running: its pid exited or was reused. */
function gone(info: LockInfo): boolean {
  if (!alive(info.pid)) return true;
  if (info.started === undefined) return false;
  const now = processIdentity(info.pid);
  return now !== null && now !== info.started;
}

/** The live process, other than this one, that holds a data folder, if any. */
export async function readLock(dataDir: string): Promise<LockInfo | null> {
  const state = await lockState(path.join(dataDir, LOCK_FILE));
  return state.stale ? null : state.holder;
}

/** How long a lock file (or a takeover's guard) may stay unreadable or unfinished. */
const GRACE_MS = 10_000;

/** The folders this process holds, by path: a second lock on one is refused like another's. */
const held = new Map<string, LockInfo>();

/**
 * What a lock file says of its folder: `stale` when it names a process that has exited or whose
 * pid another process now has (or this process, which does not hold the folder), or has stayed
 * unparsable past the grace period; `held` otherwise, including while its owner is still writing
 * it and when it cannot be read at all (another user's).
 */
async function lockState(file: string): Promise<{ stale: boolean; holder: LockInfo | null }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const gone = (err as NodeJS.ErrnoException).code === 'ENOENT';
    return { stale: gone, holder: null };
  }
  try {
    const info = JSON.parse(text) as LockInfo;
    if (typeof info.pid !== 'number') throw new Error('no pid');
    return { stale: info.pid === process.pid || gone(info), holder: info };
  } catch {
    return { stale: await olderThanGrace(file), holder: null };
  }
}

async function olderThanGrace(file: string): Promise<boolean> {
  try {
    return Date.now() - (await stat(file)).mtimeMs > GRACE_MS;
  } catch {
    return true;
  }
}

function inUse(dataDir: string, holder: LockInfo | null): Error {
  return new Error(
    `${dataDir} is in use by "groundwork ${holder?.command ?? 'another command'}"` +
      `${holder ? ` (pid ${holder.pid})` : ''}. Stop it first, or set GROUNDWORK_DATA_DIR to ` +
      `another folder (if no such command is running, delete ${path.join(dataDir, LOCK_FILE)}).`,
  );
}

/**
 * Removes a stale lock so that it can be taken. Only one process does it: the one that creates
 * the takeover guard; the others find the folder in use. A guard left by a process that died
 * during a takeover is removed after the grace period.
 */
async function takeOver(dataDir: string, file: string): Promise<void> {
  const guard = `${file}.takeover`;
  try {
    await writeFile(guard, String(process.pid), { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (await olderThanGrace(guard)) await rm(guard, { force: true });
    throw inUse(dataDir, null);
  }
  try {
    // Another process may have taken over and written its own lock before this guard existed.
    const again = await lockState(file);
    if (!again.stale) throw inUse(dataDir, again.holder);
    await rm(file, { force: true });
  } finally {
    await rm(guard, { force: true });
  }
}

/**
 * Takes the lock or throws, naming the process that holds it. The lock file is created
 * exclusively, so of two commands started at once only one gets it; a lock left by a process that
 * has died is taken over by one command only ({@link takeOver}).
 */
export async function acquireLock(
  dataDir: string,
  info: Omit<LockInfo, 'pid'>,
): Promise<{ update(extra: Partial<LockInfo>): Promise<void>; release(): Promise<void> }> {
  await mkdir(dataDir, { recursive: true });
  const file = path.join(dataDir, LOCK_FILE);
  const key = path.resolve(dataDir);
  const holding = held.get(key);
  if (holding) throw inUse(dataDir, holding);
  const started = processIdentity(process.pid);
  let current: LockInfo = { ...info, pid: process.pid, ...(started ? { started } : {}) };
  for (let attempt = 0; ; attempt++) {
    try {
      await writeFile(file, JSON.stringify(current), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const state = await lockState(file);
      if (!state.stale || attempt > 0) throw inUse(dataDir, state.holder);
      await takeOver(dataDir, file);
    }
  }
  held.set(key, current);
  const ours = async () => (await lockState(file)).holder?.pid === process.pid;
  return {
    async update(extra) {
      current = { ...current, ...extra };
      held.set(key, current);
      await writeFileWhole(file, JSON.stringify(current));
    },
    async release() {
      held.delete(key);
      if (await ours()) await rm(file, { force: true });
    },
  };
}

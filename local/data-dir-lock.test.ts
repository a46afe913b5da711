/**
 * The data folder's lock: one process at a time, a live holder named in the refusal, a dead one's
 * lock taken over, and of commands started at once exactly one wins. Other processes are real
 * child processes: the lock treats this process's own pid as its own.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { acquireLock, processIdentity } from './data-dir-lock';

const root = path.resolve(__dirname, '..');

/** A process that stays alive until killed. */
function sleeper(): ChildProcess {
  return spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const gone = sleeper();
  const exited = new Promise((resolve) => gone.on('exit', resolve));
  gone.kill();
  await exited;
  return gone.pid!;
}

/**
 * A child process that tries to take the lock at the wall-clock time `at` (so that several try at
 * once, whatever their start-up took) and prints `got` or `busy`; a winner holds the lock until
 * it is killed, so that one starting late finds it held.
 */
function contender(dir: string, at: number, children: ChildProcess[]): Promise<string> {
  const script = `const { acquireLock } = require('./local/data-dir-lock');
    setTimeout(() => acquireLock(${JSON.stringify(dir)}, { command: 'test' })
      .then(() => { console.log('got'); setInterval(() => {}, 1000); }, () => console.log('busy')),
      Math.max(0, ${at} - Date.now()));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', 'tsx/cjs', '-e', script], { cwd: root });
    children.push(child);
    child.stdout.on('data', (d: Buffer) => resolve(d.toString().trim()));
    child.on('error', reject);
    // 'close', not 'exit': a child that prints and exits at once may be seen to exit before its
    // output is read.
    child.on('close', () => resolve('exited without a word'));
  });
}

describe('acquireLock', () => {
  let dir: string;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'groundwork-lock-'));
  });
  afterEach(async () => {
    for (const c of children.splice(0)) c.kill();
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses while another live process holds the folder, naming it', async () => {
    const holder = sleeper();
    children.push(holder);
    await writeFile(
      path.join(dir, 'lock.json'),
      JSON.stringify({ pid: holder.pid, command: 'start' }),
    );
    await expect(acquireLock(dir, { command: 'ask' })).rejects.toThrow(
      `is in use by "groundwork start" (pid ${holder.pid})`,
    );
  });

  // Where the system tells which process has a pid (Linux's /proc), a reused pid is no holder.
  const tellsProcesses = processIdentity(process.pid) !== null;
  (tellsProcesses ? it : it.skip)(
    "takes over a lock whose pid another process has since taken, not a live holder's",
    async () => {
      const other = sleeper();
      children.push(other);
      await new Promise((resolve) => other.on('spawn', resolve));
      const file = path.join(dir, 'lock.json');
      // The holder crashed, and its pid now belongs to another process (or to one of a later boot).
      await writeFile(file, JSON.stringify({ pid: other.pid, started: 'x:1', command: 'start' }));
      const lock = await acquireLock(dir, { command: 'ask' });
      expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
        pid: process.pid,
        started: processIdentity(process.pid),
        command: 'ask',
      });
      await lock.release();
      // The same pid written by that very process holds the folder.
      const started = processIdentity(other.pid!);
      await writeFile(file, JSON.stringify({ pid: other.pid, started, command: 'start' }));
      await expect(acquireLock(dir, { command: 'ask' })).rejects.toThrow(
        `is in use by "groundwork start" (pid ${other.pid})`,
      );
    },
  );

  it('takes over the lock of a process that has exited, and releases it', async () => {
    await writeFile(
      path.join(dir, 'lock.json'),
      JSON.stringify({ pid: await deadPid(), command: 'x' }),
    );
    const lock = await acquireLock(dir, { command: 'ask' });
    expect(JSON.parse(await readFile(path.join(dir, 'lock.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
      command: 'ask',
    });
    await lock.release();
    await expect(readFile(path.join(dir, 'lock.json'))).rejects.toThrow();
  });

  it('treats a lock file still being written as held, and one unreadable for long as stale', async () => {
    const file = path.join(dir, 'lock.json');
    await writeFile(file, '');
    await expect(acquireLock(dir, { command: 'ask' })).rejects.toThrow('is in use by');
    const old = new Date(Date.now() - 60_000);
    await utimes(file, old, old);
    await expect(acquireLock(dir, { command: 'ask' })).resolves.toBeDefined();
  });

  it('refuses a second lock on a folder this process holds, until it is released', async () => {
    const lock = await acquireLock(dir, { command: 'start' });
    await expect(acquireLock(dir, { command: 'ask' })).rejects.toThrow(
      `is in use by "groundwork start" (pid ${process.pid})`,
    );
    await lock.release();
    await (await acquireLock(dir, { command: 'ask' })).release();
  });

  it('releases only its own lock, never one another process has taken', async () => {
    const lock = await acquireLock(dir, { command: 'ask' });
    const other = sleeper();
    children.push(other);
    const theirs = JSON.stringify({ pid: other.pid, command: 'start' });
    await writeFile(path.join(dir, 'lock.json'), theirs);
    await lock.release();
    expect(await readFile(path.join(dir, 'lock.json'), 'utf8')).toBe(theirs);
  });

  it('writes an update whole: the lock names the server it records', async () => {
    const lock = await acquireLock(dir, { command: 'start' });
    await lock.update({ httpUrl: 'http://127.0.0.1:3000' });
    expect(JSON.parse(await readFile(path.join(dir, 'lock.json'), 'utf8'))).toMatchObject({
      pid: process.pid,
      command: 'start',
      httpUrl: 'http://127.0.0.1:3000',
    });
    await lock.release();
  });

  it("lets exactly one of several commands started at once take a dead process's lock", async () => {
    await writeFile(
      path.join(dir, 'lock.json'),
      JSON.stringify({ pid: await deadPid(), command: 'x' }),
    );
    const at = Date.now() + 5000;
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => contender(dir, at, children)));
    expect(outcomes.sort()).toEqual(['busy', 'busy', 'busy', 'got']);
  }, 60_000);

  it('lets exactly one of several commands started at once take the folder', async () => {
    const at = Date.now() + 5000;
    const outcomes = await Promise.all([1, 2, 3, 4].map(() => contender(dir, at, children)));
    expect(outcomes.sort()).toEqual(['busy', 'busy', 'busy', 'got']);
  }, 60_000);
});

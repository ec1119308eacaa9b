// Durability of SQLite commits without waiting on the disk on the server's one thread (issue 7).
//
// With `synchronous = FULL` every commit calls fsync on the write-ahead log inside COMMIT, on the
// thread that answers every request: 0.45 ms of the 0.7 ms a commit took on the bench's machine,
// and more while another thread checkpoints to the same disk. The writer runs with
// `synchronous = NORMAL` instead (SQLite still syncs the log before every checkpoint and the
// database file after it, so the file is never corrupted), and a commit is reported done only once
// this has called fdatasync on the log, on libuv's thread pool: a write is acknowledged only when
// it is on disk, as before. Commits that come while a sync runs share the next one.
import { close, fdatasync, fstat, fsync, open, stat } from 'node:fs';
import { dirname } from 'node:path';
import { promisify } from 'node:util';

const fdatasyncAsync = promisify(fdatasync);
const fstatAsync = promisify(fstat);
const statAsync = promisify(stat);
const openAsync = promisify(open);
const closeAsync = promisify(close);
const fsyncAsync = promisify(fsync);

/** How often the log's name is checked against the open descriptor (see file()). */
const CHECK_EVERY_MS = 1000;

export class WalSync {
  /** The log's descriptor and the file it was opened on. */
  private log: { fd: number; ino: number; dev: number } | null = null;
  /** When the log's name was last checked against the descriptor (performance.now()). */
  private checkedAt = 0;
  private current: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  /** Write epochs: the latest one asked for, and the latest one known to be on disk. */
  private asked = 0;
  private synced = 0;

  constructor(private readonly walPath: string) {}

  /** The write epoch up to which every commit is on disk. */
  durableEpoch(): number {
    return this.synced;
  }

  /**
   * Resolves once everything written to the log before the call is on disk; `epoch` is the write
   * epoch the caller's commit made (durableEpoch reaches it then).
   */
  sync(epoch: number): Promise<void> {
    if (epoch > this.asked) this.asked = epoch;
    if (this.queued) return this.queued;
    if (!this.current) return this.start();
    // The sync under way may have begun before this commit: the next one covers it.
    const after = this.current;
    this.queued = after.then(noop, noop).then(() => {
      this.queued = null;
      return this.start();
    });
    return this.queued;
  }

  private start(): Promise<void> {
    const covers = this.asked;
    const p = this.flush().then(() => {
      if (covers > this.synced) this.synced = covers;
    });
    this.current = p;
    const clear = () => {
      if (this.current === p) this.current = null;
    };
    p.then(clear, clear);
    return p;
  }

  private async flush(): Promise<void> {
    const fd = await this.file();
    await fdatasyncAsync(fd);
  }

  /** The log's descriptor, opened again if the file was replaced (it is, when the last connection to the database closes). */
  private async file(): Promise<number> {
    if (this.log !== null) {
      // SQLite removes the log only when the last connection to the database closes, and this
      // writer's connection is open for as long as this object is used: the file cannot be
      // replaced under it. The name is still compared with the file noted at open, as a guard
      // against a hand that removes it, but at most once a second: each check is a call into
      // libuv's pool, 0.1-0.4 ms of the server's thread per commit under the mixed load (issue 7).
      const now = performance.now();
      if (now - this.checkedAt < CHECK_EVERY_MS) return this.log.fd;
      this.checkedAt = now;
      const onDisk = await statAsync(this.walPath).catch(() => null);
      if (onDisk && onDisk.ino === this.log.ino && onDisk.dev === this.log.dev) return this.log.fd;
      const old = this.log.fd;
      this.log = null;
      await closeAsync(old).catch(noop);
    }
    // Opened for writing (nothing is written through it): fsync needs that on some systems.
    const fd = await openAsync(this.walPath, 'r+');
    const { ino, dev } = await fstatAsync(fd).catch(async (err: unknown) => {
      await closeAsync(fd).catch(noop);
      throw err;
    });
    this.log = { fd, ino, dev };
    this.checkedAt = performance.now();
    // A log file made since the last sync must be found after a power failure too: its directory
    // entry is synced once (SQLite would do it at the first checkpoint).
    const dir = await openAsync(dirname(this.walPath), 'r').catch(() => null);
    if (dir !== null) {
      await fsyncAsync(dir).catch(noop);
      await closeAsync(dir).catch(noop);
    }
    return fd;
  }

  async close(): Promise<void> {
    await this.current?.catch(noop);
    await this.queued?.catch(noop);
    if (this.log !== null) await closeAsync(this.log.fd).catch(noop);
    this.log = null;
  }
}

function noop(): void {}

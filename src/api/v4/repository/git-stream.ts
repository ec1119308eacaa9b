// Sending what a git process writes (an archive, a blob) as a response, the way GitLab Workhorse
// does: nothing is committed until git has written its first bytes or exited, so a failure git
// meets at once is a clean 404; a failure after that aborts the connection instead of ending a
// truncated response that would look complete. A process still running when the server closes is
// stopped, as is one whose client goes away.
import type { ChildProcess } from 'node:child_process';
import type { ApiError } from '../../../http/errors.js';
import type { Ctx } from '../../../http/route.js';
import type { AppContext } from '../../../context.js';

const live = new Map<AppContext, Set<ChildProcess>>();

function track(app: AppContext, proc: ChildProcess): void {
  let set = live.get(app);
  if (!set) {
    live.set(app, (set = new Set()));
    app.onClose.push(() => {
      for (const p of set!) p.kill('SIGKILL');
      set!.clear();
      live.delete(app);
    });
  }
  set.add(proc);
  proc.once('close', () => set!.delete(proc));
}

/** The first chunk git writes, or how it ended without writing any. */
function firstChunk(proc: ChildProcess): Promise<{ chunk: Buffer } | { code: number | null } | { error: Error }> {
  return new Promise((resolve) => {
    const out = proc.stdout!;
    const onReadable = () => {
      const chunk = out.read() as Buffer | null;
      if (chunk !== null) {
        cleanup();
        out.unshift(chunk);
        resolve({ chunk });
      }
    };
    const onClose = (code: number | null) => {
      cleanup();
      resolve({ code });
    };
    const onError = (error: Error) => {
      cleanup();
      resolve({ error });
    };
    const cleanup = () => {
      out.off('readable', onReadable);
      proc.off('close', onClose);
      proc.off('error', onError);
    };
    out.on('readable', onReadable);
    proc.once('close', onClose);
    proc.once('error', onError);
  });
}

export interface GitStreamOptions {
  /** The Content-Type, chosen from the first bytes (empty when git wrote nothing). */
  type: (first: Buffer) => string;
  /** What a process that failed before writing anything answers. */
  failed: () => ApiError;
  headers?: Record<string, string>;
}

export async function sendGitStream(c: Ctx, proc: ChildProcess, opts: GitStreamOptions): Promise<unknown> {
  // A process git could not even start (a missing directory, a process limit) must not crash the server.
  proc.on('error', (err) => c.req.log.warn({ err }, 'git could not run'));
  track(c.app, proc);
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => {
    if (stderr.length < 4096) stderr += d.toString('utf8');
  });
  c.reply.raw.on('close', () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
  });
  const first = await firstChunk(proc);
  if ('error' in first || ('code' in first && first.code !== 0)) {
    c.req.log.warn({ stderr, code: 'code' in first ? first.code : undefined }, 'git failed before writing');
    c.header('Cache-Control', 'no-store');
    throw opts.failed();
  }
  for (const [name, value] of Object.entries(opts.headers ?? {})) c.header(name, value);
  const type = opts.type('chunk' in first ? first.chunk : Buffer.alloc(0));
  if ('code' in first) return c.reply.code(200).type(type).send(Buffer.alloc(0));
  // Failing after the first bytes: the connection is dropped, so the client sees an incomplete download.
  proc.once('close', (code) => {
    if (code !== 0) {
      c.req.log.warn({ stderr, code }, 'git failed while writing');
      c.reply.raw.destroy();
    }
  });
  return c.reply.code(200).type(type).send(proc.stdout);
}

/**
 * Spawning the real `git` binary. Every invocation goes through here so that
 * the environment is sanitised the same way everywhere: we never use a shell,
 * always pass argument arrays, and never let GIT_* variables inherited from the
 * server's own environment (e.g. when it runs inside a hook or a test runner)
 * redirect git to another repository or index.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { GitError } from './errors.js';

export const GIT_BINARY = 'git';

/** Inherited GIT_* variables that are operator choices rather than per-command state. */
const KEPT_GIT_VARS = new Set([
  'GIT_EXEC_PATH',
  'GIT_CONFIG_GLOBAL',
  'GIT_CONFIG_SYSTEM',
  'GIT_CONFIG_NOSYSTEM',
  'GIT_TRACE',
  'GIT_TRACE2',
  'GIT_TRACE2_EVENT',
  'GIT_TRACE_PACKET',
  'GIT_TRACE_PERFORMANCE',
]);

let baseEnvCache: Record<string, string> | null = null;

function baseEnv(): Record<string, string> {
  if (baseEnvCache) return baseEnvCache;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (key.startsWith('GIT_') && !KEPT_GIT_VARS.has(key)) continue;
    env[key] = value;
  }
  // English messages: we classify some failures by their stderr text.
  env.LC_ALL = 'C';
  env.LANGUAGE = 'C';
  // Never block on a credential or editor prompt in a server process.
  env.GIT_TERMINAL_PROMPT = '0';
  env.GIT_EDITOR = 'true';
  // Replace refs could make a forge show content that is not what was pushed.
  env.GIT_NO_REPLACE_OBJECTS = '1';
  baseEnvCache = env;
  return env;
}

/** Environment for a git child process: sanitised base + per-call additions. */
export function gitEnv(extra?: Record<string, string | undefined>): Record<string, string> {
  const env = { ...baseEnv() };
  if (extra) {
    for (const [key, value] of Object.entries(extra)) {
      if (value === undefined) delete env[key];
      else env[key] = value;
    }
  }
  return env;
}

export interface RunOptions {
  /** Repository directory: sets GIT_DIR (skips discovery and the safe.directory ownership check) and cwd. */
  gitDir?: string;
  cwd?: string;
  env?: Record<string, string | undefined>;
  input?: Buffer | string;
  /** Exit codes that are not errors (default [0]). */
  okCodes?: number[];
  /** Abort (kill git) when stdout grows beyond this many bytes. */
  maxBuffer?: number;
}

export interface RunResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

const DEFAULT_MAX_BUFFER = 512 * 1024 * 1024;

/** Spawns git with a sanitised environment; the caller wires up the streams. */
export function spawnGit(args: string[], opts: { gitDir?: string; cwd?: string; env?: Record<string, string | undefined> } = {}): ChildProcess {
  const extra: Record<string, string | undefined> = { ...opts.env };
  if (opts.gitDir) extra.GIT_DIR = opts.gitDir;
  const spawnOpts: SpawnOptions = {
    env: gitEnv(extra),
    stdio: ['pipe', 'pipe', 'pipe'],
    windowsHide: true,
  };
  const cwd = opts.cwd ?? opts.gitDir;
  if (cwd) spawnOpts.cwd = cwd;
  return spawn(GIT_BINARY, args, spawnOpts);
}

/**
 * Runs git to completion and buffers its output. Rejects with
 * GitError('failed') when the exit code is not in `okCodes`, or with
 * GitError('not_found') when the working directory does not exist.
 */
export function runGit(args: string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise<RunResult>((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawnGit(args, opts);
    } catch (err) {
      reject(new GitError('failed', `cannot spawn git: ${(err as Error).message}`));
      return;
    }
    const chunks: Buffer[] = [];
    const errChunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const maxBuffer = opts.maxBuffer ?? DEFAULT_MAX_BUFFER;

    function fail(err: GitError): void {
      if (settled) return;
      settled = true;
      child.kill('SIGKILL');
      reject(err);
    }

    child.on('error', (err: NodeJS.ErrnoException) => {
      // ENOENT here means the cwd (the repository) is missing or git is not installed.
      const code = err.code === 'ENOENT' && opts.gitDir ? 'not_found' : 'failed';
      fail(new GitError(code, `git ${args[0]}: ${err.message}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBuffer) {
        fail(new GitError('failed', `git ${args[0]}: output exceeds ${maxBuffer} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      errChunks.push(chunk);
    });
    // git may exit before consuming all input (e.g. on an early error): EPIPE is expected then.
    child.stdin!.on('error', () => {});
    if (opts.input !== undefined) child.stdin!.end(opts.input);
    else child.stdin!.end();

    child.on('close', (code, signal) => {
      if (settled) return;
      settled = true;
      const stderr = Buffer.concat(errChunks).toString('utf8');
      const exit = code ?? (signal ? 128 + 9 : 1);
      const result: RunResult = { code: exit, stdout: Buffer.concat(chunks), stderr };
      if ((opts.okCodes ?? [0]).includes(exit)) resolve(result);
      else reject(new GitError('failed', `git ${args[0]} exited with ${exit}: ${firstLine(stderr)}`, stderr));
    });
  });
}

/** Convenience: run and return stdout as a UTF-8 string. */
export async function gitText(args: string[], opts: RunOptions = {}): Promise<string> {
  return (await runGit(args, opts)).stdout.toString('utf8');
}

export function firstLine(text: string): string {
  const trimmed = text.trim();
  const nl = trimmed.indexOf('\n');
  return nl === -1 ? trimmed : trimmed.slice(0, nl);
}

let versionPromise: Promise<[number, number, number]> | null = null;

/** The installed git version, probed once per process. */
export function gitVersion(): Promise<[number, number, number]> {
  if (!versionPromise) {
    versionPromise = gitText(['--version']).then((out) => {
      const m = /(\d+)\.(\d+)(?:\.(\d+))?/.exec(out);
      if (!m) return [0, 0, 0] as [number, number, number];
      return [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)] as [number, number, number];
    });
  }
  return versionPromise;
}

export async function gitAtLeast(major: number, minor: number): Promise<boolean> {
  const [ma, mi] = await gitVersion();
  return ma > major || (ma === major && mi >= minor);
}

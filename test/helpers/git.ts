// The environment tests run the git CLI in: no prompts, no system or user configuration, and a
// fixed identity for commits made on the client side.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
export const GIT_ENV = {
  ...process.env,
  GIT_TERMINAL_PROMPT: '0',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Local Dev',
  GIT_AUTHOR_EMAIL: 'local@example.com',
  GIT_COMMITTER_NAME: 'Local Dev',
  GIT_COMMITTER_EMAIL: 'local@example.com',
};

const run = promisify(execFile);

/** Runs the git CLI in `cwd` with GIT_ENV; returns its stdout. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', args, { cwd, env: GIT_ENV });
  return stdout;
}

/** Runs git expecting failure; returns its stderr. */
export async function gitFails(cwd: string, ...args: string[]): Promise<string> {
  try {
    await run('git', args, { cwd, env: GIT_ENV });
  } catch (err) {
    return String((err as { stderr?: string }).stderr ?? err);
  }
  throw new Error(`git ${args.join(' ')} unexpectedly succeeded`);
}

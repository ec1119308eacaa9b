// Running the python-gitlab client flows (Debian's python3-gitlab, installed by .ci/run).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

export const PYTHON = '/usr/bin/python3';
export const runPython = promisify(execFile);

/** Whether python3 with the gitlab module is there. */
export async function hasPythonGitlab(): Promise<boolean> {
  if (!existsSync(PYTHON)) return false;
  try {
    await runPython(PYTHON, ['-c', 'import gitlab']);
    return true;
  } catch {
    return false;
  }
}

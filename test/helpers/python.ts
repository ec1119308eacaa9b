// Running the python-gitlab client flows (Debian's python3-gitlab, installed by .ci/run).
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

export const PYTHON = '/usr/bin/python3';
export const runPython = promisify(execFile);

/**
 * Whether python3 with the gitlab module is there. `npm test` installs it where it can (root with
 * apt: scripts/test.mjs); elsewhere the python-gitlab half of a client test is left out. Under CI
 * (CI set, as .ci/run does) it must be there: a missing client fails the test instead.
 */
export async function hasPythonGitlab(): Promise<boolean> {
  const found = existsSync(PYTHON) && (await runPython(PYTHON, ['-c', 'import gitlab']).then(() => true, () => false));
  if (!found && process.env.CI) throw new Error(`python-gitlab is not installed (${PYTHON} -c 'import gitlab' failed); .ci/run installs Debian's python3-gitlab`);
  return found;
}

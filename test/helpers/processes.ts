// Processes a server left behind: git children of its requests carry GIT_PROJECT_ROOT=<data dir>/...
import { readdirSync, readFileSync } from 'node:fs';

/** Pids whose environment names repositories under `dataDir` (Linux /proc; [] elsewhere). */
export function gitProcessesUnder(dataDir: string): number[] {
  if (process.platform !== 'linux') return [];
  const marker = `GIT_PROJECT_ROOT=${dataDir}`;
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'latin1').includes(marker)) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

/** Waits up to `ms` for those processes to end; returns the ones still there. */
export async function gitProcessesLeft(dataDir: string, ms = 5000): Promise<number[]> {
  let left = gitProcessesUnder(dataDir);
  for (let waited = 0; waited < ms && left.length > 0; waited += 100) {
    await new Promise((r) => setTimeout(r, 100));
    left = gitProcessesUnder(dataDir);
  }
  return left;
}

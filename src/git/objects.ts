/**
 * Reading many objects with a single `git cat-file --batch` spawn, and
 * parsing raw tree objects (which, unlike ls-tree, gives us entry modes for
 * exactly the directories we ask about).
 */
import { GitError } from './errors.js';
import { runGit } from './exec.js';

export interface BatchObject {
  oid: string;
  type: 'blob' | 'tree' | 'commit' | 'tag';
  size: number;
  content: Buffer;
}

export interface TreeEntry {
  /** Octal mode as stored in the tree ("40000" for trees, "100644", "100755", "120000", "160000"). */
  mode: string;
  name: string;
  oid: string;
}

/** Queries are "<rev>", "<rev>:<path>", "<rev>^{tree}"...; newlines cannot be expressed in the batch protocol. */
function checkQueries(queries: string[]): void {
  for (const q of queries) {
    if (/[\n\r\0]/.test(q)) throw new GitError('invalid_path', 'object names and paths must not contain line breaks');
  }
}

/**
 * Reads several objects at once; entries are null when the object is
 * missing (or the name is ambiguous). Contents are returned whole, so use it
 * for trees, commits and blobs of sane size.
 */
export async function catFileBatch(gitDir: string, queries: string[]): Promise<Array<BatchObject | null>> {
  if (queries.length === 0) return [];
  checkQueries(queries);
  const { stdout } = await runGit(['cat-file', '--batch'], { gitDir, input: queries.join('\n') + '\n' });
  const results: Array<BatchObject | null> = [];
  let pos = 0;
  for (let i = 0; i < queries.length; i += 1) {
    const nl = stdout.indexOf(0x0a, pos);
    if (nl === -1) throw new GitError('failed', 'truncated cat-file output');
    const header = stdout.toString('utf8', pos, nl);
    pos = nl + 1;
    const m = /^([0-9a-f]+) (blob|tree|commit|tag) (\d+)$/.exec(header);
    if (!m) {
      // "<query> missing" / "<query> ambiguous"
      results.push(null);
      continue;
    }
    const size = Number(m[3]);
    const content = stdout.subarray(pos, pos + size);
    pos += size + 1; // content is followed by a newline
    results.push({ oid: m[1]!, type: m[2] as BatchObject['type'], size, content });
  }
  return results;
}

/** Object ids, types and sizes without contents; null for missing objects. */
export async function catFileCheck(gitDir: string, queries: string[]): Promise<Array<{ oid: string; type: string; size: number } | null>> {
  if (queries.length === 0) return [];
  checkQueries(queries);
  const { stdout } = await runGit(['cat-file', '--batch-check'], { gitDir, input: queries.join('\n') + '\n' });
  const lines = stdout.toString('utf8').split('\n');
  return queries.map((_, i) => {
    const m = /^([0-9a-f]+) (\w+) (\d+)$/.exec(lines[i] ?? '');
    return m ? { oid: m[1]!, type: m[2]!, size: Number(m[3]) } : null;
  });
}

/** Parses a raw tree object: repeated "<mode> <name>\0<binary oid>". */
export function parseTree(content: Buffer, oidBytes = 20): TreeEntry[] {
  const entries: TreeEntry[] = [];
  let pos = 0;
  while (pos < content.length) {
    const space = content.indexOf(0x20, pos);
    const nul = content.indexOf(0x00, space + 1);
    if (space === -1 || nul === -1 || nul + 1 + oidBytes > content.length) {
      throw new GitError('failed', 'corrupt tree object');
    }
    entries.push({
      mode: content.toString('latin1', pos, space),
      name: content.toString('utf8', space + 1, nul),
      oid: content.toString('hex', nul + 1, nul + 1 + oidBytes),
    });
    pos = nul + 1 + oidBytes;
  }
  return entries;
}

/** Normalises a tree mode to the 6-digit form git prints elsewhere ("040000"). */
export function fullMode(mode: string): string {
  return mode.padStart(6, '0');
}

export function entryType(mode: string): 'tree' | 'blob' | 'commit' {
  if (mode === '40000' || mode === '040000') return 'tree';
  if (mode === '160000') return 'commit';
  return 'blob';
}

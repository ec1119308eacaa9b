/**
 * Parsing of `git diff-tree -r -z --raw -p` output into GitLab-shaped diff
 * entries. The raw (-z) section gives exact paths, modes and status; the
 * patch section gives the text. Both list the file pairs in the same order,
 * so the n-th "diff --git" chunk belongs to the n-th raw record, and we never
 * have to parse (quoted, ambiguous) paths out of patch headers.
 */
import { GitError } from './errors.js';

export interface Diff {
  old_path: string;
  new_path: string;
  /** "0" for a file that does not exist on that side, as GitLab does. */
  a_mode: string;
  b_mode: string;
  /** Unified diff of this file starting at the first "@@"; '' for binary or metadata-only changes. */
  diff: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  generated_file: boolean | null;
  /** Set when the file exceeds maxLinesPerFile / maxBytesPerFile; diff is then ''. */
  too_large?: boolean;
  /** Set when the total limits were reached before this file; diff is then ''. */
  collapsed?: boolean;
  /** Whether git considered the file binary. */
  binary?: boolean;
}

export interface DiffLimits {
  /** Files beyond this count are dropped and `overflow` is set. */
  maxFiles?: number;
  /** Per-file limits: a larger file keeps its metadata but gets `too_large` and an empty diff. */
  maxLinesPerFile?: number;
  maxBytesPerFile?: number;
  /** Once the sum of included diffs would exceed these, the remaining files are `collapsed` and `overflow` is set. */
  maxTotalLines?: number;
  maxTotalBytes?: number;
}

/** Arguments shared by every diff we parse: plumbing (ignores UI config such as diff.noprefix), no helpers. */
export const DIFF_TREE_ARGS = ['diff-tree', '-r', '-z', '--raw', '-p', '-M', '--no-abbrev', '--no-color', '--no-ext-diff', '--no-textconv'];

interface RawRecord {
  aMode: string;
  bMode: string;
  status: string;
  oldPath: string;
  newPath: string;
}

function readNulField(text: string, pos: number): [string, number] {
  const end = text.indexOf('\0', pos);
  if (end === -1) throw new GitError('failed', 'truncated raw diff output');
  return [text.slice(pos, end), end + 1];
}

/** Splits the -z raw records off the front; returns them and the offset of the patch text. */
function parseRaw(text: string): { records: RawRecord[]; patchStart: number } {
  const records: RawRecord[] = [];
  let pos = 0;
  while (pos < text.length && text[pos] === ':') {
    let header: string;
    [header, pos] = readNulField(text, pos);
    // ":<a_mode> <b_mode> <a_sha> <b_sha> <status><score>"
    const fields = header.slice(1).split(' ');
    if (fields.length < 5) throw new GitError('failed', `unexpected raw diff record: ${header}`);
    const status = fields[4]!.charAt(0);
    let oldPath: string;
    [oldPath, pos] = readNulField(text, pos);
    let newPath = oldPath;
    if (status === 'R' || status === 'C') [newPath, pos] = readNulField(text, pos);
    records.push({ aMode: fields[0]!, bMode: fields[1]!, status, oldPath, newPath });
  }
  // A NUL separates the raw section from the patch section.
  if (text[pos] === '\0') pos += 1;
  return { records, patchStart: pos };
}

/** Splits the patch text into one chunk per "diff --git" header. */
function splitPatches(patch: string): string[] {
  const chunks: string[] = [];
  if (!patch.startsWith('diff --git ')) return chunks;
  let start = 0;
  for (;;) {
    // Content lines always start with ' ', '+', '-' or '\', so this only matches headers.
    const next = patch.indexOf('\ndiff --git ', start);
    if (next === -1) {
      chunks.push(patch.slice(start));
      return chunks;
    }
    chunks.push(patch.slice(start, next + 1));
    start = next + 1;
  }
}

/** The hunk part of one file's patch, and whether git reported it as binary. */
function hunksOf(chunk: string): { diff: string; binary: boolean } {
  // The chunk starts with its "diff --git" line; header lines never start with "@@".
  const at = chunk.indexOf('\n@@');
  const header = at === -1 ? chunk : chunk.slice(0, at);
  const binary = /\n(?:Binary files |GIT binary patch)/.test(header);
  if (at === -1 || binary) return { diff: '', binary };
  return { diff: chunk.slice(at + 1), binary };
}

function gitlabMode(mode: string): string {
  return /^0+$/.test(mode) ? '0' : mode;
}

/** Parses the full output of DIFF_TREE_ARGS. */
export function parseDiffTree(output: Buffer | string): Diff[] {
  const text = typeof output === 'string' ? output : output.toString('utf8');
  const { records, patchStart } = parseRaw(text);
  const chunks = splitPatches(text.slice(patchStart));
  if (chunks.length !== records.length) {
    throw new GitError('failed', `diff output mismatch: ${records.length} files but ${chunks.length} patches`);
  }
  return records.map((rec, i) => {
    const { diff, binary } = hunksOf(chunks[i]!);
    const entry: Diff = {
      old_path: rec.oldPath,
      new_path: rec.newPath,
      a_mode: gitlabMode(rec.aMode),
      b_mode: gitlabMode(rec.bMode),
      diff,
      new_file: rec.status === 'A',
      renamed_file: rec.status === 'R',
      deleted_file: rec.status === 'D',
      generated_file: null,
    };
    if (binary) entry.binary = true;
    return entry;
  });
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n += 1;
  return text.endsWith('\n') ? n : n + 1;
}

/** Applies GitLab-like diff limits; returns the kept diffs and whether anything was cut. */
export function applyDiffLimits(diffs: Diff[], limits: DiffLimits = {}): { diffs: Diff[]; overflow: boolean } {
  let overflow = false;
  let kept = diffs;
  if (limits.maxFiles !== undefined && diffs.length > limits.maxFiles) {
    kept = diffs.slice(0, Math.max(0, limits.maxFiles));
    overflow = true;
  }
  let totalLines = 0;
  let totalBytes = 0;
  let collapsing = false;
  for (const d of kept) {
    if (collapsing) {
      d.diff = '';
      d.collapsed = true;
      continue;
    }
    const lines = countLines(d.diff);
    const bytes = Buffer.byteLength(d.diff);
    if ((limits.maxLinesPerFile !== undefined && lines > limits.maxLinesPerFile) ||
        (limits.maxBytesPerFile !== undefined && bytes > limits.maxBytesPerFile)) {
      d.diff = '';
      d.too_large = true;
      continue;
    }
    if ((limits.maxTotalLines !== undefined && totalLines + lines > limits.maxTotalLines) ||
        (limits.maxTotalBytes !== undefined && totalBytes + bytes > limits.maxTotalBytes)) {
      collapsing = true;
      overflow = true;
      d.diff = '';
      d.collapsed = true;
      continue;
    }
    totalLines += lines;
    totalBytes += bytes;
  }
  return { diffs: kept, overflow };
}

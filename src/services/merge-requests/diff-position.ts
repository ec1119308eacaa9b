// Threads on a line of a merge request's diff (GitLab's DiffNote and Gitlab::Diff::Position): the
// position a client sends is checked against the diff between its own base and head commits, as
// GitLab finds the line code of a position. An added line is named by `new_line` alone, a removed
// one by `old_line` alone, an unchanged line inside a hunk by both.
import type { Diff, GitRepository } from '../../git/index.js';
import { badRequest, notGiven, paramError } from '../../http/errors.js';
import type { ParamHash, ParamValue } from '../../http/params.js';
import { parseBoolean } from '../../http/params.js';
import { createHash } from 'node:crypto';

export interface DiffPosition {
  base_sha: string;
  start_sha: string;
  head_sha: string;
  old_path: string | null;
  new_path: string | null;
  position_type: 'text' | 'image' | 'file';
  old_line?: number | null;
  new_line?: number | null;
  line_range?: ParamHash | null;
  width?: number | null;
  height?: number | null;
  x?: number | null;
  y?: number | null;
}

const SHA = /^[0-9a-f]{7,64}$/i;
const POSITION_TYPES = ['text', 'image', 'file'] as const;

function str(h: ParamHash, key: string): string | null {
  const v = h[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' && typeof v !== 'number') throw paramError(`position[${key}] is invalid`);
  return String(v);
}

function int(h: ParamHash, key: string): number | null {
  const v: ParamValue | undefined = h[key];
  if (v === undefined || v === null || v === '') return null;
  const s = String(v);
  if (typeof v === 'object' || !/^\d{1,9}$/.test(s.trim())) throw paramError(`position[${key}] is invalid`);
  return Number(s);
}

/** The `position` hash as Grape checks it (required keys, types); nothing about the diff yet. */
export function readPosition(raw: ParamValue | undefined): DiffPosition {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw paramError('position is invalid');
  for (const key of ['base_sha', 'start_sha', 'head_sha', 'position_type']) {
    if (raw[key] === undefined || raw[key] === null) throw notGiven(`position[${key}]`);
  }
  const type = str(raw, 'position_type')!;
  if (!(POSITION_TYPES as readonly string[]).includes(type)) throw paramError('position[position_type] does not have a valid value');
  const pos: DiffPosition = {
    base_sha: str(raw, 'base_sha')!,
    start_sha: str(raw, 'start_sha')!,
    head_sha: str(raw, 'head_sha')!,
    old_path: str(raw, 'old_path'),
    new_path: str(raw, 'new_path'),
    position_type: type as DiffPosition['position_type'],
  };
  if (type === 'text') {
    pos.old_line = int(raw, 'old_line');
    pos.new_line = int(raw, 'new_line');
    const range = raw.line_range;
    if (range !== undefined && range !== null && (typeof range !== 'object' || Array.isArray(range))) throw paramError('position[line_range] is invalid');
    pos.line_range = (range as ParamHash | undefined) ?? null;
  } else if (type === 'image') {
    for (const k of ['width', 'height', 'x', 'y'] as const) pos[k] = int(raw, k);
  }
  // ignore_whitespace_change is accepted and not kept (GitLab leaves it out of the answer too).
  if (raw.ignore_whitespace_change !== undefined) parseBoolean(raw.ignore_whitespace_change);
  return pos;
}

interface LineIndex {
  added: Set<number>;
  removed: Set<number>;
  /** new line number → old line number of the unchanged lines shown in hunks. */
  context: Map<number, number>;
}

/** The lines a file's hunks show (the text from the first `@@`). */
export function indexHunks(diff: string): LineIndex {
  const out: LineIndex = { added: new Set(), removed: new Set(), context: new Map() };
  let oldNo = 0;
  let newNo = 0;
  for (const line of diff.split('\n')) {
    const header = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (header) {
      oldNo = Number(header[1]);
      newNo = Number(header[2]);
      continue;
    }
    if (oldNo === 0 && newNo === 0) continue;
    const mark = line[0];
    if (mark === '+') out.added.add(newNo++);
    else if (mark === '-') out.removed.add(oldNo++);
    else if (mark === ' ') out.context.set(newNo++, oldNo++);
  }
  return out;
}

/** GitLab's line code: sha1 of the file path, then the old and new line numbers. */
function lineCode(path: string, oldLine: number | null | undefined, newLine: number | null | undefined): string {
  return `${createHash('sha1').update(path).digest('hex')}_${oldLine ?? 0}_${newLine ?? 0}`;
}

const INVALID_LINE = `Note {:line_code=>["can't be blank", "must be a valid line code"]}`;
const INCOMPLETE = `Note {:line_code=>["can't be blank", "must be a valid line code"], :position=>["is incomplete"]}`;

/**
 * Checks a position against the diff between its base and head commits; returns the position to
 * keep (paths filled from the file found) and its line code. A position the diff does not show is
 * GitLab's 400 `Note {:line_code=>[…]}`.
 */
export async function checkPosition(repo: GitRepository, pos: DiffPosition, limits: Parameters<GitRepository['diff']>[2]): Promise<{ position: DiffPosition; lineCode: string | null }> {
  const path = pos.new_path ?? pos.old_path;
  const lines = pos.position_type === 'text' && (pos.old_line != null || pos.new_line != null);
  if (!path || (pos.position_type === 'text' && !lines)) throw badRequest(INCOMPLETE);
  if (![pos.base_sha, pos.start_sha, pos.head_sha].every((s) => SHA.test(s))) throw badRequest(pos.position_type === 'text' ? INVALID_LINE : INCOMPLETE);
  let diffs: Diff[];
  try {
    diffs = (await repo.diff(pos.base_sha, pos.head_sha, limits)).diffs;
  } catch {
    throw badRequest(pos.position_type === 'text' ? INVALID_LINE : INCOMPLETE);
  }
  const file = diffs.find((d) => (pos.new_path !== null && d.new_path === pos.new_path) || (pos.new_path === null && d.old_path === pos.old_path));
  if (!file) throw badRequest(pos.position_type === 'text' ? INVALID_LINE : INCOMPLETE);
  const position: DiffPosition = { ...pos, old_path: pos.old_path ?? file.old_path, new_path: pos.new_path ?? file.new_path };
  if (pos.position_type !== 'text') return { position, lineCode: null };
  const index = indexHunks(file.diff);
  const { old_line: o, new_line: n } = pos;
  const shown = n != null && o != null ? index.context.get(n) === o : n != null ? index.added.has(n) : index.removed.has(o!);
  if (!shown) throw badRequest(INVALID_LINE);
  return { position, lineCode: lineCode(file.new_path, o, n) };
}

/** The position as GitLab's answer shows it (Position#to_h without ignore_whitespace_change). */
export function presentPosition(json: string): Record<string, unknown> {
  const p = JSON.parse(json) as DiffPosition;
  const out: Record<string, unknown> = {
    base_sha: p.base_sha,
    start_sha: p.start_sha,
    head_sha: p.head_sha,
    old_path: p.old_path,
    new_path: p.new_path,
    position_type: p.position_type,
  };
  if (p.position_type === 'text') {
    out.old_line = p.old_line ?? null;
    out.new_line = p.new_line ?? null;
    out.line_range = p.line_range ?? null;
  } else if (p.position_type === 'image') {
    out.width = p.width ?? null;
    out.height = p.height ?? null;
    out.x = p.x ?? null;
    out.y = p.y ?? null;
  }
  return out;
}

// Repository files (GitLab's lib/api/files.rb): read a file as JSON or raw, and create, update or
// delete one file as a commit on a branch. File paths containing '/' arrive URL-encoded.
import { assertCanPushToBranch } from './protection.js';
import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { apiError, notFound, notGiven, paramError } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import type { Blob, Commit } from '../../../git/index.js';
import { gitlabTime } from '../entities/commit.js';
import { repoPathProblem } from '../../../git/paths.js';
import { isSafeRevision } from '../../../git/refname.js';
import { commitActions, type ActionInput } from '../../../services/repository/commit-actions.js';
import { defaultRef } from '../../../services/repository/default-branch.js';
import { commitPeople } from '../../../services/repository/identity.js';
import { readableRepo, writableRepo, type ProjectRepo } from '../../../services/repository/project-repo.js';
import { pathParam, requiredString } from './common.js';

const STALE_FILE = 'You are attempting to update a file that has changed since you started editing it.';

function filePathParam(c: Ctx): string {
  const path = pathParam(c, 'file_path');
  if (repoPathProblem(path)) throw paramError('file_path should be a valid file path');
  return path;
}

interface FileData {
  path: string;
  ref: string;
  commitId: string;
  blob: Blob;
  lastCommitId: string;
}

/** The file at `ref` (404 Commit Not Found for an unknown ref, 404 File Not Found for a missing file). */
async function loadFile(pr: ProjectRepo, ref: string | null, path: string): Promise<FileData> {
  const commitId = ref && isSafeRevision(ref) ? await pr.repo.resolveRef(ref) : null;
  if (!ref || !commitId) throw notFound('Commit');
  const blob = await pr.repo.readBlob(commitId, path);
  if (!blob) throw notFound('File');
  const last = await pr.repo.lastCommitForPath(commitId, path);
  return { path, ref, commitId, blob, lastCommitId: last?.id ?? commitId };
}

function fileName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Header values must be printable ASCII; anything else is percent-encoded rather than refused. */
function headerSafe(value: string): string {
  return /^[\x20-\x7e]*$/.test(value) ? value : encodeURIComponent(value);
}

/** The X-Gitlab-* headers GitLab sets on every file read (GET, HEAD and raw). */
function setFileHeaders(c: Ctx, f: FileData): void {
  const sha256 = createHash('sha256').update(f.blob.content).digest('hex');
  c.header('X-Gitlab-Blob-Id', f.blob.blobId);
  c.header('X-Gitlab-Commit-Id', f.commitId);
  c.header('X-Gitlab-Content-Sha256', sha256);
  c.header('X-Gitlab-Encoding', 'base64');
  c.header('X-Gitlab-Execute-Filemode', String(f.blob.mode === '100755'));
  c.header('X-Gitlab-File-Name', headerSafe(fileName(f.path)));
  c.header('X-Gitlab-File-Path', headerSafe(f.path));
  c.header('X-Gitlab-Last-Commit-Id', f.lastCommitId);
  c.header('X-Gitlab-Ref', headerSafe(f.ref));
  c.header('X-Gitlab-Size', String(f.blob.size));
}

async function readFileFor(c: Ctx, refRequired: boolean): Promise<FileData> {
  if (refRequired) c.params.requireAll(['ref']);
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const path = filePathParam(c);
  const ref = c.params.string('ref') || (await defaultRef(pr.repo, pr.project.default_branch));
  const f = await loadFile(pr, ref, path);
  setFileHeaders(c, f);
  return f;
}

// GET /projects/:id/repository/files/:file_path
async function showFile(c: Ctx) {
  const f = await readFileFor(c, true);
  return {
    file_name: fileName(f.path),
    file_path: f.path,
    size: f.blob.size,
    encoding: 'base64',
    content_sha256: createHash('sha256').update(f.blob.content).digest('hex'),
    ref: f.ref,
    blob_id: f.blob.blobId,
    commit_id: f.commitId,
    last_commit_id: f.lastCommitId,
    execute_filemode: f.blob.mode === '100755',
    content: f.blob.content.toString('base64'),
  };
}

// HEAD /projects/:id/repository/files/:file_path
async function fileMetadata(c: Ctx) {
  await readFileFor(c, true);
  c.status(200);
  return c.reply.send();
}

export function looksLikeText(content: Buffer): boolean {
  if (content.subarray(0, 8000).includes(0)) return false;
  return Buffer.from(content.toString('utf8'), 'utf8').equals(content);
}

/**
 * A blame's `ref` (required, not blank) and `range[start]`/`range[end]` (both or neither, positive
 * integers, start ≤ end), with Grape's messages, all of them in one answer.
 */
function blameParams(c: Ctx): { ref: string; range: { start: number; end: number } | null } {
  const errors: string[] = [];
  const rawRef = c.params.has('ref') ? c.params.raw.ref : null;
  // A missing attribute is named alone (spec document 1 §7.2), before any other error.
  if (rawRef === null || rawRef === undefined) throw notGiven('ref');
  if (typeof rawRef === 'string' && rawRef.trim() === '') errors.push('ref is empty');
  const ref = rawRef === null || rawRef === undefined ? '' : (c.params.string('ref') ?? '');
  if (!c.params.has('range')) {
    if (errors.length) throw paramError(errors.join(', '));
    return { ref, range: null };
  }
  const range = c.params.hash('range')!;
  const read = (name: 'start' | 'end'): number | undefined => {
    const v = range[name];
    if (v === undefined) throw notGiven(`range[${name}]`);
    if (v === null || (typeof v === 'string' && v.trim() === '')) {
      errors.push(`range[${name}] is empty`);
      return undefined;
    }
    if (!(typeof v === 'number' || (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)))) {
      errors.push(`range[${name}] is invalid`);
      return undefined;
    }
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n <= 0) {
      errors.push(`range[${name}] does not have a valid value`);
      return undefined;
    }
    return n;
  };
  const start = read('start');
  const end = read('end');
  if (errors.length) throw paramError(errors.join(', '));
  return { ref, range: { start: start!, end: end! } };
}

/** Lines of a file as git counts them (a last line without a newline counts too). */
function lineCount(content: Buffer): number {
  if (content.length === 0) return 0;
  let n = 0;
  for (let i = content.indexOf(0x0a); i >= 0; i = content.indexOf(0x0a, i + 1)) n++;
  return content[content.length - 1] === 0x0a ? n : n + 1;
}

// GET /projects/:id/repository/files/:file_path/blame
async function blameFile(c: Ctx) {
  const { ref, range } = blameParams(c);
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const path = filePathParam(c);
  const f = await loadFile(pr, ref, path);
  setFileHeaders(c, f);
  // Checked by the endpoint once the file is found (GitLab's fetch_blame_range).
  if (range && range.start > range.end) throw apiError(400, 'range[start] must be less than or equal to range[end]');
  // Lines past the end are not an error: GitLab answers what there is, or nothing.
  const total = lineCount(f.blob.content);
  const start = range?.start ?? 1;
  const end = Math.min(range?.end ?? total, total);
  if (total === 0 || start > total) return [];
  const lines = await pr.repo.blame(f.commitId, path, start, end);
  const commits = new Map((await pr.repo.getCommits([...new Set(lines.map((l) => l.commitId))])).map((cm) => [cm.id, cm]));
  // Entities::BlameRange: consecutive lines of one commit form one range.
  const ranges: Array<{ commit: ReturnType<typeof blameCommit>; lines: string[] }> = [];
  let last = '';
  for (const line of lines) {
    if (line.commitId !== last || ranges.length === 0) {
      ranges.push({ commit: blameCommit(commits.get(line.commitId)!), lines: [] });
      last = line.commitId;
    }
    ranges[ranges.length - 1]!.lines.push(line.text.toString('utf8'));
  }
  return ranges;
}

/** Entities::BlameRangeCommit, in GitLab's order (the full message). */
function blameCommit(commit: Commit) {
  return {
    id: commit.id,
    parent_ids: commit.parent_ids,
    message: commit.message,
    authored_date: gitlabTime(commit.authored_date),
    author_name: commit.author_name,
    author_email: commit.author_email,
    committed_date: gitlabTime(commit.committed_date),
    committer_name: commit.committer_name,
    committer_email: commit.committer_email,
  };
}

/** A Content-Disposition header for a file name: an ASCII `filename` and the exact `filename*`. */
export function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  return `${kind}; filename="${name.replace(/[^\x20-\x7e]|["\\]/g, '_')}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** A file's bytes as GitLab's raw routes send them: text or octet-stream, inline with its name (repository files, snippets). */
export function sendInlineFile(c: Ctx, path: string, content: Buffer) {
  const type = looksLikeText(content) ? 'text/plain; charset=utf-8' : 'application/octet-stream';
  c.header('Content-Disposition', contentDisposition('inline', fileName(path)));
  return c.reply.code(200).type(type).send(content);
}

// GET /projects/:id/repository/files/:file_path/raw
async function rawFile(c: Ctx) {
  const f = await readFileFor(c, false);
  return sendInlineFile(c, f.path, f.blob.content);
}

/** `content` decoded per `encoding` (text or base64). */
function contentParam(c: Ctx): Buffer {
  const encoding = c.params.enum('encoding', ['text', 'base64'] as const) ?? 'text';
  const content = c.params.string('content') ?? '';
  if (encoding === 'base64') {
    if (!/^[A-Za-z0-9+/=\s_-]*$/.test(content)) throw apiError(400, 'content is not valid base64');
    return Buffer.from(content, 'base64');
  }
  return Buffer.from(content, 'utf8');
}

async function commitOneFile(c: Ctx, action: ActionInput['action'], required: string[]) {
  c.params.requireAll(required);
  const pr = await writableRepo(c, pathParam(c, 'id'));
  const path = filePathParam(c);
  const branch = requiredString(c, 'branch');
  const message = requiredString(c, 'commit_message');
  const input: ActionInput = { action, file_path: path };
  if (action !== 'delete') input.content = contentParam(c);
  const mode = c.params.bool('execute_filemode');
  if (mode !== undefined && action !== 'delete') input.execute_filemode = mode;
  const lastCommitId = c.params.string('last_commit_id');
  if (lastCommitId) input.last_commit_id = lastCommitId;
  const startBranch = c.params.string('start_branch');
  const user = c.requireUser();
  await assertCanPushToBranch(c, pr, branch, 400);
  await commitActions(c.app, pr.project.id, pr.repo, {
    branch,
    ...(startBranch ? { startBranch } : {}),
    message,
    actions: [input],
    actorId: user.id,
    people: commitPeople(user, { authorName: c.params.string('author_name'), authorEmail: c.params.string('author_email') }),
    staleMessage: () => STALE_FILE,
  });
  return { file_path: path, branch };
}

// POST /projects/:id/repository/files/:file_path
function createFile(c: Ctx) {
  return commitOneFile(c, 'create', ['branch', 'commit_message', 'content']);
}

// PUT /projects/:id/repository/files/:file_path
function updateFile(c: Ctx) {
  return commitOneFile(c, 'update', ['branch', 'commit_message', 'content']);
}

// DELETE /projects/:id/repository/files/:file_path
async function deleteFile(c: Ctx) {
  await commitOneFile(c, 'delete', ['branch', 'commit_message']);
  return undefined;
}

export function registerFileRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/files/:file_path/raw', rawFile);
  route(app, 'GET', '/projects/:id/repository/files/:file_path/blame', blameFile);
  route(app, 'HEAD', '/projects/:id/repository/files/:file_path', fileMetadata);
  route(app, 'GET', '/projects/:id/repository/files/:file_path', showFile);
  route(app, 'POST', '/projects/:id/repository/files/:file_path', createFile);
  route(app, 'PUT', '/projects/:id/repository/files/:file_path', updateFile);
  route(app, 'DELETE', '/projects/:id/repository/files/:file_path', deleteFile);
}

// Tags: list, show, create, delete (GitLab's lib/api/tags.rb). Names containing '/' arrive
// URL-encoded in the path (spec rule 7). Tags pushed over git appear here too: they are read from
// the repository, not stored apart.
import { assertCanCreateTag, assertCanDeleteTag } from './protection.js';
import { loadBranchRules } from '../../../services/repository/protected-refs.js';
import type { FastifyInstance } from 'fastify';
import { apiError, notFound } from '../../../http/errors.js';
import { paginateArray } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError, isValidNewTagName, type Commit, type Tag } from '../../../git/index.js';
import { isSafeRevision } from '../../../git/refname.js';
import { readableRepo, writableRepo, type ProjectRepo } from '../../../services/repository/project-repo.js';
import { notifyRefChanges } from '../../../services/repository/ref-hooks.js';
import { commitPeople } from '../../../services/repository/identity.js';
import { presentTag } from '../entities/tag.js';
import { pathParam } from './common.js';
import { matchesSearch } from './branches.js';
import type { UserRow } from '../../../db/repositories/users.js';
import { deleteReleaseOfTag, releasesOfTags } from '../../../services/releases.js';

async function releaseOfTag(c: Ctx, projectId: number, name: string) {
  return (await releasesOfTags(c.app.db, projectId, [name])).get(name) ?? null;
}

/**
 * Tags with the commits they point to (one spawn for all commits). A tag of a tree or a blob, or
 * of a commit that cannot be read, is kept with no commit (GitLab shows `commit: null`).
 */
async function withCommits(pr: ProjectRepo, tags: Tag[]): Promise<Array<{ tag: Tag; commit: Commit | null }>> {
  const shas = [...new Set(tags.flatMap((t) => (t.targetType === 'commit' && t.target ? [t.target] : [])))];
  let commits: Commit[] = [];
  if (shas.length) {
    commits = await pr.repo.getCommits(shas).catch(async () => {
      // One unreadable commit fails the batch: read them one by one.
      const one = await Promise.all(shas.map((sha) => pr.repo.getCommit(sha).catch(() => null)));
      return one.filter((c): c is Commit => c !== null);
    });
  }
  const bySha = new Map(commits.map((c) => [c.id, c]));
  return tags.map((tag) => ({ tag, commit: (tag.target && bySha.get(tag.target)) || null }));
}

/** A tag by name (one pushed with git may start with '-') with its commit, or null. */
export async function findTag(pr: ProjectRepo, name: string): Promise<{ tag: Tag; commit: Commit | null } | null> {
  const tag = await pr.repo.findTag(name);
  return tag ? (await withCommits(pr, [tag]))[0]! : null;
}

// GET /projects/:id/repository/tags
async function listTags(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const orderBy = c.params.enum('order_by', ['name', 'updated', 'version'] as const) ?? 'updated';
  const sort = c.params.enum('sort', ['asc', 'desc'] as const) ?? 'desc';
  const search = c.params.string('search');
  let tags = await pr.repo.listTags();
  if (search) tags = tags.filter((t) => matchesSearch(t.name, search));
  let items = await withCommits(pr, tags);
  const dir = sort === 'asc' ? 1 : -1;
  const byName = (a: Tag, b: Tag) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  if (orderBy === 'name') items = items.sort((a, b) => dir * byName(a.tag, b.tag));
  else if (orderBy === 'version') {
    // git's own version sort, as GitLab's (v1.9.0 before v1.10.0, v1.01 before v1.1).
    const rank = new Map((await pr.repo.tagNamesByVersion()).map((n, i) => [n, i]));
    items = items.sort((a, b) => dir * ((rank.get(a.tag.name) ?? 0) - (rank.get(b.tag.name) ?? 0)) || byName(a.tag, b.tag));
  }
  else {
    // GitLab's `updated` is git's creator date: when an annotated tag was made, else its commit's date.
    const time = (x: { tag: Tag }) => (x.tag.creatorDate ? Date.parse(x.tag.creatorDate) || 0 : 0);
    items = items.sort((a, b) => dir * (time(a) - time(b)) || byName(a.tag, b.tag));
  }
  const page = paginateArray(c, items);
  const [releases, protection] = await Promise.all([releasesOfTags(c.app.db, pr.project.id, page.map((x) => x.tag.name)), loadBranchRules(c.app, pr.project.id)]);
  return page.map((x) => presentTag(x.tag, x.commit, pr.webUrl, releases.get(x.tag.name), protection.isProtectedTag(x.tag.name)));
}

// GET /projects/:id/repository/tags/:tag_name
async function showTag(c: Ctx) {
  const pr = await readableRepo(c, pathParam(c, 'id'));
  const found = await findTag(pr, pathParam(c, 'tag_name'));
  if (!found) throw notFound('Tag');
  return presentTag(found.tag, found.commit, pr.webUrl, await releaseOfTag(c, pr.project.id, found.tag.name), (await loadBranchRules(c.app, pr.project.id)).isProtectedTag(found.tag.name));
}

/**
 * Makes a tag as GitLab's Tags::CreateService does, with its errors: lightweight, or annotated by
 * `user` when a message is given (stripped; a blank one makes a lightweight tag).
 */
export async function makeTag(c: Ctx, pr: ProjectRepo, user: UserRow, name: string, ref: string, rawMessage: string | undefined): Promise<{ tag: Tag; commit: Commit | null }> {
  if (ref.trim() === '') throw apiError(400, 'Target is empty');
  const message = rawMessage?.trim() || undefined;
  if (!isValidNewTagName(name)) throw apiError(400, 'Tag name invalid');
  const sha = isSafeRevision(ref) ? await pr.repo.resolveRef(ref) : null;
  if (!sha) throw apiError(400, `Target ${ref} is invalid`);
  if (await findTag(pr, name)) throw apiError(400, `Tag ${name} already exists`);
  await assertCanCreateTag(c, pr, name);
  let tagSha: string;
  try {
    const { committer } = commitPeople(user);
    tagSha = await pr.repo.createTag(name, sha, { message, tagger: { name: committer.name, email: committer.email, date: new Date() } });
  } catch (err) {
    if (isGitError(err, 'exists')) throw apiError(400, `Tag ${name} already exists`);
    if (isGitError(err, 'invalid_ref')) throw apiError(400, 'Tag name invalid');
    throw err;
  }
  await notifyRefChanges(c.app, pr.project.id, [{ ref: `refs/tags/${name}`, before: null, after: tagSha }], user.id);
  const created = await findTag(pr, name);
  if (!created) throw notFound('Tag');
  return created;
}

// POST /projects/:id/repository/tags
async function createTag(c: Ctx) {
  c.params.requireAll(['tag_name', 'ref']);
  const pr = await writableRepo(c, pathParam(c, 'id'));
  const user = c.requireUser();
  const created = await makeTag(c, pr, user, c.params.string('tag_name')!, c.params.string('ref')!, c.params.string('message'));
  c.status(201);
  return presentTag(created.tag, created.commit, pr.webUrl, await releaseOfTag(c, pr.project.id, created.tag.name), (await loadBranchRules(c.app, pr.project.id)).isProtectedTag(created.tag.name));
}

// DELETE /projects/:id/repository/tags/:tag_name
async function deleteTag(c: Ctx) {
  const pr = await writableRepo(c, pathParam(c, 'id'));
  const name = pathParam(c, 'tag_name');
  const tag = await pr.repo.findTag(name);
  if (!tag) throw notFound('Tag');
  await assertCanDeleteTag(c, pr, name);
  try {
    // Deletes only the tag we looked at: one moved meanwhile is not lost.
    await pr.repo.deleteTag(name, tag.sha);
  } catch (err) {
    if (isGitError(err, 'cas_failed') || isGitError(err, 'not_found')) throw apiError(400, 'Failed to remove tag');
    throw err;
  }
  await notifyRefChanges(c.app, pr.project.id, [{ ref: `refs/tags/${name}`, before: tag.sha, after: null }], c.user?.id ?? null);
  // Its release goes with it, as in GitLab.
  await deleteReleaseOfTag(c.app, pr.project.id, name);
  return undefined;
}

export function registerTagRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/tags', listTags);
  route(app, 'POST', '/projects/:id/repository/tags', createTag);
  route(app, 'GET', '/projects/:id/repository/tags/:tag_name', showTag);
  route(app, 'DELETE', '/projects/:id/repository/tags/:tag_name', deleteTag);
}

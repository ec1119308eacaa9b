// GET /projects/:id/repository/compare (GitLab's Entities::Compare): commits from..to and the diff
// from their merge base (or from `from` itself with straight=true).
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../../http/errors.js';
import { route, type Ctx } from '../../../http/route.js';
import { isGitError } from '../../../git/index.js';
import { isSafeRevision } from '../../../git/refname.js';
import { readableRepo } from '../../../services/repository/project-repo.js';
import { presentCommit, presentDiff } from '../entities/commit.js';
import { pathParam } from './common.js';

// GET /projects/:id/repository/compare
async function compare(c: Ctx) {
  c.params.requireAll(['from', 'to']);
  const from = c.params.string('from')!;
  const to = c.params.string('to')!;
  const straight = c.params.bool('straight') ?? false;
  const pr = await readableRepo(c, pathParam(c, 'id'));
  if (!isSafeRevision(from) || !isSafeRevision(to)) throw notFound('Ref');
  let result;
  try {
    result = await pr.repo.compare(from, to, { straight });
  } catch (err) {
    if (isGitError(err, 'not_found') || isGitError(err, 'invalid_ref')) throw notFound('Ref');
    throw err;
  }
  const commits = result.commits.map((cm) => presentCommit(cm, pr.webUrl));
  return {
    commit: commits.length ? commits[commits.length - 1] : null,
    commits,
    diffs: result.diffs.map(presentDiff),
    compare_timeout: false,
    compare_same_ref: from === to,
    web_url: `${pr.webUrl}/-/compare/${from}...${to}`,
  };
}

export function registerCompareRoutes(app: FastifyInstance): void {
  route(app, 'GET', '/projects/:id/repository/compare', compare);
}

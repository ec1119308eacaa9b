// Sample data for test deliveries (GitLab's TestHooks::ProjectService and
// Integrations::ProjectTestData): the project's newest merge request, issue, note or release, a push of
// the default branch's last commits, or GitLab's messages when there is nothing to show.
import { instanceBase, type AppContext } from '../../context.js';
import type { UserRow } from '../../db/repositories/users.js';
import { findUserRefsByIds } from '../../db/repositories/users.js';
import { ZERO_SHA } from '../../git/index.js';
import { repoFor } from '../merge-requests/git-ops.js';
import type { FoundProject } from '../projects/lookup.js';
import { loadRefProtection } from '../repository/protected-refs.js';
import type { HookScope } from './hooks.js';
import { emojiPayload, mergeRequestPayload, notePayload, releasePayload } from './issuable-payloads.js';
import { commitHookAttrs, projectWebUrl, pushPayload, type PushContext } from './payloads.js';
import { pipelinePayload } from './ci-payloads.js';
import { issuePayload, loadIssueHookAttrs } from './issue-payloads.js';
import { wikiTestPayload } from '../wikis.js';

export type TestData = { payload: unknown } | { error: string };

const NOT_AVAILABLE = 'Testing not available for this hook';

/** Scopes whose sample needs data Labwright does not keep: GitLab's message for the missing data. */
const MISSING: Partial<Record<HookScope, string>> = {
  job_hooks: 'Ensure the project has CI jobs.',
};

async function pushSample(app: AppContext, found: FoundProject, user: UserRow, tag: boolean): Promise<TestData> {
  const repo = repoFor(app, found.project.id);
  const users = await findUserRefsByIds(app.db, [user.id]);
  const ctx: PushContext = {
    base: instanceBase(app),
    project: found,
    repo,
    user: users.get(user.id) ?? null,
    protection: await loadRefProtection(app, found.project, found.namespace),
  };
  const branch = found.project.default_branch ?? 'main';
  const head = await repo.branchSha(branch);
  if (tag) {
    const names = await repo.tagNamesByVersion();
    const newest = names.length ? await repo.findTag(names[0]!) : null;
    if (newest) return { payload: await pushPayload(ctx, { ref: `refs/tags/${newest.name}`, before: null, after: newest.sha }) };
    return { payload: await pushPayload(ctx, { ref: 'refs/tags/v1.0.0', before: null, after: head }) };
  }
  // GitLab's build_sample: the default branch's last three commits, newest first, `before` the
  // oldest of them. GITLAB-COMPAT: an empty repository sends a push without commits (GitLab sends
  // a fixed sample of made-up commits).
  if (!head) return { payload: await pushPayload(ctx, { ref: `refs/heads/${branch}`, before: null, after: null }).then((p) => ({ ...p, after: ZERO_SHA })) };
  const last = await repo.listCommits({ ref: head, limit: 3 });
  const payload = await pushPayload(ctx, { ref: `refs/heads/${branch}`, before: last[last.length - 1]!.id, after: head });
  const files = await repo.changedFiles(last.map((c) => c.id));
  const web = projectWebUrl(ctx.base, found);
  payload.commits = last.map((c) => commitHookAttrs(web, c, files.get(c.id) ?? { added: [], modified: [], removed: [] }));
  payload.total_commits_count = last.length;
  return { payload };
}

export async function testPayload(app: AppContext, found: FoundProject, user: UserRow, scope: HookScope): Promise<TestData> {
  const base = instanceBase(app);
  const projectId = found.project.id;
  const me = (await findUserRefsByIds(app.db, [user.id])).get(user.id)!;
  switch (scope) {
    case 'push_hooks':
      return pushSample(app, found, user, false);
    case 'tag_push_hooks':
      return pushSample(app, found, user, true);
    case 'merge_request_hooks': {
      const mr = await app.db.selectFrom('merge_requests').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(1).executeTakeFirst();
      if (!mr) return { error: 'Ensure the project has merge requests.' };
      return { payload: await mergeRequestPayload(app, { base, info: found, mr, user: me, action: 'open' }) };
    }
    case 'issue_hooks':
    case 'confidential_issue_hooks': {
      // GitLab's sample: the project's newest issue, opened.
      const issue = await app.db.selectFrom('issues').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(1).executeTakeFirst();
      if (!issue) return { error: 'Ensure the project has issues.' };
      return { payload: await issuePayload(app, { base, info: found, issue, user: me, action: 'open' }) };
    }
    case 'note_hooks': {
      const note = await app.db.selectFrom('notes').selectAll().where('project_id', '=', projectId).where('system', '=', 0).orderBy('id', 'desc').limit(1).executeTakeFirst();
      const mr = note?.noteable_type === 'MergeRequest' ? await app.db.selectFrom('merge_requests').selectAll().where('id', '=', note.noteable_id).executeTakeFirst() : null;
      const issueRow = note?.noteable_type === 'Issue' ? await app.db.selectFrom('issues').selectAll().where('id', '=', note.noteable_id).executeTakeFirst() : undefined;
      const issue = issueRow ? { iid: issueRow.iid, attrs: await loadIssueHookAttrs(app, base, found, issueRow), confidential: issueRow.confidential === 1 } : undefined;
      const payload = note ? await notePayload(app, { base, info: found, mr: mr ?? null, ...(issue ? { issue } : {}), note, user: me, action: 'create' }) : null;
      if (!payload) return { error: 'Ensure the project has notes.' };
      return { payload };
    }
    case 'emoji_hooks': {
      // GitLab's sample: a thumbs-up, not saved, on the newest note.
      const note = await app.db.selectFrom('notes').selectAll().where('project_id', '=', projectId).where('system', '=', 0).where('noteable_type', '=', 'MergeRequest').orderBy('id', 'desc').limit(1).executeTakeFirst();
      const mr = note ? await app.db.selectFrom('merge_requests').selectAll().where('id', '=', note.noteable_id).executeTakeFirst() : undefined;
      if (!note || !mr) return { error: 'Ensure the project has notes.' };
      const now = new Date().toISOString();
      const award = { id: 1, name: 'thumbsup', user_id: user.id, awardable_type: 'Note', awardable_id: note.id, created_at: now, updated_at: now };
      return { payload: await emojiPayload(app, { base, info: found, award, user: me, action: 'award', mr, note }) };
    }
    case 'release_hooks': {
      const release = await app.db.selectFrom('releases').selectAll().where('project_id', '=', projectId).orderBy('released_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
      if (!release) return { error: 'Ensure the project has releases.' };
      return { payload: await releasePayload(app, { base, info: found, release, action: 'create' }) };
    }
    case 'pipeline_hooks': {
      const pipeline = await app.db.selectFrom('ci_pipelines').selectAll().where('project_id', '=', projectId).orderBy('id', 'desc').limit(1).executeTakeFirst();
      if (!pipeline) return { error: 'Ensure the project has CI pipelines.' };
      return { payload: await pipelinePayload(app, { base, info: found, pipeline }) };
    }
    case 'wiki_page_hooks': {
      const payload = await wikiTestPayload(app, base, found, me);
      return payload ? { payload } : { error: 'Ensure the wiki is enabled and has pages.' };
    }
    default:
      return { error: MISSING[scope] ?? NOT_AVAILABLE };
  }
}

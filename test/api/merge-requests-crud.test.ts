import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, addMember, commit, createProject, openMr, repo } from './mr-helpers.js';

let s: TestServer;
let pid: number;

let alice: { id: number; token: string; username: string };
let bob: { id: number; token: string; username: string };
let eve: { id: number; token: string; username: string };
beforeAll(async () => {
  s = await startServer();
  const p = await createProject(s, 'crud');
  pid = p.id;

  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  eve = await s.createUser('eve');
  await addMember(s, pid, alice.id, 30);
  await addMember(s, pid, bob.id, 20);
  for (const b of ['f1', 'f2', 'f3', 'f4', 'f5']) await commit(s, pid, b, { [`${b}.txt`]: `${b}\n` }, { from: 'main' });
});
afterAll(async () => {
  await closeServer(s);
});

describe('POST /projects/:id/merge_requests', () => {
  it('accepts every parameter of §4.6', async () => {
    const ms = await s.request('POST', `/projects/${pid}/milestones`, { json: { title: 'v1', due_date: '2030-01-01' } });
    expect(ms.status).toBe(201);
    const r = await s.request('POST', `/projects/${pid}/merge_requests`, {
      token: alice.token,
      json: {
        source_branch: 'f1', target_branch: 'main', title: 'Draft: first', description: 'desc', assignee_ids: [alice.id, bob.id],
        reviewer_ids: [bob.id], labels: 'b,a', milestone: 'v1', remove_source_branch: true, squash: true, allow_collaboration: true,
        merge_after: '2020-01-01T00:00:00Z', target_project_id: pid, approvals_before_merge: 2,
      },
    });
    expect(r.status).toBe(201);
    const mr = r.body;
    expect(mr.draft).toBe(true);
    expect(mr.work_in_progress).toBe(true);
    expect(mr.assignees.map((u: any) => u.username)).toEqual(['alice', 'bob']);
    expect(mr.assignee.username).toBe('alice');
    expect(mr.reviewers.map((u: any) => u.username)).toEqual(['bob']);
    expect(mr.labels).toEqual(['a', 'b']);
    expect(mr.milestone).toMatchObject({ title: 'v1', project_id: pid, iid: 1, state: 'active', due_date: '2030-01-01', expired: false });
    expect(mr.force_remove_source_branch).toBe(true);
    expect(mr.should_remove_source_branch).toBeNull();
    expect(mr.squash).toBe(true);
    expect(mr.squash_on_merge).toBe(true);
    expect(mr.merge_after).toBe('2020-01-01T00:00:00.000Z');
    expect(mr.author).toMatchObject({ username: 'alice', bot: false });
    expect(mr.detailed_merge_status).toBe('draft_status');
    expect(mr.imported_from).toBe('none');
    expect(mr.time_stats).toEqual({ time_estimate: 0, total_time_spent: 0, human_time_estimate: null, human_total_time_spent: null });
    expect(mr.closed_by).toBeNull();
    expect(mr.allow_collaboration).toBeUndefined();
    // Field order of GitLab's entity.
    const keys = Object.keys(mr);
    const order = ['merged_by', 'merge_user', 'merged_at', 'closed_by', 'closed_at', 'target_branch', 'source_branch', 'user_notes_count', 'upvotes', 'downvotes', 'author', 'assignees', 'assignee', 'reviewers', 'source_project_id', 'target_project_id', 'labels', 'draft', 'imported', 'imported_from', 'work_in_progress', 'milestone', 'merge_when_pipeline_succeeds', 'merge_status', 'detailed_merge_status', 'merge_after', 'sha', 'merge_commit_sha', 'squash_commit_sha', 'discussion_locked', 'should_remove_source_branch', 'force_remove_source_branch', 'prepared_at', 'reference', 'references', 'web_url', 'time_stats', 'squash', 'squash_on_merge', 'task_completion_status', 'has_conflicts', 'blocking_discussions_resolved', 'approvals_before_merge', 'subscribed', 'changes_count', 'latest_build_started_at', 'latest_build_finished_at', 'first_deployed_to_production_at', 'pipeline', 'head_pipeline', 'diff_refs', 'merge_error', 'user'];
    expect(keys.filter((k) => order.includes(k))).toEqual(order);
    // Labels created on the fly as project labels.
    const labels = await s.request('GET', `/projects/${pid}/labels`);
    expect(labels.body.map((l: any) => l.name)).toEqual(['a', 'b']);
  });

  it('links existing labels and creates only the missing ones, once', async () => {
    const own = (await createProject(s, 'labelled')).id;
    await commit(s, own, 'lab1', { 'lab1.txt': 'x' }, { from: 'main' });
    await commit(s, own, 'lab2', { 'lab2.txt': 'y' }, { from: 'main' });
    await commit(s, own, 'lab3', { 'lab3.txt': 'z' }, { from: 'main' });
    const first = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'lab1', target_branch: 'main', title: 'new', labels: 'b,a' } });
    expect(first.body.labels).toEqual(['a', 'b']);
    const mixed = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'lab2', target_branch: 'main', title: 'mixed', labels: 'b,c,b' } });
    expect(mixed.status).toBe(201);
    expect(mixed.body.labels).toEqual(['b', 'c']);
    const existing = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'lab3', target_branch: 'main', title: 'existing', labels: 'c,a' } });
    expect(existing.status).toBe(201);
    expect(existing.body.labels).toEqual(['a', 'c']);
    const labels = await s.request('GET', `/projects/${own}/labels`);
    expect(labels.body.map((l: any) => l.name)).toEqual(['a', 'b', 'c']);
  });

  it('gives 409 for a duplicate open request and 422 for the same branch', async () => {
    const dup = await s.request('POST', `/projects/${pid}/merge_requests`, { json: { source_branch: 'f1', target_branch: 'main', title: 'again' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ message: ['Another open merge request already exists for this source branch: !1'] });
    const same = await s.request('POST', `/projects/${pid}/merge_requests`, { json: { source_branch: 'main', target_branch: 'main', title: 'x' } });
    expect(same.status).toBe(422);
    expect(same.body).toEqual({ message: ["You can't use same project/branch for source and target"] });
  });

  it('of ten creations at once for the same branches, one is created and nine get 409; no iid is lost', async () => {
    const own = (await createProject(s, 'racing')).id;
    await commit(s, own, 'race', { 'race.txt': 'r' }, { from: 'main' });
    await commit(s, own, 'after', { 'after.txt': 'a' }, { from: 'main' });
    // An existing label: on PostgreSQL its link is written by the insert's own statement.
    expect((await s.request('POST', `/projects/${own}/labels`, { json: { name: 'raced', color: '#00ff00' } })).status).toBe(201);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'race', target_branch: 'main', title: `race ${i}`, labels: 'raced' } }),
      ),
    );
    const created = answers.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    expect(created[0].body.iid).toBe(1);
    expect(created[0].body.labels).toEqual(['raced']);
    // The refused creations linked nothing: one link in this project, none to a missing request.
    const links = await s.app.lw.db
      .selectFrom('merge_request_labels')
      .leftJoin('merge_requests', 'merge_requests.id', 'merge_request_labels.merge_request_id')
      .select('merge_requests.project_id')
      .execute();
    expect(links.filter((l) => l.project_id === own)).toHaveLength(1);
    expect(links.filter((l) => l.project_id === null)).toEqual([]);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body).toEqual({ message: ['Another open merge request already exists for this source branch: !1'] });
    }
    const list = await s.request('GET', `/projects/${own}/merge_requests`);
    expect(list.body.map((m: any) => m.iid)).toEqual([1]);
    // The refused creations gave their iids back.
    const next = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'after', target_branch: 'main', title: 'after' } });
    expect(next.status).toBe(201);
    expect(next.body.iid).toBe(2);
  });

  it('with existing labels, a milestone, assignees and reviewers (on PostgreSQL one statement writes them all)', async () => {
    const own = (await createProject(s, 'one-statement')).id;
    await addMember(s, own, alice.id, 30);
    await addMember(s, own, bob.id, 30);
    await commit(s, own, 'linked', { 'linked.txt': 'l' }, { from: 'main' });
    for (const name of ['one', 'two']) expect((await s.request('POST', `/projects/${own}/labels`, { json: { name, color: '#123456' } })).status).toBe(201);
    const ms = await s.request('POST', `/projects/${own}/milestones`, { json: { title: 'm1' } });
    const r = await s.request('POST', `/projects/${own}/merge_requests`, {
      json: { source_branch: 'linked', target_branch: 'main', title: 'linked', labels: 'two,one,two', milestone_id: ms.body.id, assignee_ids: [bob.id, alice.id], reviewer_ids: [alice.id, bob.id] },
    });
    expect(r.status).toBe(201);
    const shown = (mr: any) => ({
      iid: mr.iid,
      labels: mr.labels,
      milestone: mr.milestone?.title,
      assignees: mr.assignees.map((u: any) => u.username),
      reviewers: mr.reviewers.map((u: any) => u.username).sort(),
      merge_status: mr.merge_status,
    });
    const expected = { iid: 1, labels: ['one', 'two'], milestone: 'm1', assignees: ['bob', 'alice'], reviewers: ['alice', 'bob'], merge_status: 'can_be_merged' };
    expect(shown(r.body)).toEqual(expected);
    expect(shown((await s.request('GET', `/projects/${own}/merge_requests/1`)).body)).toEqual(expected);
    const rows = await s.app.lw.db.selectFrom('merge_request_reviewers').select(['state', 'created_at']).where('merge_request_id', '=', r.body.id).execute();
    expect(rows.map((x) => x.state)).toEqual(['unreviewed', 'unreviewed']);
    for (const x of rows) expect(Date.parse(x.created_at)).toBeGreaterThanOrEqual(Date.parse(r.body.created_at));
  });

  it('a reopen and a creation racing for the same branches: one wins, the other gets 409, never both open', async () => {
    const own = (await createProject(s, 'reopen-race')).id;
    for (let i = 0; i < 6; i++) {
      await commit(s, own, `rr-${i}`, { [`rr-${i}.txt`]: `${i}` }, { from: 'main' });
      const first = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: `rr-${i}`, target_branch: 'main', title: `first ${i}` } });
      expect((await s.request('PUT', `/projects/${own}/merge_requests/${first.body.iid}`, { json: { state_event: 'close' } })).status).toBe(200);
      const [reopen, create] = await Promise.all([
        s.request('PUT', `/projects/${own}/merge_requests/${first.body.iid}`, { json: { state_event: 'reopen' } }),
        s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: `rr-${i}`, target_branch: 'main', title: `second ${i}` } }),
      ]);
      const open = await s.app.lw.db.selectFrom('merge_requests').select('iid').where('project_id', '=', own).where('source_branch', '=', `rr-${i}`).where('state', '=', 'opened').execute();
      expect(open).toHaveLength(1);
      if (create.status === 201) {
        // The reopen lost: GitLab's 409, or (checked before the creation committed) a reopen refused as a duplicate.
        expect(reopen.status).toBe(409);
        expect(open[0].iid).toBe(create.body.iid);
      } else {
        expect(create.status).toBe(409);
        expect(reopen.status).toBe(200);
        expect(reopen.body.state).toBe('opened');
        expect(open[0].iid).toBe(first.body.iid);
      }
    }
  });

  it('migration 0012 keeps open duplicates made before it, and refuses new ones', async () => {
    const { migrateToLatest } = await import('../../src/db/migrations/index.js');
    const { OPEN_MR_INDEX, openMergeRequestRule } = await import('../../src/db/migrations/0012-open-merge-request-rule.js');
    const { sql } = await import('kysely');
    const db = s.app.lw.db;
    const own = (await createProject(s, 'legacy-duplicates')).id;
    await commit(s, own, 'legacy', { 'legacy.txt': 'l' }, { from: 'main' });
    const a = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'legacy', target_branch: 'main', title: 'a' } });
    expect((await s.request('PUT', `/projects/${own}/merge_requests/${a.body.iid}`, { json: { state_event: 'close' } })).status).toBe(200);
    const b = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'legacy', target_branch: 'main', title: 'b' } });
    expect((await s.request('PUT', `/projects/${own}/merge_requests/${b.body.iid}`, { json: { state_event: 'close' } })).status).toBe(200);
    const c = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'legacy', target_branch: 'main', title: 'c' } });
    expect(c.status).toBe(201);
    // A database from before the migration, edited by hand: a and c both open.
    await sql.raw(`drop index ${OPEN_MR_INDEX}`).execute(db);
    await db.updateTable('merge_requests').set({ state: 'opened' }).where('id', '=', a.body.id).execute();
    // The migration runs again as it would have on that database (later migrations stay applied).
    await openMergeRequestRule.up({ db, dialect: s.app.lw.database.dialect });
    await migrateToLatest(s.app.lw.database);
    await s.settle();
    // Nothing was changed: both stay open and are shown.
    const list = await s.request('GET', `/projects/${own}/merge_requests?state=opened`);
    expect(list.body.map((m: any) => m.iid).sort()).toEqual([a.body.iid, c.body.iid].sort());
    // A third one is refused by the database itself.
    await expect(db.updateTable('merge_requests').set({ state: 'opened' }).where('id', '=', b.body.id).execute()).rejects.toThrow();
    expect((await s.request('PUT', `/projects/${own}/merge_requests/${b.body.iid}`, { json: { state_event: 'reopen' } })).status).toBe(409);
    // With only the one left outside the index open, a new one is still refused, naming it.
    expect((await s.request('PUT', `/projects/${own}/merge_requests/${a.body.iid}`, { json: { state_event: 'close' } })).status).toBe(200);
    const again = await s.request('POST', `/projects/${own}/merge_requests`, { json: { source_branch: 'legacy', target_branch: 'main', title: 'd' } });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ message: [`Another open merge request already exists for this source branch: !${c.body.iid}`] });
    // Once it is closed too, opening one again works as before.
    expect((await s.request('PUT', `/projects/${own}/merge_requests/${c.body.iid}`, { json: { state_event: 'close' } })).status).toBe(200);
    expect((await s.request('PUT', `/projects/${own}/merge_requests/${b.body.iid}`, { json: { state_event: 'reopen' } })).status).toBe(200);
  });

  it('validates input with GitLab bodies and writes nothing', async () => {
    const cases: Array<[unknown, number, unknown]> = [
      [{ target_branch: 'main' }, 400, { message: '400 Bad request - "source_branch" not given' }],
      [{ source_branch: 'f2', target_branch: 'main', title: '' }, 400, { error: 'title is empty' }],
      [{ source_branch: 'f2', target_branch: 'main', title: 'x', milestone: 'v1', milestone_id: 1 }, 400, { error: 'milestone_id, milestone are mutually exclusive' }],
      [{ source_branch: 'nope', target_branch: 'main', title: 'x' }, 422, { message: ['Source branch "nope" does not exist'] }],
      [{ source_branch: 'f2', target_branch: 'gone', title: 'x' }, 422, { message: ['Target branch "gone" does not exist'] }],
      [{ source_branch: 'bad..name', target_branch: 'main', title: 'x' }, 400, { message: { source_branch: ['is invalid'] } }],
      [{ source_branch: 'f2', target_branch: 'main', title: 'x'.repeat(256) }, 400, { message: { title: ['is too long (maximum is 255 characters)'] } }],
      [{ source_branch: 'f2', target_branch: 'main', title: 'x', description: 'd'.repeat(1_048_577) }, 400, { message: { description: ['is too long (maximum is 1048576 characters)'] } }],
      [{ source_branch: 'f2', target_branch: 'main', title: 'x', assignee_ids: 'abc' }, 400, { error: 'assignee_ids is invalid' }],
      [{ source_branch: 'f2', target_branch: 'main', title: 'x', target_project_id: 999 }, 404, { message: '404 Not found' }],
    ];
    for (const [json, status, body] of cases) {
      const r = await s.request('POST', `/projects/${pid}/merge_requests`, { json });
      expect([r.status, r.body]).toEqual([status, body]);
    }
    const list = await s.request('GET', `/projects/${pid}/merge_requests`);
    expect(list.body).toHaveLength(1);
  });

  it('accepts a description at the limit', async () => {
    const r = await s.request('POST', `/projects/${pid}/merge_requests`, { json: { source_branch: 'f5', target_branch: 'main', title: 'big', description: 'd'.repeat(1_048_576) } });
    expect(r.status).toBe(201);
    expect(r.body.description).toHaveLength(1_048_576);
  });

  it('refuses callers without the right: anonymous 401, reporter 403, outsider 404', async () => {
    const json = { source_branch: 'f2', target_branch: 'main', title: 'x' };
    expect((await s.request('POST', `/projects/${pid}/merge_requests`, { token: null, json })).status).toBe(401);
    expect((await s.request('POST', `/projects/${pid}/merge_requests`, { token: bob.token, json })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('POST', `/projects/${pid}/merge_requests`, { token: eve.token, json })).body).toEqual({ message: '404 Project Not Found' });
    expect((await s.request('GET', `/projects/${pid}/merge_requests/1`, { token: eve.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}/merge_requests`, { token: null })).status).toBe(404);
  });

  it('hands out gap-free iids under concurrency', async () => {
    const p = await createProject(s, 'iids');
    const branches = Array.from({ length: 8 }, (_, i) => `c${i}`);
    for (const b of branches) await commit(s, p.id, b, { [`${b}.txt`]: b }, { from: 'main' });
    const results = await Promise.all([
      ...branches.map((b) => s.request('POST', `/projects/${p.id}/merge_requests`, { json: { source_branch: b, target_branch: 'main', title: b } })),
      // Duplicates racing the originals: exactly one of each pair wins.
      ...branches.slice(0, 4).map((b) => s.request('POST', `/projects/${p.id}/merge_requests`, { json: { source_branch: b, target_branch: 'main', title: b } })),
    ]);
    const ok = results.filter((r) => r.status === 201);
    expect(ok).toHaveLength(8);
    expect(results.filter((r) => r.status === 409)).toHaveLength(4);
    expect(ok.map((r) => r.body.iid).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const next = await s.request('POST', `/projects/${p.id}/merge_requests`, { json: { source_branch: 'c0', target_branch: 'c1', title: 'next' } });
    expect(next.body.iid).toBe(9);
  });
});

describe('GET /projects/:id/merge_requests/:iid', () => {
  it('404 Not found for an unknown iid, 400 for one that is no integer, optional fields on request', async () => {
    expect((await s.request('GET', `/projects/${pid}/merge_requests/999`)).body).toEqual({ message: '404 Not found' });
    expect((await s.request('GET', `/projects/${pid}/merge_requests/99999999999999999999`)).status).toBe(404);
    // Grape's type coercion (`requires :merge_request_iid, type: Integer`), on every merge request route.
    for (const [method, path] of [['GET', 'abc'], ['GET', '1.5/changes'], ['PUT', 'abc'], ['POST', 'x/notes'], ['GET', 'abc/approvals']] as const) {
      const r = await s.request(method, `/projects/${pid}/merge_requests/${path}`, method === 'GET' ? {} : { json: { body: 'b', title: 't' } });
      expect([method, path, r.status, r.body]).toEqual([method, path, 400, { error: 'merge_request_iid is invalid' }]);
    }
    await commit(s, pid, 'main', { 'moved.txt': 'm' });
    const r = await s.request('GET', `/projects/${pid}/merge_requests/1`, { query: { include_diverged_commits_count: true, include_rebase_in_progress: true, render_html: true } });
    expect(r.status).toBe(200);
    expect(r.body.diverged_commits_count).toBe(1);
    expect(r.body.rebase_in_progress).toBe(false);
    expect(r.body.title_html).toBe('Draft: first');
    expect(r.body.description_html).toBe('<p dir="auto">desc</p>');
    expect(r.body.first_contribution).toBe(true);
    const plain = await s.request('GET', `/projects/${pid}/merge_requests/1`);
    expect(plain.body.title_html).toBeUndefined();
    expect(plain.body.diverged_commits_count).toBeUndefined();
  });

  it('renders Markdown safely', async () => {
    const mr = await openMr(s, pid, 'f3', { description: '<script>alert(1)</script> **b** [x](javascript:alert(1))' });
    const r = await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`, { query: { render_html: true } });
    expect(r.body.description_html).not.toContain('<script');
    expect(r.body.description_html).toContain('&lt;script&gt;');
    expect(r.body.description_html).toContain('<strong>b</strong>');
    expect(r.body.description_html).not.toContain('href="javascript');
  });
});

describe('PUT /projects/:id/merge_requests/:iid', () => {
  it('needs at least one parameter', async () => {
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: {} });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('assignee_id, assignee_ids, reviewer_ids, description, labels, add_labels, remove_labels, milestone_id, milestone, remove_source_branch, allow_collaboration, allow_maintainer_to_push, squash, target_branch, title, state_event, discussion_locked, merge_after are missing, at least one parameter must be provided');
  });

  it('updates every field, labels incrementally, the Draft prefix, close and reopen', async () => {
    let r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { title: 'first', add_labels: 'c', remove_labels: 'a', assignee_id: 0, reviewer_ids: [], milestone_id: 0, discussion_locked: true, squash: false, description: 'new' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ title: 'first', draft: false, labels: ['b', 'c'], assignees: [], reviewers: [], milestone: null, discussion_locked: true, squash: false, description: 'new' });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { labels: '' } });
    expect(r.body.labels).toEqual([]);
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { token: alice.token, json: { state_event: 'close' } });
    expect(r.body.state).toBe('closed');
    expect(r.body.closed_by.username).toBe('alice');
    expect(r.body.closed_at).not.toBeNull();
    expect(r.body.detailed_merge_status).toBe('not_open');
    // A duplicate opened meanwhile blocks the reopen with 409.
    const other = await openMr(s, pid, 'f1', { title: 'dup' });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { state_event: 'reopen' } });
    expect(r.status).toBe(409);
    await s.request('PUT', `/projects/${pid}/merge_requests/${other.iid}`, { json: { state_event: 'close' } });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { state_event: 'reopen' } });
    expect(r.body.state).toBe('opened');
    expect(r.body.closed_by).toBeNull();
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { title: '' } });
    expect(r.body).toEqual({ error: 'title is empty' });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { state_event: 'merge' } });
    expect(r.body).toEqual({ error: 'state_event does not have a valid value' });
    r = await s.request('PUT', `/projects/${pid}/merge_requests/1`, { json: { target_branch: 'f1' } });
    expect(r.status).toBe(422);
  });

  it('takes arguments in the query string (python-gitlab style)', async () => {
    const r = await s.request('PUT', `/projects/${pid}/merge_requests/1?title=From%20query&labels=q1,q2`);
    expect(r.status).toBe(200);
    expect(r.body.title).toBe('From query');
    expect(r.body.labels).toEqual(['q1', 'q2']);
    const c = await s.request('POST', `/projects/${pid}/merge_requests?source_branch=f4&target_branch=main&title=Query%20create`);
    expect(c.status).toBe(201);
    expect(c.body.title).toBe('Query create');
  });

  it('lets reporters update nothing and outsiders see nothing', async () => {
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/1`, { token: bob.token, json: { title: 'x' } })).status).toBe(403);
    expect((await s.request('PUT', `/projects/${pid}/merge_requests/1`, { token: eve.token, json: { title: 'x' } })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/1`)).body.title).toBe('From query');
  });
});

describe('DELETE /projects/:id/merge_requests/:iid', () => {
  it('only owners and admins delete', async () => {
    const mr = await openMr(s, pid, 'f2', { title: 'to delete' });
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.iid}`, { token: alice.token })).status).toBe(403);
    const r = await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.iid}`);
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}`)).status).toBe(404);
    expect((await s.request('DELETE', `/projects/${pid}/merge_requests/${mr.iid}`)).status).toBe(404);
    expect(await repo(s, pid).branchSha('f2')).not.toBeNull();
  });
});


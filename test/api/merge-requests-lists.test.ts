import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, addMember, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let alice: { id: number; token: string; username: string };
let bob: { id: number; token: string; username: string };
let eve: { id: number; token: string; username: string };
let gid: number;
let pid: number;
let subPid: number;
let privPid: number;
const iid: Record<string, number> = {};

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
  eve = await s.createUser('eve');
  // Developers may merge into the group's default branches (GitLab's protection level 3).
  const g = await s.request('POST', '/groups', { json: { name: 'grp', path: 'grp', visibility: 'public', default_branch_protection: 3 } });
  gid = g.body.id;
  const sub = await s.request('POST', '/groups', { json: { name: 'sub', path: 'sub', parent_id: gid, visibility: 'public' } });
  const p = await createProject(s, 'app', { visibility: 'public', extra: { namespace_id: gid } });
  pid = p.id;
  const sp = await createProject(s, 'lib', { visibility: 'public', extra: { namespace_id: sub.body.id } });
  subPid = sp.id;
  const priv = await createProject(s, 'secret', { visibility: 'private', extra: { namespace_id: gid } });
  privPid = priv.id;
  for (const [id, user, level] of [[pid, alice, 30], [pid, bob, 30], [subPid, alice, 30]] as const) await addMember(s, id, user.id, level);
  for (const b of ['a1', 'a2', 'b1', 'd1']) await commit(s, pid, b, { [`${b}.txt`]: b }, { from: 'main' });
  await commit(s, subPid, 'l1', { 'l1.txt': 'l' }, { from: 'main' });
  await commit(s, privPid, 'p1', { 'p1.txt': 'p' }, { from: 'main' });
  await s.request('POST', `/projects/${pid}/milestones`, { json: { title: 'M1', due_date: '2031-01-01' } });
  await s.request('POST', `/groups/${gid}/milestones`, { json: { title: 'G1' } });
  iid.a1 = (await openMr(s, pid, 'a1', { title: 'Alpha fix', description: 'about parsing', labels: 'bug,backend', milestone: 'M1', assignee_ids: [bob.id], reviewer_ids: [bob.id] }, alice.token)).iid;
  iid.a2 = (await openMr(s, pid, 'a2', { title: 'Alpha docs', labels: 'docs', milestone: 'G1' }, alice.token)).iid;
  iid.b1 = (await openMr(s, pid, 'b1', { title: 'Beta', description: 'alpha inside' }, bob.token)).iid;
  iid.d1 = (await openMr(s, pid, 'd1', { title: 'Draft: unfinished' }, bob.token)).iid;
  iid.l1 = (await openMr(s, subPid, 'l1', { title: 'Lib change' }, alice.token)).iid;
  iid.p1 = (await openMr(s, privPid, 'p1', { title: 'Private' })).iid;
  await s.request('POST', `/projects/${pid}/merge_requests/${iid.a1}/award_emoji`, { token: alice.token, json: { name: 'thumbsup' } });
  await s.request('POST', `/projects/${pid}/merge_requests/${iid.a1}/approve`, { token: bob.token });
  const merged = await s.request('PUT', `/projects/${pid}/merge_requests/${iid.b1}/merge`, { token: alice.token });
  if (merged.status !== 200) throw new Error(merged.text);
  await s.request('PUT', `/projects/${pid}/merge_requests/${iid.a2}`, { json: { state_event: 'close' } });
  await s.request('POST', `/projects/${pid}/deployments`, { json: { environment: 'production', sha: merged.body.merge_commit_sha, ref: 'main', tag: false, status: 'success' } });
});
afterAll(async () => {
  await closeServer(s);
});

async function titles(path: string, query: Record<string, string | number | boolean> = {}, token?: string | null) {
  const r = await s.request('GET', path, { query, token });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${r.text}`);
  return r.body.map((m: any) => m.title);
}

describe('project list filters', () => {
  const P = () => `/projects/${pid}/merge_requests`;
  it('state, order and sort', async () => {
    expect(await titles(P())).toEqual(['Draft: unfinished', 'Beta', 'Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { state: 'opened' })).toEqual(['Draft: unfinished', 'Alpha fix']);
    expect(await titles(P(), { state: 'merged' })).toEqual(['Beta']);
    expect(await titles(P(), { state: 'closed' })).toEqual(['Alpha docs']);
    expect(await titles(P(), { state: 'locked' })).toEqual([]);
    expect(await titles(P(), { order_by: 'title', sort: 'asc' })).toEqual(['Alpha docs', 'Alpha fix', 'Beta', 'Draft: unfinished']);
    expect((await titles(P(), { order_by: 'merged_at' }))[0]).toBe('Beta');
    expect((await titles(P(), { order_by: 'popularity' }))[0]).toBe('Alpha fix');
    expect((await titles(P(), { order_by: 'milestone_due', sort: 'asc' }))[0]).toBe('Alpha fix');
    expect((await titles(P(), { order_by: 'updated_at' })).length).toBe(4);
  });

  it('people: author, assignee, reviewer, merge user, scopes', async () => {
    expect(await titles(P(), { author_username: 'bob' })).toEqual(['Draft: unfinished', 'Beta']);
    expect(await titles(P(), { author_id: alice.id })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { assignee_id: bob.id })).toEqual(['Alpha fix']);
    expect(await titles(P(), { assignee_id: 'None' })).toEqual(['Draft: unfinished', 'Beta', 'Alpha docs']);
    expect(await titles(P(), { assignee_id: 'Any' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { 'assignee_username[]': 'bob' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { reviewer_username: 'bob' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { reviewer_id: 'None' })).toHaveLength(3);
    expect(await titles(P(), { merge_user_id: alice.id })).toEqual(['Beta']);
    expect(await titles(P(), { merge_user_username: 'alice' })).toEqual(['Beta']);
    expect(await titles(P(), { scope: 'created_by_me' }, alice.token)).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { scope: 'assigned-to-me' }, bob.token)).toEqual(['Alpha fix']);
    expect(await titles(P(), { scope: 'reviews_for_me' }, bob.token)).toEqual(['Alpha fix']);
  });

  it('labels, milestones, reactions, approvals, negation', async () => {
    expect(await titles(P(), { labels: 'bug' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { labels: 'bug,backend' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { labels: 'bug,docs' })).toEqual([]);
    expect(await titles(P(), { labels: 'None' })).toEqual(['Draft: unfinished', 'Beta']);
    expect(await titles(P(), { labels: 'any' })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { milestone: 'M1' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { milestone: 'G1' })).toEqual(['Alpha docs']);
    expect(await titles(P(), { milestone: 'None' })).toEqual(['Draft: unfinished', 'Beta']);
    expect(await titles(P(), { milestone: 'Any' })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { my_reaction_emoji: 'thumbsup' }, alice.token)).toEqual(['Alpha fix']);
    expect(await titles(P(), { my_reaction_emoji: 'None' }, alice.token)).toHaveLength(3);
    expect(await titles(P(), { my_reaction_emoji: 'Any' }, bob.token)).toEqual([]);
    expect(await titles(P(), { 'approved_by_ids[]': bob.id })).toEqual(['Alpha fix']);
    expect(await titles(P(), { 'approved_by_usernames[]': 'bob' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { 'approved_by_ids[]': 'None' })).toHaveLength(3);
    expect(await titles(P(), { 'approved_by_ids[]': 'Any' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { 'not[labels]': 'bug' })).toEqual(['Draft: unfinished', 'Beta', 'Alpha docs']);
    expect(await titles(P(), { 'not[milestone]': 'M1' })).toEqual(['Draft: unfinished', 'Beta', 'Alpha docs']);
    expect(await titles(P(), { 'not[author_username]': 'bob' })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { 'not[author_id]': bob.id })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { 'not[assignee_id]': bob.id })).toHaveLength(3);
    expect(await titles(P(), { 'not[reviewer_username]': 'bob' })).toHaveLength(3);
    expect(await titles(P(), { 'not[my_reaction_emoji]': 'thumbsup' }, alice.token)).toHaveLength(3);
  });

  it('text, branches, draft, dates, iids, deployments, views', async () => {
    expect(await titles(P(), { search: 'alpha' })).toEqual(['Beta', 'Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { search: 'alpha', in: 'title' })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { search: 'parsing', in: 'description' })).toEqual(['Alpha fix']);
    expect(await titles(P(), { source_branch: 'a2' })).toEqual(['Alpha docs']);
    expect(await titles(P(), { target_branch: 'main' })).toHaveLength(4);
    expect(await titles(P(), { draft: true })).toEqual(['Draft: unfinished']);
    expect(await titles(P(), { wip: 'no' })).toHaveLength(3);
    expect(await titles(P(), { created_after: '2000-01-01T00:00:00Z' })).toHaveLength(4);
    expect(await titles(P(), { created_before: '2000-01-01' })).toEqual([]);
    expect(await titles(P(), { updated_after: '2000-01-01T00:00:00Z', updated_before: '2100-01-01T00:00:00Z' })).toHaveLength(4);
    expect(await titles(P(), { merged_after: '2000-01-01T00:00:00Z' })).toEqual(['Beta']);
    expect(await titles(P(), { merged_before: '2000-01-01T00:00:00Z' })).toEqual([]);
    expect(await titles(P(), { 'iids[]': iid.a1 })).toEqual(['Alpha fix']);
    expect(await titles(P(), { iids: `${iid.a1},${iid.a2}` })).toEqual(['Alpha docs', 'Alpha fix']);
    expect(await titles(P(), { environment: 'production' })).toEqual(['Beta']);
    expect(await titles(P(), { environment: 'staging' })).toEqual([]);
    expect(await titles(P(), { deployed_after: '2000-01-01T00:00:00Z' })).toEqual(['Beta']);
    expect(await titles(P(), { deployed_before: '2000-01-01T00:00:00Z' })).toEqual([]);
    const simple = await s.request('GET', P(), { query: { view: 'simple' } });
    expect(Object.keys(simple.body[0])).toEqual(['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'web_url']);
    const detailed = await s.request('GET', P(), { query: { with_labels_details: true, labels: 'bug' } });
    expect(detailed.body[0].labels.map((l: any) => l.name)).toEqual(['backend', 'bug']);
    expect(Object.keys(detailed.body[0].labels[0])).toEqual(['id', 'name', 'color', 'text_color', 'description', 'description_html', 'archived']);
    const paged = await s.request('GET', P(), { query: { per_page: 2, page: 2 } });
    expect(paged.body).toHaveLength(2);
    expect(paged.headers.get('x-total')).toBe('4');
    expect(paged.headers.get('link')).toContain('rel="first"');
  });

  it('rejects bad parameters with Grape bodies', async () => {
    const bad: Array<[Record<string, string | number>, string]> = [
      [{ state: 'open' }, 'state does not have a valid value'],
      [{ order_by: 'size' }, 'order_by does not have a valid value'],
      [{ sort: 'up' }, 'sort does not have a valid value'],
      [{ scope: 'mine' }, 'scope does not have a valid value'],
      [{ view: 'full' }, 'view does not have a valid value'],
      [{ wip: 'maybe' }, 'wip does not have a valid value'],
      [{ author_id: 1, author_username: 'x' }, 'author_id, author_username are mutually exclusive'],
      [{ assignee_id: 1, assignee_username: 'x' }, 'assignee_id, assignee_username are mutually exclusive'],
      [{ reviewer_id: 1, reviewer_username: 'x' }, 'reviewer_id, reviewer_username are mutually exclusive'],
      [{ merge_user_id: 1, merge_user_username: 'x' }, 'merge_user_id, merge_user_username are mutually exclusive'],
      [{ draft: 'true', wip: 'yes' }, 'draft, wip are mutually exclusive'],
      [{ author_id: 'abc' }, 'author_id is invalid'],
      [{ created_after: 'yesterday' }, 'created_after is invalid'],
      [{ in: 'body' }, 'in does not have a valid value'],
      [{ 'approved_by_ids[]': '1,2,3,4,5,6' }, 'approved_by_ids does not have a valid value'],
      [{ 'not[author_id]': 'abc' }, 'not[author_id] is invalid'],
      [{ not: 'x' }, 'not is invalid'],
      [{ 'approver_ids[]': 'abc' }, 'approver_ids is invalid'],
    ];
    for (const [query, error] of bad) {
      const r = await s.request('GET', `/projects/${pid}/merge_requests`, { query });
      expect([r.status, r.body]).toEqual([400, { error }]);
    }
  });
});

describe('global and group lists', () => {
  it('GET /merge_requests needs a token unless scope=all and shows only readable projects', async () => {
    expect((await s.request('GET', '/merge_requests', { token: null })).status).toBe(401);
    const anon = await titles('/merge_requests', { scope: 'all' }, null);
    expect(anon).not.toContain('Private');
    expect(anon).toContain('Lib change');
    expect(await titles('/merge_requests', {}, alice.token)).toEqual(['Lib change', 'Alpha docs', 'Alpha fix']);
    expect(await titles('/merge_requests', { scope: 'all' }, eve.token)).not.toContain('Private');
    expect(await titles('/merge_requests', { scope: 'all' })).toContain('Private');
    const r = await s.request('GET', '/merge_requests', { token: alice.token });
    expect(r.body[0].references.relative).toBe(`!${iid.l1}`);
  });

  it('GET /groups/:id/merge_requests includes subgroups, group-relative references, non_archived', async () => {
    const r = await s.request('GET', `/groups/${gid}/merge_requests`, { token: eve.token });
    expect(r.status).toBe(200);
    const byTitle = Object.fromEntries(r.body.map((m: any) => [m.title, m]));
    expect(Object.keys(byTitle).sort()).toEqual(['Alpha docs', 'Alpha fix', 'Beta', 'Draft: unfinished', 'Lib change']);
    expect(byTitle['Alpha fix'].references.relative).toBe(`app!${iid.a1}`);
    expect(byTitle['Lib change'].references.relative).toBe(`grp/sub/lib!${iid.l1}`);
    expect(byTitle['Alpha fix'].group_id).toBe(gid);
    expect(await titles('/groups/grp/merge_requests', { source_project_id: subPid })).toEqual(['Lib change']);
    await s.request('POST', `/projects/${subPid}/archive`);
    expect(await titles(`/groups/${gid}/merge_requests`)).not.toContain('Lib change');
    expect(await titles(`/groups/${gid}/merge_requests`, { non_archived: false })).toContain('Lib change');
    expect((await s.request('GET', '/groups/9999/merge_requests')).body).toEqual({ message: '404 Group Not Found' });
  });
});

describe('search rate limit', () => {
  it('429 with GitLab body after the per-minute search budget', async () => {
    const user = await s.createUser('searcher');
    let last;
    for (let i = 0; i < 31; i++) last = await s.request('GET', `/projects/${pid}/merge_requests`, { token: user.token, query: { search: 'x' } });
    expect(last!.status).toBe(429);
    expect(last!.body).toEqual({ message: { error: 'This endpoint has been requested too many times. Try again later.' } });
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await s.request('GET', `/projects/${pid}/merge_requests`, { token: user.token })).status).toBe(200);
  });
});

describe('membership through an ancestor group', () => {
  it('a member of the parent group sees the private project in global and group lists', async () => {
    const gm = await s.createUser('groupie');
    const add = await s.request('POST', `/groups/${gid}/members`, { json: { user_id: gm.id, access_level: 20 } });
    expect(add.status).toBe(201);
    expect(await titles('/merge_requests', { scope: 'all' }, gm.token)).toContain('Private');
    expect(await titles(`/groups/${gid}/merge_requests`, {}, gm.token)).toContain('Private');
    expect(await titles(`/groups/${gid}/merge_requests`, {}, eve.token)).not.toContain('Private');
  });
});

describe('milestones on list entries', () => {
  it('group milestones carry group_id and the group URL', async () => {
    const r = await s.request('GET', `/projects/${pid}/merge_requests`, { query: { milestone: 'G1' } });
    expect(r.body[0].milestone).toMatchObject({ title: 'G1', group_id: gid, web_url: `${s.url}/groups/grp/-/milestones/1` });
    expect(r.body[0].milestone.project_id).toBeUndefined();
  });
});

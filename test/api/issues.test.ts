// Issues: create, read, list (filters, orderings, keyset), update (labels, milestone, assignee,
// close, reopen), delete, confidential issues, the issues feature's access levels, statistics,
// participants, subscriptions and the project's open_issues_count.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let guest: U;
let outsider: U;
let pub: { id: number; path_with_namespace: string };
let priv: { id: number; path_with_namespace: string };

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('owner');
  dev = await s.createUser('dev');
  guest = await s.createUser('guest');
  outsider = await s.createUser('outsider');
  pub = await createProject(s, 'pub', { token: owner.token, visibility: 'public' });
  priv = await createProject(s, 'priv', { token: owner.token });
  for (const p of [pub, priv]) {
    await addMember(s, p.id, dev.id, 30);
    await addMember(s, p.id, guest.id, 10);
  }
}, 60_000);

afterAll(async () => closeServer(s));

const post = (token: string, projectId: number, json: Record<string, unknown>) => s.request('POST', `/projects/${projectId}/issues`, { token, json });

describe('issues: create and read', () => {
  it('creates an issue (201) in GitLab field order, with labels made on the fly, milestone and assignee', async () => {
    const ms = await s.request('POST', `/projects/${pub.id}/milestones`, { token: owner.token, json: { title: 'v1' } });
    expect(ms.status).toBe(201);
    const r = await post(dev.token, pub.id, { title: 'First bug', description: 'Steps\n\n- [ ] one\n- [x] two', labels: 'bug,ui', milestone_id: ms.body.id, assignee_ids: [dev.id, owner.id], due_date: '2030-01-31' });
    expect(r.status).toBe(201);
    const b = r.body;
    expect(Object.keys(b).slice(0, 12)).toEqual(['id', 'iid', 'project_id', 'title', 'description', 'state', 'created_at', 'updated_at', 'closed_at', 'closed_by', 'labels', 'milestone']);
    expect(b).toMatchObject({
      iid: 1,
      project_id: pub.id,
      state: 'opened',
      labels: ['bug', 'ui'],
      type: 'ISSUE',
      issue_type: 'issue',
      due_date: '2030-01-31',
      confidential: false,
      discussion_locked: null,
      user_notes_count: 0,
      merge_requests_count: 0,
      upvotes: 0,
      task_completion_status: { count: 2, completed_count: 1 },
      has_tasks: false,
      severity: 'UNKNOWN',
      subscribed: true,
      moved_to_id: null,
      imported: false,
      imported_from: 'none',
    });
    expect(b.task_status).toBeUndefined();
    // Free tier: one assignee, the first given.
    expect(b.assignees.map((a: any) => a.username)).toEqual(['dev']);
    expect(b.assignee.username).toBe('dev');
    expect(b.author.username).toBe('dev');
    expect(b.milestone).toMatchObject({ id: ms.body.id, title: 'v1' });
    expect(b.web_url).toBe(`${s.url}/${pub.path_with_namespace}/-/issues/1`);
    expect(b.references).toEqual({ short: '#1', relative: '#1', full: `${pub.path_with_namespace}#1` });
    expect(b._links).toEqual({
      self: `${s.api}/projects/${pub.id}/issues/1`,
      notes: `${s.api}/projects/${pub.id}/issues/1/notes`,
      award_emoji: `${s.api}/projects/${pub.id}/issues/1/award_emoji`,
      project: `${s.api}/projects/${pub.id}`,
      closed_as_duplicate_of: null,
    });
    const labels = await s.request('GET', `/projects/${pub.id}/labels`, { token: owner.token });
    expect(labels.body.map((l: any) => l.name).sort()).toEqual(['bug', 'ui']);
    const got = await s.request('GET', `/projects/${pub.id}/issues/1`, { token: null });
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: b.id, title: 'First bug', subscribed: false });
  });

  it('a description without checklist items: has_tasks true with "0 of 0 checklist items completed" (GitLab\'s inverted flag)', async () => {
    const r = await post(dev.token, pub.id, { title: 'Plain', description: 'no tasks' });
    expect(r.body).toMatchObject({ has_tasks: true, task_status: '0 of 0 checklist items completed', task_completion_status: { count: 0, completed_count: 0 } });
    const none = await post(dev.token, pub.id, { title: 'Empty' });
    expect(none.body).toMatchObject({ has_tasks: true, task_status: '', description: null });
  });

  it('refuses bad input with GitLab 4xx and writes nothing', async () => {
    const before = (await s.request('GET', `/projects/${pub.id}/issues_statistics`, { token: owner.token })).body.statistics.counts.all;
    expect((await post(dev.token, pub.id, {})).body).toEqual({ message: '400 Bad request - "title" not given' });
    expect((await post(dev.token, pub.id, { title: '  ' })).body).toEqual({ error: 'title is empty' });
    expect((await post(dev.token, pub.id, { title: 'x'.repeat(256) })).status).toBe(400);
    expect((await post(dev.token, pub.id, { title: 'x', due_date: '2030-02-30' })).body).toEqual({ error: 'due_date is invalid' });
    expect((await post(dev.token, pub.id, { title: 'x', issue_type: 'epic' })).body).toEqual({ error: 'issue_type does not have a valid value' });
    expect((await post(dev.token, pub.id, { title: 'x', confidential: 'maybe' })).body).toEqual({ error: 'confidential is invalid' });
    expect((await s.request('POST', `/projects/${pub.id}/issues`, { token: null, json: { title: 'anon' } })).status).toBe(401);
    expect((await s.request('GET', `/projects/${pub.id}/issues/abc`, { token: owner.token })).body).toEqual({ error: 'issue_iid is invalid' });
    expect((await s.request('GET', `/projects/${pub.id}/issues/999`, { token: owner.token })).body).toEqual({ message: '404 Not found' });
    const after = (await s.request('GET', `/projects/${pub.id}/issues_statistics`, { token: owner.token })).body.statistics.counts.all;
    expect(after).toBe(before);
  });

  it('anyone signed in may open an issue on a public project, not set its metadata; private projects need membership', async () => {
    const r = await post(outsider.token, pub.id, { title: 'From outside', labels: 'bug', assignee_ids: [outsider.id], confidential: true });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ labels: [], assignees: [], confidential: true });
    expect((await post(outsider.token, priv.id, { title: 'no' })).body).toEqual({ message: '404 Project Not Found' });
    const g = await post(guest.token, priv.id, { title: 'Guest issue' });
    expect(g.status).toBe(201);
    expect(g.body.iid).toBe(1);
  });

  it('owners may set iid and created_at; others are ignored; a taken iid is 409', async () => {
    const r = await post(owner.token, priv.id, { title: 'Imported', iid: 50, created_at: '2020-01-02T03:04:05Z' });
    expect(r.body).toMatchObject({ iid: 50, created_at: '2020-01-02T03:04:05.000Z' });
    expect((await post(owner.token, priv.id, { title: 'Next' })).body.iid).toBe(51);
    const d = await post(dev.token, priv.id, { title: 'Dev', iid: 500, created_at: '2020-01-02T03:04:05Z' });
    expect(d.body.iid).toBe(52);
    expect(d.body.created_at).not.toBe('2020-01-02T03:04:05.000Z');
    const dup = await post(owner.token, priv.id, { title: 'Dup', iid: 50 });
    expect(dup.status).toBe(409);
  });
});

describe('issues: update, close, reopen, delete', () => {
  it('updates fields, labels (add/remove), and closes and reopens, keeping open_issues_count', async () => {
    const p = await createProject(s, 'upd', { token: owner.token });
    const created = await post(owner.token, p.id, { title: 'To change', labels: 'a,b' });
    const iid = created.body.iid;
    expect((await s.request('GET', `/projects/${p.id}`, { token: owner.token })).body.open_issues_count).toBe(1);
    const none = await s.request('PUT', `/projects/${p.id}/issues/${iid}`, { token: owner.token, json: {} });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/are missing, at least one parameter must be provided$/);
    const u = await s.request('PUT', `/projects/${p.id}/issues/${iid}`, { token: owner.token, json: { title: 'Changed', add_labels: 'c', remove_labels: 'a', discussion_locked: true, confidential: true } });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ title: 'Changed', labels: ['b', 'c'], discussion_locked: true, confidential: true });
    const closed = await s.request('PUT', `/projects/${p.id}/issues/${iid}`, { token: owner.token, json: { state_event: 'close', discussion_locked: false } });
    expect(closed.body).toMatchObject({ state: 'closed', closed_by: { username: 'owner' } });
    expect(closed.body.closed_at).toMatch(/^\d{4}-/);
    expect((await s.request('GET', `/projects/${p.id}`, { token: owner.token })).body.open_issues_count).toBe(0);
    const reopened = await s.request('PUT', `/projects/${p.id}/issues/${iid}`, { token: owner.token, json: { state_event: 'reopen' } });
    expect(reopened.body).toMatchObject({ state: 'opened', closed_at: null, closed_by: null });
    expect((await s.request('GET', `/projects/${p.id}`, { token: owner.token })).body.open_issues_count).toBe(1);
    expect((await s.request('PUT', `/projects/${p.id}/issues/${iid}`, { token: owner.token, json: { state_event: 'open' } })).body).toEqual({ error: 'state_event does not have a valid value' });
  });

  it('authors may edit and close their issue; other guests may not; only owners delete', async () => {
    const mine = await post(guest.token, pub.id, { title: 'Guest-made' });
    const iid = mine.body.iid;
    const edit = await s.request('PUT', `/projects/${pub.id}/issues/${iid}`, { token: guest.token, json: { title: 'Guest-edited', labels: 'ignored' } });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({ title: 'Guest-edited', labels: [] });
    expect((await s.request('PUT', `/projects/${pub.id}/issues/${iid}`, { token: outsider.token, json: { title: 'x' } })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${pub.id}/issues/${iid}`, { token: dev.token })).status).toBe(403);
    expect((await s.request('DELETE', `/projects/${pub.id}/issues/${iid}`, { token: owner.token })).status).toBe(204);
    expect((await s.request('GET', `/projects/${pub.id}/issues/${iid}`, { token: owner.token })).status).toBe(404);
  });
});

describe('issues: confidential and feature access', () => {
  it('confidential issues are seen by their author, assignees and Planners and up only', async () => {
    const c = await post(guest.token, pub.id, { title: 'Secret report', confidential: true });
    const iid = c.body.iid;
    expect((await s.request('GET', `/projects/${pub.id}/issues/${iid}`, { token: guest.token })).status).toBe(200);
    expect((await s.request('GET', `/projects/${pub.id}/issues/${iid}`, { token: dev.token })).status).toBe(200);
    expect((await s.request('GET', `/projects/${pub.id}/issues/${iid}`, { token: outsider.token })).status).toBe(404);
    expect((await s.request('GET', `/projects/${pub.id}/issues/${iid}`, { token: null })).status).toBe(404);
    const anonList = await s.request('GET', `/projects/${pub.id}/issues`, { token: null, query: { per_page: 100 } });
    expect(anonList.body.some((i: any) => i.iid === iid)).toBe(false);
    const outsiderGlobal = await s.request('GET', '/issues', { token: outsider.token, query: { scope: 'all', per_page: 100 } });
    expect(outsiderGlobal.body.some((i: any) => i.project_id === pub.id && i.iid === iid)).toBe(false);
    const devGlobal = await s.request('GET', '/issues', { token: dev.token, query: { scope: 'all', per_page: 100 } });
    expect(devGlobal.body.some((i: any) => i.project_id === pub.id && i.iid === iid)).toBe(true);
  });

  it('issues turned off: lists are empty, reads 404, creation 403', async () => {
    const p = await createProject(s, 'noissues', { token: owner.token, visibility: 'public', extra: { issues_access_level: 'disabled' } });
    expect((await post(owner.token, p.id, { title: 'x' })).status).toBe(403);
    const list = await s.request('GET', `/projects/${p.id}/issues`, { token: owner.token });
    expect(list.status).toBe(200);
    expect(list.body).toEqual([]);
  });
});

describe('issues: lists', () => {
  let p: { id: number; path_with_namespace: string };
  beforeAll(async () => {
    p = await createProject(s, 'listing', { token: owner.token, visibility: 'public' });
    await addMember(s, p.id, dev.id, 30);
    for (let i = 1; i <= 7; i++) {
      await post(i % 2 ? owner.token : dev.token, p.id, { title: `Issue ${String.fromCharCode(96 + i)}`, labels: i % 3 === 0 ? 'three' : '', assignee_ids: i === 2 ? [dev.id] : [], due_date: i <= 3 ? `2031-01-0${i}` : undefined });
    }
    await s.request('PUT', `/projects/${p.id}/issues/4`, { token: owner.token, json: { state_event: 'close' } });
  }, 60_000);

  it('filters by state, author, assignee, labels, iids, search and due date', async () => {
    const q = async (query: Record<string, string | number>) => (await s.request('GET', `/projects/${p.id}/issues`, { token: owner.token, query })).body.map((i: any) => i.iid);
    expect(await q({})).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(await q({ state: 'closed' })).toEqual([4]);
    expect(await q({ state: 'opened', sort: 'asc' })).toEqual([1, 2, 3, 5, 6, 7]);
    expect(await q({ author_username: 'dev' })).toEqual([6, 4, 2]);
    expect(await q({ assignee_id: dev.id })).toEqual([2]);
    expect(await q({ assignee_id: 'None' })).toEqual([7, 6, 5, 4, 3, 1]);
    expect(await q({ labels: 'three' })).toEqual([6, 3]);
    expect(await q({ labels: 'None' })).toEqual([7, 5, 4, 2, 1]);
    expect(await q({ 'iids[]': 2 })).toEqual([2]);
    expect(await q({ search: 'issue c' })).toEqual([3]);
    expect(await q({ due_date: 'any' })).toEqual([3, 2, 1]);
    expect(await q({ 'not[labels]': 'three' })).toEqual([7, 5, 4, 2, 1]);
    expect(await q({ order_by: 'title', sort: 'asc' })).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await q({ order_by: 'due_date', sort: 'desc' })).toEqual([3, 2, 1, 7, 6, 5, 4]);
    const bad = await s.request('GET', `/projects/${p.id}/issues`, { token: owner.token, query: { state: 'merged' } });
    expect(bad.body).toEqual({ error: 'state does not have a valid value' });
    const both = await s.request('GET', `/projects/${p.id}/issues`, { token: owner.token, query: { author_id: 1, author_username: 'x' } });
    expect(both.body).toEqual({ error: 'author_id, author_username are mutually exclusive' });
  });

  it('walks a project list with keyset pagination; other orderings and scopes answer 405', async () => {
    const seen: number[] = [];
    let url: string | null = `${s.api}/projects/${p.id}/issues?pagination=keyset&per_page=3&order_by=created_at&sort=asc`;
    while (url) {
      const r: Response = await fetch(url, { headers: { 'PRIVATE-TOKEN': owner.token } });
      const body = (await r.json()) as Array<{ iid: number }>;
      seen.push(...body.map((i) => i.iid));
      const link: string | null = r.headers.get('link');
      url = link ? /<([^>]+)>; rel="next"/.exec(link)![1] : null;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect((await s.request('GET', `/projects/${p.id}/issues`, { token: owner.token, query: { pagination: 'keyset', order_by: 'popularity' } })).status).toBe(405);
    expect((await s.request('GET', '/issues', { token: owner.token, query: { pagination: 'keyset' } })).status).toBe(405);
  });

  it('group lists with relative references, statistics, and the caller\'s own issues by default', async () => {
    const r = await s.request('GET', `/issues`, { token: dev.token, query: { per_page: 100 } });
    expect(r.status).toBe(200);
    expect(r.body.every((i: any) => i.author.username === 'dev')).toBe(true);
    expect((await s.request('GET', '/issues', { token: null })).status).toBe(401);
    const stats = await s.request('GET', `/projects/${p.id}/issues_statistics`, { token: owner.token });
    expect(stats.body).toEqual({ statistics: { counts: { all: 7, closed: 1, opened: 6 } } });
    const g = await s.request('POST', '/groups', { token: owner.token, json: { name: 'team', path: 'team', visibility: 'public' } });
    const gp = await createProject(s, 'gproj', { token: owner.token, visibility: 'public', extra: { namespace_id: g.body.id } });
    await post(owner.token, gp.id, { title: 'In group' });
    const gl = await s.request('GET', `/groups/${g.body.id}/issues`, { token: null });
    expect(gl.body.map((i: any) => i.references.relative)).toEqual(['gproj#1']);
    expect((await s.request('GET', `/groups/${g.body.id}/issues_statistics`, { token: null })).body.statistics.counts).toEqual({ all: 1, closed: 0, opened: 1 });
  });
});

describe('issues: participants and subscriptions', () => {
  it('subscribes (201, then 304) and lists participants', async () => {
    const c = await post(owner.token, pub.id, { title: 'Follow me', assignee_ids: [dev.id] });
    const iid = c.body.iid;
    const sub = await s.request('POST', `/projects/${pub.id}/issues/${iid}/subscribe`, { token: outsider.token });
    expect(sub.status).toBe(201);
    expect(sub.body.subscribed).toBe(true);
    expect((await s.request('POST', `/projects/${pub.id}/issues/${iid}/subscribe`, { token: outsider.token })).status).toBe(304);
    expect((await s.request('POST', `/projects/${pub.id}/issues/${iid}/unsubscribe`, { token: dev.token })).body.subscribed).toBe(false);
    const parts = await s.request('GET', `/projects/${pub.id}/issues/${iid}/participants`, { token: null });
    expect(parts.body.map((u: any) => u.username)).toEqual(['owner', 'dev']);
  });

  it('deleting a project deletes its issues', async () => {
    const p = await createProject(s, 'gone', { token: owner.token });
    const c = await post(owner.token, p.id, { title: 'Soon gone' });
    expect((await s.request('DELETE', `/projects/${p.id}`, { token: owner.token })).status).toBe(202);
    const admin = await s.request('GET', `/issues/${c.body.id}`);
    expect(admin.status).toBe(404);
  });
});

describe('issues: notes, threads, award emoji, time tracking', () => {
  it('comments and threads on an issue, with user_notes_count, resolvable threads and internal notes', async () => {
    const c = await post(owner.token, pub.id, { title: 'Discuss me' });
    const base = `/projects/${pub.id}/issues/${c.body.iid}`;
    const note = await s.request('POST', `${base}/notes`, { token: outsider.token, json: { body: 'A comment' } });
    expect(note.status).toBe(201);
    expect(note.body).toMatchObject({ body: 'A comment', noteable_type: 'Issue', noteable_id: c.body.id, noteable_iid: c.body.iid, resolvable: false, author: { username: 'outsider' } });
    const thread = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'A thread' } });
    expect(thread.status).toBe(201);
    expect(thread.body.notes[0]).toMatchObject({ type: 'DiscussionNote', resolvable: true, resolved: false });
    const reply = await s.request('POST', `${base}/discussions/${thread.body.id}/notes`, { token: owner.token, json: { body: 'A reply' } });
    expect(reply.status).toBe(201);
    const internal = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'Members only', internal: true } });
    expect(internal.body.internal).toBe(true);
    expect((await s.request('GET', base, { token: owner.token })).body.user_notes_count).toBe(4);
    const seenByOutsider = await s.request('GET', `${base}/notes`, { token: outsider.token });
    expect(seenByOutsider.body.map((n: any) => n.body)).toEqual(['A reply', 'A thread', 'A comment']);
    const resolved = await s.request('PUT', `${base}/discussions/${thread.body.id}`, { token: dev.token, json: { resolved: true } });
    expect(resolved.status).toBe(200);
    expect(resolved.body.notes.every((n: any) => n.resolved)).toBe(true);
    expect((await s.request('PUT', `${base}/discussions/${thread.body.id}`, { token: outsider.token, json: { resolved: false } })).status).toBe(403);
    const ds = await s.request('GET', `${base}/discussions`, { token: owner.token });
    expect(ds.body.map((d: any) => d.notes.length)).toEqual([1, 2, 1]);
    // Notes on a merge request of the same iid stay apart.
    expect((await s.request('GET', `/projects/${pub.id}/merge_requests/${c.body.iid}/notes`, { token: owner.token })).status).toBe(404);
    expect((await s.request('DELETE', `${base}/notes/${note.body.id}`, { token: outsider.token })).status).toBe(204);
    expect((await s.request('GET', base, { token: owner.token })).body.user_notes_count).toBe(3);
    expect((await s.request('GET', `${base}/notes`, { token: null })).status).toBe(401);
  });

  it('a locked discussion takes comments from members only; a confidential issue hides its notes', async () => {
    const c = await post(owner.token, pub.id, { title: 'Locked', discussion_locked: true });
    const base = `/projects/${pub.id}/issues/${c.body.iid}`;
    expect((await s.request('POST', `${base}/notes`, { token: outsider.token, json: { body: 'no' } })).status).toBe(403);
    expect((await s.request('POST', `${base}/notes`, { token: guest.token, json: { body: 'member' } })).status).toBe(201);
    const secret = await post(owner.token, pub.id, { title: 'Hidden', confidential: true });
    expect((await s.request('GET', `/projects/${pub.id}/issues/${secret.body.iid}/notes`, { token: outsider.token })).status).toBe(404);
  });

  it('award emoji count as votes; time tracking follows GitLab\'s durations', async () => {
    const c = await post(owner.token, pub.id, { title: 'Vote' });
    const base = `/projects/${pub.id}/issues/${c.body.iid}`;
    const up = await s.request('POST', `${base}/award_emoji`, { token: outsider.token, json: { name: 'thumbsup' } });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ name: 'thumbsup', awardable_type: 'Issue', awardable_id: c.body.id });
    expect((await s.request('POST', `${base}/award_emoji`, { token: outsider.token, json: { name: 'thumbsup' } })).status).toBe(400);
    await s.request('POST', `${base}/award_emoji`, { token: dev.token, json: { name: 'thumbsdown' } });
    expect((await s.request('GET', base, { token: owner.token })).body).toMatchObject({ upvotes: 1, downvotes: 1 });
    const list = await s.request('GET', `/projects/${pub.id}/issues`, { token: owner.token, query: { order_by: 'popularity', per_page: 1 } });
    expect(list.body[0].iid).toBe(c.body.iid);
    expect((await s.request('DELETE', `${base}/award_emoji/${up.body.id}`, { token: dev.token })).status).toBe(401);
    expect((await s.request('DELETE', `${base}/award_emoji/${up.body.id}`, { token: outsider.token })).status).toBe(204);
    expect((await s.request('GET', base, { token: owner.token })).body.upvotes).toBe(0);
    const est = await s.request('POST', `${base}/time_estimate`, { token: dev.token, json: { duration: '3h30m' } });
    expect(est.status).toBe(201);
    expect(est.body).toEqual({ time_estimate: 12600, total_time_spent: 0, human_time_estimate: '3h 30m', human_total_time_spent: null });
    await s.request('POST', `${base}/add_spent_time`, { token: dev.token, json: { duration: '1d' } });
    const spent = await s.request('POST', `${base}/add_spent_time`, { token: dev.token, json: { duration: '-2h' } });
    expect(spent.body.total_time_spent).toBe(6 * 3600);
    expect((await s.request('POST', `${base}/add_spent_time`, { token: dev.token, json: { duration: 'soon' } })).body).toEqual({ message: '400 Bad request - Invalid time format' });
    expect((await s.request('POST', `${base}/time_estimate`, { token: outsider.token, json: { duration: '1h' } })).status).toBe(403);
    expect((await s.request('GET', `${base}/time_stats`, { token: null })).body.human_total_time_spent).toBe('6h');
  });
});

describe('issues: links', () => {
  it('links two issues both ways (relates_to), lists and shows the link, refuses repeats, blocks and unreadable targets, and unlinks', async () => {
    const a = await post(owner.token, pub.id, { title: 'Link source' });
    const b = await post(owner.token, priv.id, { title: 'Link target' });
    const links = `/projects/${pub.id}/issues/${a.body.iid}/links`;
    const r = await s.request('POST', links, { token: dev.token, json: { target_project_id: priv.id, target_issue_iid: b.body.iid } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['source_issue', 'target_issue', 'link_type']);
    expect(r.body).toMatchObject({ link_type: 'relates_to', source_issue: { id: a.body.id }, target_issue: { id: b.body.id } });
    expect(r.body.source_issue._links).toBeUndefined();
    expect((await s.request('POST', links, { token: dev.token, json: { target_project_id: priv.id, target_issue_iid: b.body.iid } })).body).toEqual({ message: 'Issue(s) already assigned' });
    const back = await s.request('POST', `/projects/${priv.id}/issues/${b.body.iid}/links`, { token: dev.token, json: { target_project_id: pub.path_with_namespace, target_issue_iid: a.body.iid } });
    expect(back.status).toBe(409);
    const list = await s.request('GET', links, { token: dev.token });
    expect(list.body.map((i: any) => [i.id, i.link_type])).toEqual([[b.body.id, 'relates_to']]);
    expect(list.body[0].issue_link_id).toBeGreaterThan(0);
    const fromOther = await s.request('GET', `/projects/${priv.id}/issues/${b.body.iid}/links`, { token: dev.token });
    expect(fromOther.body.map((i: any) => i.id)).toEqual([a.body.id]);
    // Someone who cannot read the private project's issue sees no link.
    expect((await s.request('GET', links, { token: outsider.token })).body).toEqual([]);
    expect((await s.request('GET', `${links}/${list.body[0].issue_link_id}`, { token: outsider.token })).status).toBe(404);
    const blocks = await s.request('POST', links, { token: dev.token, json: { target_project_id: pub.id, target_issue_iid: 1, link_type: 'blocks' } });
    expect(blocks.status).toBe(403);
    expect((await s.request('POST', links, { token: dev.token, json: { target_project_id: priv.id, target_issue_iid: 99999 } })).status).toBe(404);
    expect((await s.request('POST', links, { token: outsider.token, json: { target_project_id: priv.id, target_issue_iid: b.body.iid } })).body).toEqual({ message: '404 Project Not Found' });
    expect((await s.request('POST', links, { token: dev.token, json: { target_project_id: pub.id } })).body).toEqual({ message: '400 Bad request - "target_issue_iid" not given' });
    const self = await s.request('POST', links, { token: dev.token, json: { target_project_id: pub.id, target_issue_iid: a.body.iid } });
    expect(self.status).toBe(422);
    const shown = await s.request('GET', `${links}/${list.body[0].issue_link_id}`, { token: dev.token });
    expect(shown.body.link_type).toBe('relates_to');
    const del = await s.request('DELETE', `${links}/${list.body[0].issue_link_id}`, { token: dev.token });
    expect(del.status).toBe(200);
    expect(del.body.target_issue.id).toBe(b.body.id);
    expect((await s.request('GET', links, { token: dev.token })).body).toEqual([]);
  });
});

describe('issues: move and clone', () => {
  it('moves an issue with its labels (by title), notes and awards, closing the original; clones without notes unless asked', async () => {
    const from = await createProject(s, 'move-from', { token: owner.token });
    const to = await createProject(s, 'move-to', { token: owner.token });
    await s.request('POST', `/projects/${to.id}/labels`, { token: owner.token, json: { name: 'bug', color: '#ff0000' } });
    const orig = await post(owner.token, from.id, { title: 'Wandering', description: 'd', labels: 'bug,only-here', assignee_ids: [owner.id] });
    await s.request('POST', `/projects/${from.id}/issues/${orig.body.iid}/notes`, { token: owner.token, json: { body: 'travels along' } });
    await s.request('POST', `/projects/${from.id}/issues/${orig.body.iid}/award_emoji`, { token: owner.token, json: { name: 'thumbsup' } });
    const moved = await s.request('POST', `/projects/${from.id}/issues/${orig.body.iid}/move`, { token: owner.token, json: { to_project_id: to.id } });
    expect(moved.status).toBe(201);
    expect(moved.body).toMatchObject({ project_id: to.id, iid: 1, title: 'Wandering', labels: ['bug'], state: 'opened', upvotes: 1, user_notes_count: 1, author: { username: 'owner' } });
    expect(moved.body.assignees.map((a: any) => a.username)).toEqual(['owner']);
    const notes = await s.request('GET', `/projects/${to.id}/issues/1/notes`, { token: owner.token });
    expect(notes.body.map((n: any) => n.body)).toEqual(['travels along']);
    const old = await s.request('GET', `/projects/${from.id}/issues/${orig.body.iid}`, { token: owner.token });
    expect(old.body).toMatchObject({ state: 'closed', moved_to_id: moved.body.id });
    expect((await s.request('GET', `/projects/${from.id}`, { token: owner.token })).body.open_issues_count).toBe(0);
    expect((await s.request('GET', `/projects/${to.id}`, { token: owner.token })).body.open_issues_count).toBe(1);
    const again = await s.request('POST', `/projects/${from.id}/issues/${orig.body.iid}/move`, { token: owner.token, json: { to_project_id: to.id } });
    expect(again.body).toEqual({ message: 'Cannot move issue due to insufficient permissions!' });
    const same = await s.request('POST', `/projects/${to.id}/issues/1/move`, { token: owner.token, json: { to_project_id: to.id } });
    expect(same.body).toEqual({ message: 'Cannot move issue to project it originates from!' });
    const clone = await s.request('POST', `/projects/${to.id}/issues/1/clone`, { token: owner.token, json: { to_project_id: to.id } });
    expect(clone.status).toBe(201);
    expect(clone.body).toMatchObject({ iid: 2, title: 'Wandering', user_notes_count: 0, upvotes: 0, state: 'opened' });
    const withNotes = await s.request('POST', `/projects/${to.id}/issues/1/clone`, { token: owner.token, json: { to_project_id: from.id, with_notes: true } });
    expect(withNotes.body).toMatchObject({ project_id: from.id, user_notes_count: 1 });
    // Guests cannot move; an unknown issue is 404 Issue Not Found.
    expect((await s.request('POST', `/projects/${pub.id}/issues/1/move`, { token: guest.token, json: { to_project_id: priv.id } })).body).toEqual({ message: 'Cannot move issue due to insufficient permissions!' });
    expect((await s.request('POST', `/projects/${to.id}/issues/999/move`, { token: owner.token, json: { to_project_id: from.id } })).body).toEqual({ message: '404 Issue Not Found' });
  });
});

describe('issues: access and integrity rules', () => {
  it('expired memberships give no issues in lists across projects; shares do', async () => {
    const p = await createProject(s, 'expiring', { token: owner.token });
    const temp = await s.createUser('temp');
    await addMember(s, p.id, temp.id, 15);
    await post(owner.token, p.id, { title: 'Private issue' });
    await post(owner.token, p.id, { title: 'Private secret', confidential: true });
    const mine = async (path: string) => (await s.request('GET', path, { token: temp.token, query: { scope: 'all', per_page: 100 } })).body;
    const here = async () => (await mine('/issues')).filter((i: any) => i.project_id === p.id).map((i: any) => i.title);
    expect(await here()).toEqual(['Private secret', 'Private issue']);
    await s.app.lw.db.updateTable('members').set({ expires_at: '2000-01-01' }).where('user_id', '=', temp.id).execute();
    await s.settle();
    expect(await here()).toEqual([]);
    // A group the project is shared with gives its members the issues (not the confidential one below Planner).
    const g = await s.request('POST', '/groups', { token: owner.token, json: { name: 'readers', path: 'readers' } });
    await s.request('POST', `/groups/${g.body.id}/members`, { token: owner.token, json: { user_id: temp.id, access_level: 30 } });
    expect((await s.request('POST', `/projects/${p.id}/share`, { token: owner.token, json: { group_id: g.body.id, group_access: 10 } })).status).toBe(201);
    expect(await here()).toEqual(['Private issue']);
  });

  it('many labels filter in one statement; more than 1,000 are a 400', async () => {
    const p = await createProject(s, 'labelled', { token: owner.token, visibility: 'public' });
    await post(owner.token, p.id, { title: 'Both', labels: 'a,b' });
    await post(owner.token, p.id, { title: 'One', labels: 'a' });
    const both = await s.request('GET', `/projects/${p.id}/issues`, { token: null, query: { labels: 'A,b' } });
    expect(both.body.map((i: any) => i.title)).toEqual(['Both']);
    const many = Array.from({ length: 200 }, (_, i) => `l${i}`).join(',');
    expect((await s.request('GET', `/projects/${p.id}/issues`, { token: null, query: { labels: many } })).body).toEqual([]);
    expect((await s.request('GET', `/projects/${p.id}/issues`, { token: null, query: { 'not[labels]': 'b' } })).body.map((i: any) => i.title)).toEqual(['One']);
    const tooMany = Array.from({ length: 1001 }, (_, i) => `l${i}`).join(',');
    expect((await s.request('GET', `/projects/${p.id}/issues`, { token: null, query: { labels: tooMany } })).body).toEqual({ error: 'labels has too many values (maximum is 1000)' });
    const huge = await post(owner.token, p.id, { title: 'x', assignee_ids: Array.from({ length: 70_000 }, (_, i) => i + 1) });
    expect(huge.status).toBe(201);
  });

  it('an author may not lift confidentiality nor track time; a project Guest sets metadata on creation', async () => {
    const c = await post(outsider.token, pub.id, { title: 'Mine and secret', confidential: true });
    const lift = await s.request('PUT', `/projects/${pub.id}/issues/${c.body.iid}`, { token: outsider.token, json: { confidential: false, title: 'Renamed' } });
    expect(lift.body).toMatchObject({ title: 'Renamed', confidential: true });
    expect((await s.request('POST', `/projects/${pub.id}/issues/${c.body.iid}/time_estimate`, { token: outsider.token, json: { duration: '1h' } })).status).toBe(403);
    const g = await post(guest.token, pub.id, { title: 'Guest labels', labels: 'guest-label', assignee_ids: [guest.id] });
    expect(g.body).toMatchObject({ labels: ['guest-label'], assignees: [{ username: 'guest' }] });
    // An outsider cannot be assigned to a confidential issue they may not read.
    const assign = await s.request('PUT', `/projects/${pub.id}/issues/${c.body.iid}`, { token: owner.token, json: { assignee_ids: [dev.id] } });
    expect(assign.body.assignees.map((a: any) => a.username)).toEqual(['dev']);
    const secret = await post(owner.token, pub.id, { title: 'Owner secret', confidential: true });
    const notOutsider = await s.request('PUT', `/projects/${pub.id}/issues/${secret.body.iid}`, { token: owner.token, json: { assignee_ids: [outsider.id] } });
    expect(notOutsider.body.assignees).toEqual([]);
    expect((await s.request('GET', `/projects/${pub.id}/issues/${secret.body.iid}`, { token: outsider.token })).status).toBe(404);
  });

  it('open_issues_count leaves out confidential issues for those who may not read them, and is absent where issues are hidden', async () => {
    const p = await createProject(s, 'counting', { token: owner.token, visibility: 'public' });
    await post(owner.token, p.id, { title: 'Open' });
    const c = await post(owner.token, p.id, { title: 'Hidden open', confidential: true });
    expect((await s.request('GET', `/projects/${p.id}`, { token: owner.token })).body.open_issues_count).toBe(2);
    expect((await s.request('GET', `/projects/${p.id}`, { token: null })).body.open_issues_count).toBe(1);
    await s.request('PUT', `/projects/${p.id}/issues/${c.body.iid}`, { token: owner.token, json: { confidential: false } });
    expect((await s.request('GET', `/projects/${p.id}`, { token: null })).body.open_issues_count).toBe(2);
    await s.request('PUT', `/projects/${p.id}/issues/${c.body.iid}`, { token: owner.token, json: { confidential: true, state_event: 'close' } });
    expect((await s.request('GET', `/projects/${p.id}`, { token: null })).body.open_issues_count).toBe(1);
    await s.request('PUT', `/projects/${p.id}`, { token: owner.token, json: { issues_access_level: 'private' } });
    expect((await s.request('GET', `/projects/${p.id}`, { token: null })).body.open_issues_count).toBeUndefined();
    expect((await s.request('GET', `/projects/${p.id}`, { token: owner.token })).body.open_issues_count).toBe(1);
  });

  it('a locked closed issue stays closed; iids stop at the largest integer; a taken iid is Duplicated issue', async () => {
    const p = await createProject(s, 'limits', { token: owner.token });
    const c = await post(owner.token, p.id, { title: 'Lock me', discussion_locked: true });
    await s.request('PUT', `/projects/${p.id}/issues/${c.body.iid}`, { token: owner.token, json: { state_event: 'close' } });
    const reopen = await s.request('PUT', `/projects/${p.id}/issues/${c.body.iid}`, { token: owner.token, json: { state_event: 'reopen' } });
    expect(reopen.body.state).toBe('closed');
    expect((await post(owner.token, p.id, { title: 'too big', iid: 2_147_483_647 })).status).toBe(400);
    expect((await post(owner.token, p.id, { title: 'last but one', iid: 2_147_483_646 })).body.iid).toBe(2_147_483_646);
    expect((await post(owner.token, p.id, { title: 'last' })).body.iid).toBe(2_147_483_647);
    expect((await post(owner.token, p.id, { title: 'none left' })).status).toBe(422);
    expect((await post(owner.token, p.id, { title: 'dup', iid: c.body.iid })).body).toEqual({ message: 'Duplicated issue' });
    expect((await post(owner.token, p.id, { title: 'old', created_at: '0000-01-01T00:00:00Z' })).body).toEqual({ error: 'created_at is invalid' });
  });
});

describe('issues: concurrency and shares (re-verification)', () => {
  it('five moves at once make one copy', async () => {
    const from = await createProject(s, 'race-from', { token: owner.token });
    const to = await createProject(s, 'race-to', { token: owner.token });
    const orig = await post(owner.token, from.id, { title: 'Only once' });
    const results = await Promise.all(Array.from({ length: 5 }, () => s.request('POST', `/projects/${from.id}/issues/${orig.body.iid}/move`, { token: owner.token, json: { to_project_id: to.id } })));
    expect(results.filter((r) => r.status === 201).length).toBe(1);
    expect(results.filter((r) => r.status === 400).length).toBe(4);
    expect((await s.request('GET', `/projects/${to.id}/issues`, { token: owner.token })).body.length).toBe(1);
  });

  it('merge request lists across projects include projects reached through a share; many assignee names filter in one subquery', async () => {
    const p = await createProject(s, 'shared-mrs', { token: owner.token });
    const reader = await s.createUser('share-reader');
    const g = await s.request('POST', '/groups', { token: owner.token, json: { name: 'mr-readers', path: 'mr-readers' } });
    await s.request('POST', `/groups/${g.body.id}/members`, { token: owner.token, json: { user_id: reader.id, access_level: 30 } });
    expect((await s.request('POST', `/projects/${p.id}/share`, { token: owner.token, json: { group_id: g.body.id, group_access: 30 } })).status).toBe(201);
    await s.request('POST', `/projects/${p.id}/repository/branches`, { token: owner.token, json: { branch: 'topic', ref: 'main' } });
    await s.request('POST', `/projects/${p.id}/repository/commits`, { token: owner.token, json: { branch: 'topic', commit_message: 'x', actions: [{ action: 'create', file_path: 'x.txt', content: 'x' }] } });
    await s.request('POST', `/projects/${p.id}/merge_requests`, { token: owner.token, json: { source_branch: 'topic', target_branch: 'main', title: 'Shared MR' } });
    const all = await s.request('GET', '/merge_requests', { token: reader.token, query: { scope: 'all', per_page: 100 } });
    expect(all.body.filter((m: any) => m.project_id === p.id).map((m: any) => m.title)).toEqual(['Shared MR']);
    const names = Array.from({ length: 80 }, (_, i) => `n${i}`);
    const many = await s.request('GET', `/projects/${p.id}/issues?${names.map((n) => `assignee_username[]=${n}`).join('&')}`, { token: owner.token });
    expect(many.status).toBe(200);
    expect(many.body).toEqual([]);
    const mrs = await s.request('GET', `/projects/${p.id}/merge_requests?${names.map((n) => `assignee_username[]=${n}`).join('&')}`, { token: owner.token });
    expect(mrs.body).toEqual([]);
  });
});

// Events: what people did, as GitLab's events APIs show it: project creation, members joining and
// leaving, merge requests and issues opened, closed, reopened, merged and approved, comments, pushes
// (single refs through the real git CLI, bulk pushes past the limit, tags, deletions), milestones;
// the filters, pages, sources (/events, scope=all, /users/:id/events, /projects/:id/events), who
// sees which event, and what goes with a deleted project; python-gitlab's and gitbeaker's calls.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { git } from '../helpers/git.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let work: string;
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let guest: U;
let outsider: U;
let project: { id: number; path_with_namespace: string; default_branch: string };

const EVENT_KEYS = ['id', 'project_id', 'action_name', 'target_id', 'target_iid', 'target_type', 'author_id', 'target_title', 'created_at', 'author', 'imported', 'imported_from', 'author_username'];
const events = (token: string, query: Record<string, string | number> = {}, id = project.id) => s.request('GET', `/projects/${id}/events`, { token, query });

beforeAll(async () => {
  s = await startServer();
  work = mkdtempSync(join(tmpdir(), 'lw-events-'));
  owner = await s.createUser('evowner');
  dev = await s.createUser('evdev');
  guest = await s.createUser('evguest');
  outsider = await s.createUser('evoutsider');
  project = await createProject(s, 'activity', { token: owner.token });
  await addMember(s, project.id, dev.id, 30);
  await addMember(s, project.id, guest.id, 10);
}, 60_000);

afterAll(async () => {
  await closeServer(s);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('events', () => {
  it('records the project\'s creation and its members joining, newest first, in GitLab\'s entity', async () => {
    const r = await events(owner.token);
    expect(r.status).toBe(200);
    expect(r.body.map((e: any) => [e.action_name, e.author_username, e.target_type])).toEqual([
      ['joined', 'evguest', 'Project'],
      ['joined', 'evdev', 'Project'],
      ['pushed new', 'evowner', null],
      ['created', 'evowner', 'Project'],
    ]);
    expect(r.body[2].push_data).toMatchObject({ action: 'created', ref: 'main', commit_count: 1, commit_title: 'Initial commit' });
    const created = r.body[3];
    expect(Object.keys(created)).toEqual(EVENT_KEYS);
    // As GitLab 18: the project is the target of its creation and of its members' joining.
    expect(created).toMatchObject({ project_id: project.id, target_id: project.id, target_iid: project.id, target_title: 'activity', author_id: owner.id, imported: false, imported_from: 'none' });
    expect(created.author).toMatchObject({ id: owner.id, username: 'evowner' });
    expect(r.headers.get('x-total')).toBe('4');
  });

  it('records merge requests opened, closed, reopened, approved and merged, and comments on them', async () => {
    await commit(s, project.id, 'feature', { 'a.txt': 'a' }, { from: 'main' });
    const mr = await openMr(s, project.id, 'feature', { title: 'Add a' }, dev.token);
    const put = (state_event: string) => s.request('PUT', `/projects/${project.id}/merge_requests/${mr.iid}`, { token: dev.token, json: { state_event } });
    expect((await put('close')).status).toBe(200);
    expect((await put('reopen')).status).toBe(200);
    const note = await s.request('POST', `/projects/${project.id}/merge_requests/${mr.iid}/notes`, { token: dev.token, json: { body: 'Looks good' } });
    expect(note.status).toBe(201);
    const thread = await s.request('POST', `/projects/${project.id}/merge_requests/${mr.iid}/discussions`, { token: owner.token, json: { body: 'One thing' } });
    expect(thread.status).toBe(201);
    expect((await s.request('POST', `/projects/${project.id}/merge_requests/${mr.iid}/approve`, { token: owner.token })).status).toBe(201);
    expect((await s.request('PUT', `/projects/${project.id}/merge_requests/${mr.iid}/merge`, { token: owner.token })).status).toBe(200);

    const r = await events(owner.token, { target_type: 'merge_request' });
    expect(r.body.map((e: any) => [e.action_name, e.author_username])).toEqual([
      ['accepted', 'evowner'],
      ['approved', 'evowner'],
      ['opened', 'evdev'],
      ['closed', 'evdev'],
      ['opened', 'evdev'],
    ]);
    expect(r.body[0]).toMatchObject({ target_id: mr.id, target_iid: mr.iid, target_type: 'MergeRequest', target_title: 'Add a' });

    const comments = await events(owner.token, { action: 'commented' });
    expect(comments.body.map((e: any) => [e.target_type, e.author_username])).toEqual([
      ['DiscussionNote', 'evowner'],
      ['Note', 'evdev'],
    ]);
    const c = comments.body[1];
    expect(Object.keys(c)).toEqual([...EVENT_KEYS.slice(0, 9), 'note', ...EVENT_KEYS.slice(9)]);
    expect(c).toMatchObject({ action_name: 'commented on', target_id: note.body.id, target_iid: note.body.id, target_title: 'Add a' });
    expect(c.note).toMatchObject({ id: note.body.id, body: 'Looks good', noteable_type: 'MergeRequest', noteable_id: mr.id, noteable_iid: mr.iid });
    // A comment on a commit: its title is the commit's, and the note has no noteable iid.
    const sha = (await s.request('GET', `/projects/${project.id}/repository/branches/main`, { token: owner.token })).body.commit.id;
    expect((await s.request('POST', `/projects/${project.id}/repository/commits/${sha}/comments`, { token: dev.token, json: { note: 'On the merge' } })).status).toBe(201);
    const onCommit = (await events(owner.token, { action: 'commented' })).body[0];
    expect(onCommit).toMatchObject({ target_type: 'Note', target_title: `Merge branch 'feature' into 'main'` });
    expect(onCommit.note).toMatchObject({ body: 'On the merge', noteable_type: 'Commit', noteable_iid: null });
    // target_type=note is the plain Note class only, as in GitLab.
    expect((await events(owner.token, { target_type: 'note' })).body.map((e: any) => e.target_type)).toEqual(['Note', 'Note']);
  });

  it('records pushes through git: a new branch, more commits, a deletion, a tag, and one bulk event past three refs', async () => {
    const dir = join(work, 'clone');
    const url = new URL(s.url);
    const remote = `${url.protocol}//evdev:${dev.token}@${url.host}/${project.path_with_namespace}.git`;
    await git(work, 'clone', '-q', remote, dir);
    await git(dir, 'checkout', '-q', '-b', 'topic');
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'First on topic');
    await git(dir, 'commit', '-q', '--allow-empty', '-m', `Second on topic with a very long title that goes on past seventy characters\n\nbody`);
    await git(dir, 'push', '-q', 'origin', 'topic');
    const head = (await git(dir, 'rev-parse', 'HEAD')).trim();
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'Third');
    await git(dir, 'push', '-q', 'origin', 'topic');
    const third = (await git(dir, 'rev-parse', 'HEAD')).trim();
    await git(dir, 'tag', 'v1.0');
    await git(dir, 'push', '-q', 'origin', 'v1.0');
    await git(dir, 'push', '-q', 'origin', '--delete', 'topic');
    await git(dir, 'push', '-q', 'origin', 'HEAD:refs/heads/b1', 'HEAD:refs/heads/b2', 'HEAD:refs/heads/b3', 'HEAD:refs/heads/b4');

    const r = await events(owner.token, { action: 'pushed' });
    // The oldest: the merge of the test before, pushed to main by the one who merged.
    expect(r.body.slice(0, 6).map((e: any) => e.action_name)).toEqual(['pushed new', 'deleted', 'pushed new', 'pushed to', 'pushed new', 'pushed to']);
    const [bulk, deleted, tag, more, created, merge] = r.body;
    expect(merge).toMatchObject({ author_username: 'evowner', push_data: { action: 'pushed', ref: 'main', commit_count: 2 } });
    expect(r.body[6]).toMatchObject({ action_name: 'pushed new', push_data: { ref: 'main' } });
    expect(Object.keys(created)).toEqual([...EVENT_KEYS.slice(0, 12), 'push_data', 'author_username']);
    expect(created.push_data).toEqual({
      commit_count: 2,
      action: 'created',
      ref_type: 'branch',
      commit_from: null,
      commit_to: head,
      ref: 'topic',
      commit_title: 'Second on topic with a very long title that goes on past seventy ch...',
      ref_count: null,
    });
    expect(created).toMatchObject({ author_username: 'evdev', target_type: null, target_id: null });
    expect(more.push_data).toMatchObject({ commit_count: 1, action: 'pushed', commit_from: head, commit_to: third, commit_title: 'Third' });
    expect(tag.push_data).toMatchObject({ action: 'created', ref_type: 'tag', ref: 'v1.0', commit_to: third });
    expect(deleted.push_data).toMatchObject({ commit_count: 0, action: 'removed', ref_type: 'branch', commit_from: third, commit_to: null, ref: 'topic', commit_title: null });
    expect(bulk.push_data).toMatchObject({ action: 'created', ref_type: 'branch', ref_count: 4, ref: null, commit_count: 0 });
    // Groups are per kind and action: four deletions make one bulk event; two new branches and two
    // updated ones (four refs, two groups of two) make four events.
    await git(dir, 'push', '-q', 'origin', '--delete', 'b1', 'b2', 'b3', 'b4');
    await git(dir, 'push', '-q', 'origin', 'HEAD:refs/heads/c1', 'HEAD:refs/heads/c2');
    await git(dir, 'commit', '-q', '--allow-empty', '-m', 'Fourth');
    await git(dir, 'push', '-q', 'origin', 'HEAD:refs/heads/c1', 'HEAD:refs/heads/c2', 'HEAD:refs/heads/c3', 'HEAD:refs/heads/c4');
    const later = (await events(owner.token, { action: 'pushed', per_page: 5 })).body;
    expect(later.map((e: any) => [e.action_name, e.push_data.ref_count])).toEqual([
      ['pushed new', null],
      ['pushed new', null],
      ['pushed to', null],
      ['pushed to', null],
      ['pushed new', null],
    ]);
    const removed = (await events(owner.token, { action: 'pushed', per_page: 7 })).body[6];
    expect([removed.action_name, removed.push_data.action, removed.push_data.ref_count]).toEqual(['deleted', 'removed', 4]);
    // Guests do not read a private project's code, so not its pushes either.
    expect((await events(guest.token, { action: 'pushed' })).body).toEqual([]);
  });

  it('records issues and keeps confidential ones from those who may not read them', async () => {
    const open = await s.request('POST', `/projects/${project.id}/issues`, { token: dev.token, json: { title: 'Public bug' } });
    const secret = await s.request('POST', `/projects/${project.id}/issues`, { token: owner.token, json: { title: 'Secret', confidential: true } });
    expect((await s.request('PUT', `/projects/${project.id}/issues/${open.body.iid}`, { token: dev.token, json: { state_event: 'close' } })).status).toBe(200);
    await s.request('POST', `/projects/${project.id}/issues/${secret.body.iid}/notes`, { token: owner.token, json: { body: 'hush' } });
    const mine = await events(owner.token, { target_type: 'issue' });
    expect(mine.body.map((e: any) => [e.action_name, e.target_title])).toEqual([
      ['closed', 'Public bug'],
      ['opened', 'Secret'],
      ['opened', 'Public bug'],
    ]);
    expect(mine.body[1]).toMatchObject({ target_iid: secret.body.iid, target_id: secret.body.id });
    const theirs = await events(guest.token, { target_type: 'issue' });
    expect(theirs.body.map((e: any) => [e.action_name, e.target_title])).toEqual([
      ['closed', 'Public bug'],
      ['opened', 'Public bug'],
    ]);
    // The comment on the confidential issue is theirs to see no more than the issue.
    expect((await events(guest.token, { action: 'commented' })).body.map((e: any) => e.note.body)).not.toContain('hush');
    expect((await events(owner.token, { action: 'commented' })).body.map((e: any) => e.note.body)).toContain('hush');
  });

  it('records milestones opened, closed and reopened; they go with a deleted milestone', async () => {
    const m = await s.request('POST', `/projects/${project.id}/milestones`, { token: dev.token, json: { title: 'v1' } });
    await s.request('PUT', `/projects/${project.id}/milestones/${m.body.id}`, { token: dev.token, json: { state_event: 'close' } });
    await s.request('PUT', `/projects/${project.id}/milestones/${m.body.id}`, { token: dev.token, json: { state_event: 'activate' } });
    const r = await events(owner.token, { target_type: 'milestone' });
    expect(r.body.map((e: any) => [e.action_name, e.target_title, e.target_iid])).toEqual([
      ['opened', 'v1', m.body.iid],
      ['closed', 'v1', m.body.iid],
      ['opened', 'v1', m.body.iid],
    ]);
    // GitLab deletes a milestone's events with it, then records one no one is shown.
    await s.request('DELETE', `/projects/${project.id}/milestones/${m.body.id}`, { token: dev.token });
    const after = await events(owner.token, { target_type: 'milestone' });
    expect([after.body, after.headers.get('x-total')]).toEqual([[], '1']);
  });

  it('filters by action, target type and dates, sorts, pages and refuses wrong filters', async () => {
    const all = (await events(owner.token, { per_page: 100 })).body;
    const asc = (await events(owner.token, { per_page: 100, sort: 'asc' })).body;
    expect(asc.map((e: any) => e.id)).toEqual([...all.map((e: any) => e.id)].reverse());
    // Pages are cut from every event, then those the caller may not read are left out (GitLab's
    // EventsFinder): the deleted milestone's event makes the first page short and counts in the total.
    const page1 = await events(owner.token, { per_page: 2, page: 1 });
    const page2 = await events(owner.token, { per_page: 2, page: 2 });
    expect(page1.body.length).toBe(1);
    expect([...page1.body, ...page2.body].map((e: any) => e.id)).toEqual(all.slice(0, 3).map((e: any) => e.id));
    expect(page2.headers.get('x-total')).toBe(String(all.length + 1));
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await events(owner.token, { before: today })).body).toEqual([]);
    expect((await events(owner.token, { after: today })).body).toEqual([]);
    expect((await events(owner.token, { after: '9999-12-31' })).body).toEqual([]);
    expect((await events(owner.token, { after: yesterday, before: tomorrow, per_page: 100 })).body.length).toBe(all.length);
    expect((await events(owner.token, { action: 'joined' })).body.map((e: any) => e.author_username)).toEqual(['evguest', 'evdev']);
    const bad: Array<[Record<string, string>, string]> = [
      [{ target_type: 'commit' }, 'target_type does not have a valid value'],
      [{ before: '2026-13-01' }, 'before is invalid'],
      [{ sort: 'up' }, 'sort does not have a valid value'],
    ];
    for (const [query, error] of bad) expect([query, (await events(owner.token, query)).body]).toEqual([query, { error }]);
    // GitLab validates no action (its values are a Hash, Grape's options form): an unknown one filters nothing.
    expect((await events(owner.token, { action: 'pushed_to', per_page: 100 })).body.length).toBe(all.length);
  });

  it('serves /events (own, or scope=all), /users/:id/events, and keeps private projects and profiles to those who may see them', async () => {
    expect((await s.request('GET', '/events', { token: null })).status).toBe(401);
    // A read_user token reads them (GET only), as GitLab's allow_access_with_scope.
    const reader = await s.createUser('evreader', { scopes: ['read_user'] });
    expect((await s.request('GET', '/events', { token: reader.token })).status).toBe(200);
    expect((await s.request('GET', `/users/${dev.id}/events`, { token: reader.token })).status).toBe(200);
    expect((await s.request('GET', `/projects/${project.id}/events`, { token: reader.token })).status).toBe(403);
    const own = await s.request('GET', '/events', { token: dev.token, query: { per_page: 100 } });
    expect(new Set(own.body.map((e: any) => e.author_username))).toEqual(new Set(['evdev']));
    const all = await s.request('GET', '/events', { token: dev.token, query: { scope: 'all', per_page: 100 } });
    expect(new Set(all.body.map((e: any) => e.author_username))).toEqual(new Set(['evdev', 'evowner', 'evguest']));
    expect((await s.request('GET', '/events', { token: outsider.token, query: { scope: 'all' } })).body).toEqual([]);
    // Another user's events: only those of projects the caller may see.
    const byName = await s.request('GET', `/users/evdev/events`, { token: guest.token, query: { per_page: 100 } });
    expect(byName.body.length).toBeGreaterThan(0);
    expect(byName.body.every((e: any) => e.action_name !== 'pushed new' && e.action_name !== 'pushed to')).toBe(true);
    expect((await s.request('GET', `/users/${dev.id}/events`, { token: outsider.token })).body).toEqual([]);
    // GitLab's EventsFinder: scope=all is the caller's projects' events, whichever user is named.
    const scoped = await s.request('GET', `/users/${outsider.id}/events`, { token: dev.token, query: { scope: 'all', per_page: 100 } });
    expect(scoped.body.map((e: any) => e.id)).toEqual(all.body.map((e: any) => e.id));
    expect((await s.request('GET', `/users/${dev.id}/events`, { token: null })).body).toEqual([]);
    expect(await s.request('GET', `/users/nobody-here/events`, { token: owner.token }).then((r) => [r.status, r.body])).toEqual([404, { message: '404 User Not Found' }]);
    expect((await events(outsider.token)).status).toBe(404);
    // A public project's events are anyone's; a private profile's are its owner's and admins'.
    const pub = await createProject(s, 'open-activity', { token: outsider.token, visibility: 'public' });
    expect((await s.request('GET', `/users/${outsider.id}/events`, { token: null })).body.map((e: any) => [e.project_id, e.action_name])).toEqual([[pub.id, 'pushed new'], [pub.id, 'created']]);
    expect((await s.request('PUT', `/users/${outsider.id}`, { json: { private_profile: true } })).status).toBe(200);
    expect((await s.request('GET', `/users/${outsider.id}/events`, { token: dev.token })).body).toEqual([]);
    expect((await s.request('GET', `/users/${outsider.id}/events`, { token: outsider.token })).body.map((e: any) => e.project_id)).toEqual([pub.id, pub.id]);
    // A member who left sees nothing more; the event says they left.
    expect((await s.request('DELETE', `/projects/${project.id}/members/${guest.id}`, { token: owner.token })).status).toBe(204);
    expect((await events(owner.token, { action: 'left' })).body.map((e: any) => [e.action_name, e.author_username])).toEqual([['left', 'evguest']]);
    expect((await events(guest.token)).status).toBe(404);
  });

  it('goes with a deleted project', async () => {
    const gone = await createProject(s, 'short-lived', { token: dev.token });
    expect((await s.request('GET', '/events', { token: dev.token, query: { target_type: 'project' } })).status).toBe(200);
    const before = (await s.request('GET', '/events', { token: dev.token, query: { per_page: 100 } })).body.filter((e: any) => e.project_id === gone.id);
    expect(before.map((e: any) => e.action_name)).toEqual(['pushed new', 'created']);
    expect((await s.request('DELETE', `/projects/${gone.id}`, { token: dev.token })).status).toBe(202);
    const after = (await s.request('GET', '/events', { token: dev.token, query: { per_page: 100 } })).body.filter((e: any) => e.project_id === gone.id);
    expect(after).toEqual([]);
  });

  it("answers python-gitlab's and gitbeaker's calls", async () => {
    const api = new Gitlab({ host: s.url, token: owner.token });
    const viaBeaker = await api.Events.all({ projectId: project.id, action: 'pushed', perPage: 100 });
    expect(viaBeaker.map((e) => e.action_name)).toContain('pushed new');
    const users = await api.Events.all({ userId: dev.id, perPage: 100 });
    expect(users.length).toBeGreaterThan(0);
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
p = gl.projects.get(int(sys.argv[3]))
pushes = p.events.list(action='pushed', get_all=True)
mine = gl.events.list(get_all=True)
u = gl.users.get(int(sys.argv[4]))
theirs = u.events.list(get_all=True)
print(json.dumps({'pushes': [e.action_name for e in pushes], 'push_data': pushes[-1].push_data['ref'], 'mine': len(mine), 'theirs': len(theirs)}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, owner.token, String(project.id), String(dev.id)]);
    const out = JSON.parse(stdout);
    expect(out.pushes[out.pushes.length - 1]).toBe('pushed new');
    expect(out.push_data).toBe('main');
    expect(out.mine).toBeGreaterThan(0);
    expect(out.theirs).toBeGreaterThan(0);
  });
});

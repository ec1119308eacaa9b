// Issues closed by merge requests and commits ("Closes #1"), the links both ways (closes_issues,
// closed_by), and the Issue Hook with note and emoji events on issues, delivered to a real
// HTTP receiver.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliveriesSettled } from '../../src/services/webhooks/dispatch.js';
import { startServer, type TestServer } from '../helpers/server.js';
import { startHookReceiver, type HookReceiver } from '../helpers/hook-receiver.js';
import { addMember, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let receiver: HookReceiver;
let hookBase: string;
let received: HookReceiver['received'] = [];
type U = { id: number; username: string; token: string };
let owner: U;
let dev: U;
let guest: U;
let p: { id: number; path_with_namespace: string };

beforeAll(async () => {
  receiver = await startHookReceiver();
  hookBase = receiver.base;
  received = receiver.received;
  s = await startServer({ LABWRIGHT_WEBHOOK_ALLOW_LOCAL: 'true' });
  owner = await s.createUser('owner');
  dev = await s.createUser('dev');
  guest = await s.createUser('guest');
  p = await createProject(s, 'tracker', { token: owner.token });
  await addMember(s, p.id, dev.id, 30);
  await addMember(s, p.id, guest.id, 10);
}, 60_000);

afterAll(async () => {
  await s?.close();
  await receiver?.close();
});

beforeEach(async () => {
  await deliveriesSettled(s.app.lw);
  received.length = 0;
});

const issue = async (title: string, extra: Record<string, unknown> = {}, token = owner.token) => {
  const r = await s.request('POST', `/projects/${p.id}/issues`, { token, json: { title, ...extra } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
};

describe('closing issues', () => {
  it('links the issues a merge request names, lists them both ways, and closes them on merge', async () => {
    const a = await issue('Bug A');
    const b = await issue('Bug B');
    const c = await issue('Bug C');
    await commit(s, p.id, 'fix-ab', { 'fix.txt': 'fixed' }, { from: 'main' });
    const mr = await openMr(s, p.id, 'fix-ab', { description: `This fixes #${a.iid} and #${b.iid}.\nRelated to #${c.iid}.` });
    const closes = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}/closes_issues`, { token: owner.token });
    expect(closes.status).toBe(200);
    expect(closes.body.map((i: any) => i.iid)).toEqual([a.iid, b.iid]);
    const by = await s.request('GET', `/projects/${p.id}/issues/${a.iid}/closed_by`, { token: owner.token });
    expect(by.body.map((m: any) => m.iid)).toEqual([mr.iid]);
    expect((await s.request('GET', `/projects/${p.id}/issues/${a.iid}`, { token: owner.token })).body.merge_requests_count).toBe(1);
    // Editing the description changes the links.
    await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}`, { token: owner.token, json: { description: `Closes ${s.url}/${p.path_with_namespace}/-/issues/${a.iid}` } });
    const after = await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}/closes_issues`, { token: owner.token });
    expect(after.body.map((i: any) => i.iid)).toEqual([a.iid]);
    const merged = await s.request('PUT', `/projects/${p.id}/merge_requests/${mr.iid}/merge`, { token: owner.token });
    expect(merged.status, JSON.stringify(merged.body)).toBe(200);
    const closedA = await s.request('GET', `/projects/${p.id}/issues/${a.iid}`, { token: owner.token });
    expect(closedA.body).toMatchObject({ state: 'closed', closed_by: { username: 'owner' } });
    expect((await s.request('GET', `/projects/${p.id}/issues/${b.iid}`, { token: owner.token })).body.state).toBe('opened');
  });

  it('merge_requests_count counts only merge requests the caller may read', async () => {
    const pubP = await createProject(s, 'public-tracker', { token: owner.token, visibility: 'public' });
    const target = await s.request('POST', `/projects/${pubP.id}/issues`, { token: owner.token, json: { title: 'Public bug' } });
    await commit(s, p.id, 'fix-public', { 'pub.txt': 'x' }, { from: 'main' });
    await openMr(s, p.id, 'fix-public', { description: `Fixes ${pubP.path_with_namespace}#${target.body.iid}` });
    const url = `/projects/${pubP.id}/issues/${target.body.iid}`;
    expect((await s.request('GET', url, { token: owner.token })).body.merge_requests_count).toBe(1);
    expect((await s.request('GET', url, { token: null })).body.merge_requests_count).toBe(0);
    expect((await s.request('GET', `${url}/closed_by`, { token: null })).body).toEqual([]);
  });

  it('a merge request into another branch closes nothing', async () => {
    const d = await issue('Bug D');
    await commit(s, p.id, 'base2', { 'b.txt': 'b' }, { from: 'main' });
    await commit(s, p.id, 'into-base2', { 'c.txt': 'c' }, { from: 'base2' });
    const mr = await openMr(s, p.id, 'into-base2', { target_branch: 'base2', description: `Closes #${d.iid}` });
    expect((await s.request('GET', `/projects/${p.id}/merge_requests/${mr.iid}/closes_issues`, { token: owner.token })).body).toEqual([]);
  });

  it('a push to the default branch closes the issues its commit messages name, if the pusher may update them', async () => {
    const e = await issue('Bug E');
    const f = await issue('Bug F', { confidential: true });
    const r = await s.request('POST', `/projects/${p.id}/repository/commits`, {
      token: owner.token,
      json: { branch: 'main', commit_message: `Resolve the crash\n\nFixes #${e.iid}, closes #${f.iid}`, actions: [{ action: 'create', file_path: 'crash.txt', content: 'x' }] },
    });
    expect(r.status).toBe(201);
    expect((await s.request('GET', `/projects/${p.id}/issues/${e.iid}`, { token: owner.token })).body).toMatchObject({ state: 'closed', closed_by: { username: 'owner' } });
    expect((await s.request('GET', `/projects/${p.id}/issues/${f.iid}`, { token: owner.token })).body.state).toBe('closed');
    const g = await issue('Bug G');
    // A commit naming an issue on another branch closes nothing.
    await s.request('POST', `/projects/${p.id}/repository/commits`, {
      token: dev.token,
      json: { branch: 'side', start_branch: 'main', commit_message: `Closes #${g.iid}`, actions: [{ action: 'create', file_path: 'side.txt', content: 'x' }] },
    });
    expect((await s.request('GET', `/projects/${p.id}/issues/${g.iid}`, { token: owner.token })).body.state).toBe('opened');
  });
});

describe('issue webhooks', () => {
  it('sends Issue Hook events for open, update (with changes), close and reopen; confidential ones to confidential hooks only', async () => {
    const hook = await s.request('POST', `/projects/${p.id}/hooks`, { token: owner.token, json: { url: `${hookBase}/issues`, issues_events: true, note_events: true, emoji_events: true, push_events: false } });
    expect(hook.status).toBe(201);
    const i = await issue('Hooked', { labels: 'bug' });
    await s.request('PUT', `/projects/${p.id}/issues/${i.iid}`, { token: owner.token, json: { title: 'Hooked again', add_labels: 'ui' } });
    await s.request('PUT', `/projects/${p.id}/issues/${i.iid}`, { token: owner.token, json: { state_event: 'close' } });
    await s.request('PUT', `/projects/${p.id}/issues/${i.iid}`, { token: owner.token, json: { state_event: 'reopen' } });
    await s.request('POST', `/projects/${p.id}/issues/${i.iid}/notes`, { token: dev.token, json: { body: 'A note' } });
    await s.request('POST', `/projects/${p.id}/issues/${i.iid}/award_emoji`, { token: dev.token, json: { name: 'thumbsup' } });
    const hidden = await issue('Hidden', { confidential: true });
    await s.request('PUT', `/projects/${p.id}/hooks/${hook.body.id}`, { token: owner.token, json: { confidential_note_events: true } });
    await s.request('POST', `/projects/${p.id}/issues/${hidden.iid}/notes`, { token: owner.token, json: { body: 'on a secret' } });
    await deliveriesSettled(s.app.lw);
    const secretNote = received.find((r) => r.headers['x-gitlab-event'] === 'Confidential Note Hook');
    expect(secretNote?.body).toMatchObject({ event_type: 'confidential_note', issue: { iid: hidden.iid, confidential: true } });
    const issueEvents = received.filter((r) => r.headers['x-gitlab-event'] === 'Issue Hook');
    expect(issueEvents.map((r) => r.body.object_attributes.action)).toEqual(['open', 'update', 'close', 'reopen']);
    const open = issueEvents[0].body;
    expect(open).toMatchObject({ object_kind: 'issue', event_type: 'issue', user: { username: 'owner' }, project: { id: p.id }, labels: [{ title: 'bug' }] });
    expect(open.object_attributes).toMatchObject({ iid: i.iid, title: 'Hooked', state: 'opened', state_id: 1, type: 'Issue', url: `${s.url}/${p.path_with_namespace}/-/issues/${i.iid}` });
    const upd = issueEvents[1].body;
    expect(upd.changes.title).toEqual({ previous: 'Hooked', current: 'Hooked again' });
    expect(upd.changes.labels.current.map((l: any) => l.title)).toEqual(['bug', 'ui']);
    expect(issueEvents[2].body.changes.state_id).toEqual({ previous: 1, current: 2 });
    const note = received.find((r) => r.headers['x-gitlab-event'] === 'Note Hook')!.body;
    expect(note).toMatchObject({ object_kind: 'note', object_attributes: { noteable_type: 'Issue', note: 'A note' }, issue: { iid: i.iid } });
    expect(note.object_attributes.url).toBe(`${s.url}/${p.path_with_namespace}/-/issues/${i.iid}#note_${note.object_attributes.id}`);
    const emoji = received.find((r) => r.headers['x-gitlab-event'] === 'Emoji Hook')!.body;
    expect(emoji).toMatchObject({ object_kind: 'emoji', object_attributes: { awardable_type: 'Issue', name: 'thumbsup' }, issue: { iid: i.iid } });
    expect(emoji.merge_request).toBeUndefined();
    expect(received.some((r) => r.headers['x-gitlab-event'] === 'Confidential Issue Hook')).toBe(false);
    // A test delivery sends the newest issue, opened.
    received.length = 0;
    const t = await s.request('POST', `/projects/${p.id}/hooks/${hook.body.id}/test/issues_events`, { token: owner.token });
    expect(t.status).toBe(201);
    expect(received[0].body).toMatchObject({ object_kind: 'issue', object_attributes: { title: 'Hidden', action: 'open' } });
    await s.request('DELETE', `/projects/${p.id}/hooks/${hook.body.id}`, { token: owner.token });
  });
});

// Notes and discussions of merge requests (GitLab's notes and discussions APIs): what a bot or a
// reviewer does with them, and who may do what (NotePolicy), on both databases.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let pid: number; // public
let privPid: number;
let dev: { id: number; token: string };
let dev2: { id: number; token: string };
let reporter: { id: number; token: string };
let guest: { id: number; token: string };
let maintainer: { id: number; token: string };
let outsider: { id: number; token: string };
let branch = 0;

const NOTE_KEYS = [
  'id', 'type', 'body', 'attachment', 'author', 'created_at', 'updated_at', 'system', 'noteable_id', 'noteable_type', 'project_id',
  'resolvable', 'confidential', 'internal', 'imported', 'imported_from', 'noteable_iid', 'commands_changes',
];
const THREAD_NOTE_KEYS = [
  'id', 'type', 'body', 'attachment', 'author', 'created_at', 'updated_at', 'system', 'noteable_id', 'noteable_type', 'project_id',
  'resolvable', 'resolved', 'resolved_by', 'resolved_at', 'confidential', 'internal', 'imported', 'imported_from', 'noteable_iid', 'commands_changes',
];

async function newMr(projectId = pid, extra: Record<string, unknown> = {}, token?: string) {
  const b = `n${++branch}`;
  await commit(s, projectId, b, { [`${b}.txt`]: b }, { from: 'main' });
  return openMr(s, projectId, b, extra, token);
}

beforeAll(async () => {
  s = await startServer();
  dev = await s.createUser('ndev');
  dev2 = await s.createUser('ndev2');
  reporter = await s.createUser('nreporter');
  guest = await s.createUser('nguest');
  maintainer = await s.createUser('nmaint');
  outsider = await s.createUser('noutsider');
  pid = (await createProject(s, 'notes-pub', { visibility: 'public' })).id;
  privPid = (await createProject(s, 'notes-priv')).id;
  for (const p of [pid, privPid]) {
    await addMember(s, p, dev.id, 30);
    await addMember(s, p, dev2.id, 30);
    await addMember(s, p, reporter.id, 20);
    await addMember(s, p, guest.id, 10);
    await addMember(s, p, maintainer.id, 40);
  }
});
afterAll(async () => {
  await closeServer(s);
});

describe('merge request notes', () => {
  it('a comment is created, listed, shown, edited and deleted; the merge request counts it', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    let r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'Looks good' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(NOTE_KEYS);
    expect(r.body).toMatchObject({
      type: null, body: 'Looks good', attachment: null, system: false, noteable_id: mr.id, noteable_type: 'MergeRequest',
      project_id: pid, resolvable: false, confidential: false, internal: false, imported: false, imported_from: 'none',
      noteable_iid: mr.iid, commands_changes: {},
    });
    expect(r.body.author.username).toBe('ndev');
    const first = r.body;
    r = await s.request('POST', `${base}/notes`, { token: outsider.token, form: { body: 'Drive-by comment' } });
    expect(r.status).toBe(201);
    const second = r.body;

    // Newest first by default; asc on request; headers of an offset page.
    r = await s.request('GET', `${base}/notes`, { token: dev.token });
    expect(r.body.map((n: any) => n.id)).toEqual([second.id, first.id]);
    expect(r.headers.get('x-total')).toBe('2');
    r = await s.request('GET', `${base}/notes?sort=asc&per_page=1`, { token: dev.token });
    expect(r.body.map((n: any) => n.id)).toEqual([first.id]);
    expect(r.headers.get('x-next-page')).toBe('2');
    expect((await s.request('GET', `${base}`)).body.user_notes_count).toBe(2);
    const listed = await s.request('GET', `/projects/${pid}/merge_requests?iids[]=${mr.iid}`);
    expect(listed.body[0].user_notes_count).toBe(2);

    r = await s.request('GET', `${base}/notes/${first.id}`, { token: reporter.token });
    expect(r.body).toEqual(first);

    // Edit: the author and a Maintainer may; another Developer may not.
    r = await s.request('PUT', `${base}/notes/${first.id}`, { token: dev2.token, json: { body: 'hijack' } });
    expect(r.status).toBe(403);
    r = await s.request('PUT', `${base}/notes/${first.id}`, { token: dev.token, json: { body: 'Looks good to me' } });
    expect([r.status, r.body.body]).toEqual([200, 'Looks good to me']);
    r = await s.request('PUT', `${base}/notes/${second.id}`, { token: maintainer.token, json: { body: 'moderated' } });
    expect([r.status, r.body.body]).toEqual([200, 'moderated']);
    r = await s.request('PUT', `${base}/notes/${first.id}`, { token: dev.token, json: { body: '' } });
    expect([r.status, r.body]).toEqual([400, { error: 'body is empty' }]);
    r = await s.request('PUT', `${base}/notes/${first.id}`, { token: dev.token, json: {} });
    expect([r.status, r.body.body]).toEqual([200, 'Looks good to me']);

    // Delete: another Developer may not; the author may; then it is gone and no longer counted.
    expect((await s.request('DELETE', `${base}/notes/${first.id}`, { token: dev2.token })).status).toBe(403);
    expect((await s.request('DELETE', `${base}/notes/${first.id}`, { token: dev.token })).status).toBe(204);
    expect((await s.request('GET', `${base}/notes/${first.id}`, { token: dev.token })).status).toBe(404);
    expect((await s.request('DELETE', `${base}/notes/${second.id}`, { token: maintainer.token })).status).toBe(204);
    expect((await s.request('GET', `${base}`)).body.user_notes_count).toBe(0);
  });

  it('wrong input is refused and changes nothing', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    let r = await s.request('POST', `${base}/notes`, { token: dev.token, json: {} });
    expect([r.status, r.body]).toEqual([400, { message: '400 Bad request - "body" not given' }]);
    r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: '   ' } });
    expect([r.status, r.body]).toEqual([400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` }]);
    r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: { nested: 1 } } });
    expect([r.status, r.body]).toEqual([400, { error: 'body is invalid' }]);
    r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'x'.repeat(1_000_001) } });
    expect(r.status).toBe(400);
    r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: null } });
    expect([r.status, r.body]).toEqual([400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` }]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: null } });
    expect([r.status, r.body]).toEqual([400, { message: `400 Bad request - Note {:note=>["can't be blank"]}` }]);
    // An Owner's date must be a date; anyone else's is not read at all.
    r = await s.request('POST', `${base}/notes`, { json: { body: 'x', created_at: 'yesterday' } });
    expect([r.status, r.body]).toEqual([400, { error: 'created_at is invalid' }]);
    r = await s.request('POST', `${base}/notes`, { json: { body: 'x', created_at: '1969-12-31T00:00:00Z' } });
    expect([r.status, r.body]).toEqual([400, { error: 'created_at is invalid' }]);
    r = await s.request('GET', `${base}/notes?sort=sideways`, { token: dev.token });
    expect([r.status, r.body]).toEqual([400, { error: 'sort does not have a valid value' }]);
    r = await s.request('GET', `${base}/notes/abc`, { token: dev.token });
    expect([r.status, r.body]).toEqual([400, { error: 'note_id is invalid' }]);
    r = await s.request('GET', `${base}/notes/99999999999`, { token: dev.token });
    expect([r.status, r.body]).toEqual([404, { message: '404 Not found' }]);
    r = await s.request('GET', `/projects/${pid}/merge_requests/9999/notes`, { token: dev.token });
    expect(r.status).toBe(404);
    expect((await s.request('GET', `${base}/notes`, { token: dev.token })).body).toEqual([]);
    expect((await s.request('GET', base)).body.user_notes_count).toBe(0);
    r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'dated by a Developer', created_at: 'yesterday' } });
    expect([r.status, r.body.created_at.startsWith(new Date().toISOString().slice(0, 4))]).toEqual([201, true]);
    // Edits: a null body is empty; confidentiality cannot change.
    r = await s.request('PUT', `${base}/notes/${r.body.id}`, { token: dev.token, json: { body: null } });
    expect([r.status, r.body]).toEqual([400, { error: 'body is empty' }]);
    const id = (await s.request('GET', `${base}/notes`, { token: dev.token })).body[0].id;
    r = await s.request('PUT', `${base}/notes/${id}`, { token: dev.token, json: { body: 'y', confidential: true } });
    expect([r.status, r.body]).toEqual([400, { message: '400 Bad request - Note {:confidential=>["can not be changed for existing notes"]}' }]);
    r = await s.request('PUT', `${base}/notes/${id}`, { token: dev.token, json: { body: 'y', confidential: false } });
    expect([r.status, r.body.body]).toEqual([200, 'y']);
  });

  it('who may read and write: signed in only, the merge request readable, archived projects read-only', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    // Both APIs need a signed-in caller, even on a public project.
    expect((await s.request('GET', `${base}/notes`, { token: null })).status).toBe(401);
    expect((await s.request('GET', `${base}/discussions`, { token: null })).status).toBe(401);
    expect((await s.request('POST', `${base}/notes`, { token: null, json: { body: 'x' } })).status).toBe(401);
    // A private project: outsiders see nothing, a Guest cannot read merge requests (they are code).
    const priv = await newMr(privPid);
    const pbase = `/projects/${privPid}/merge_requests/${priv.iid}`;
    expect((await s.request('GET', `${pbase}/notes`, { token: outsider.token })).status).toBe(404);
    expect((await s.request('POST', `${pbase}/notes`, { token: outsider.token, json: { body: 'x' } })).status).toBe(404);
    // A Guest of a private project does not read its merge requests: 404, as GitLab's finder of readable ones.
    expect((await s.request('GET', `${pbase}/notes`, { token: guest.token })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('POST', `${pbase}/discussions`, { token: guest.token, json: { body: 'x' } })).status).toBe(404);
    expect((await s.request('POST', `${pbase}/notes`, { token: reporter.token, json: { body: 'reporter here' } })).status).toBe(201);
    // An archived project takes no notes.
    const arch = (await createProject(s, 'notes-archived', { visibility: 'public' })).id;
    await commit(s, arch, 'a1', { 'a.txt': 'a' }, { from: 'main' });
    const amr = await openMr(s, arch, 'a1');
    expect((await s.request('POST', `/projects/${arch}/archive`)).status).toBe(201);
    const ar = await s.request('POST', `/projects/${arch}/merge_requests/${amr.iid}/notes`, { json: { body: 'x' } });
    expect(ar.status).toBe(403);
    expect((await s.request('GET', `/projects/${arch}/merge_requests/${amr.iid}/notes`)).body).toEqual([]);
  });

  it('a locked discussion takes notes from project members only', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    expect((await s.request('PUT', base, { json: { discussion_locked: true } })).status).toBe(200);
    expect((await s.request('GET', base)).body.discussion_locked).toBe(true);
    expect((await s.request('POST', `${base}/notes`, { token: outsider.token, json: { body: 'x' } })).status).toBe(403);
    expect((await s.request('POST', `${base}/discussions`, { token: outsider.token, json: { body: 'x' } })).status).toBe(403);
    expect((await s.request('POST', `${base}/notes`, { token: guest.token, json: { body: 'member' } })).status).toBe(201);
    expect((await s.request('GET', `${base}/notes`, { token: outsider.token })).body).toHaveLength(1);
  });

  it('internal notes are for Reporters and up; created_at is for Owners and administrators', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    let r = await s.request('POST', `${base}/notes`, { token: reporter.token, json: { body: 'internal', internal: true } });
    expect([r.status, r.body.internal, r.body.confidential]).toEqual([201, true, true]);
    const internal = r.body;
    // A Guest (and an outsider) asking for internal is given a public note.
    r = await s.request('POST', `${base}/notes`, { token: guest.token, json: { body: 'not internal', confidential: true } });
    expect(r.body.internal).toBe(false);
    r = await s.request('GET', `${base}/notes`, { token: guest.token });
    expect(r.body.map((n: any) => n.body)).toEqual(['not internal']);
    expect(r.headers.get('x-total')).toBe('1');
    expect((await s.request('GET', `${base}/notes/${internal.id}`, { token: outsider.token })).body).toEqual({ message: '404 Note Not Found' });
    expect((await s.request('GET', `${base}/notes`, { token: dev.token })).body).toHaveLength(2);
    // Owner (root, the creator) dates a note; a Developer's date is ignored.
    r = await s.request('POST', `${base}/notes`, { json: { body: 'imported', created_at: '2020-01-02T03:04:05Z' } });
    expect([r.body.created_at, r.body.updated_at]).toEqual(['2020-01-02T03:04:05.000Z', '2020-01-02T03:04:05.000Z']);
    r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'dated?', created_at: '2020-01-02T03:04:05Z' } });
    expect(r.body.created_at.startsWith('2020')).toBe(false);
    // The discussions API takes no `internal`: a thread is never internal.
    r = await s.request('POST', `${base}/discussions`, { token: reporter.token, json: { body: 'thread', internal: true } });
    expect(r.body.notes[0].internal).toBe(false);
  });
});

describe('merge request discussions', () => {
  it('threads: start, reply, list with comments, resolve; the merge waits for them when the project says so', async () => {
    const proj = (await createProject(s, 'threads', { visibility: 'public', extra: { only_allow_merge_if_all_discussions_are_resolved: true } })).id;
    await addMember(s, proj, dev.id, 30);
    await addMember(s, proj, reporter.id, 20);
    await commit(s, proj, 't1', { 't.txt': 't' }, { from: 'main' });
    const mr = await openMr(s, proj, 't1');
    const base = `/projects/${proj}/merge_requests/${mr.iid}`;

    let r = await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'a plain comment' } });
    const comment = r.body;
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'please rename this' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['id', 'individual_note', 'notes']);
    expect(r.body.id).toMatch(/^[0-9a-f]{40}$/);
    expect(r.body.individual_note).toBe(false);
    expect(Object.keys(r.body.notes[0])).toEqual(THREAD_NOTE_KEYS);
    expect(r.body.notes[0]).toMatchObject({ type: 'DiscussionNote', resolvable: true, resolved: false, resolved_by: null, resolved_at: null });
    const thread = r.body;

    // The merge request now waits for the thread.
    r = await s.request('GET', base);
    expect([r.body.blocking_discussions_resolved, r.body.detailed_merge_status, r.body.user_notes_count]).toEqual([false, 'discussions_not_resolved', 2]);
    expect((await s.request('PUT', `${base}/merge`)).status).toBe(405);

    r = await s.request('POST', `${base}/discussions/${thread.id}/notes`, { token: reporter.token, json: { body: 'done' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ type: 'DiscussionNote', body: 'done', resolvable: true, resolved: false });
    const replyNote = r.body;

    // The list: threads in the order they were started, a comment as an individual note.
    r = await s.request('GET', `${base}/discussions`, { token: reporter.token });
    expect(r.body.map((d: any) => [d.individual_note, d.notes.map((n: any) => n.body)])).toEqual([
      [true, ['a plain comment']],
      [false, ['please rename this', 'done']],
    ]);
    expect(r.headers.get('x-total')).toBe('2');
    expect(r.body[0].notes[0].id).toBe(comment.id);
    r = await s.request('GET', `${base}/discussions?per_page=1&page=2`, { token: reporter.token });
    expect(r.body.map((d: any) => d.id)).toEqual([thread.id]);
    r = await s.request('GET', `${base}/discussions/${thread.id}/notes`, { token: reporter.token });
    expect(r.body.map((n: any) => n.id)).toEqual([thread.notes[0].id, replyNote.id]);

    // A Reporter who did not write the merge request may not resolve it; a comment is not resolvable.
    expect((await s.request('PUT', `${base}/discussions/${thread.id}`, { token: reporter.token, json: { resolved: true } })).status).toBe(403);
    const commentThread = (await s.request('GET', `${base}/discussions`, { token: dev.token })).body[0].id;
    expect((await s.request('PUT', `${base}/discussions/${commentThread}`, { token: dev.token, json: { resolved: true } })).status).toBe(403);
    r = await s.request('PUT', `${base}/discussions/${commentThread}/notes/${comment.id}`, { token: dev.token, json: { resolved: true } });
    expect([r.status, r.body]).toEqual([400, { message: '400 Bad request - Note is not resolvable' }]);
    r = await s.request('PUT', `${base}/discussions/${thread.id}`, { token: dev.token, json: {} });
    expect([r.status, r.body]).toEqual([400, { message: '400 Bad request - "resolved" not given' }]);

    r = await s.request('PUT', `${base}/discussions/${thread.id}`, { token: dev.token, json: { resolved: true } });
    expect(r.status).toBe(200);
    expect(r.body.notes.map((n: any) => [n.resolved, n.resolved_by?.username])).toEqual([[true, 'ndev'], [true, 'ndev']]);
    r = await s.request('GET', base);
    expect([r.body.blocking_discussions_resolved, r.body.detailed_merge_status]).toEqual([true, 'mergeable']);

    // A reply to a resolved thread is resolved by its author, so the thread stays resolved.
    r = await s.request('POST', `${base}/discussions/${thread.id}/notes`, { token: reporter.token, json: { body: 'thanks' } });
    expect([r.body.resolved, r.body.resolved_by.username]).toEqual([true, 'nreporter']);
    // One note reopened (by its own author, a Reporter) reopens the thread.
    r = await s.request('PUT', `${base}/discussions/${thread.id}/notes/${replyNote.id}`, { token: reporter.token, json: { resolved: false } });
    expect([r.status, r.body.resolved, r.body.resolved_by]).toEqual([200, false, null]);
    expect((await s.request('GET', base)).body.detailed_merge_status).toBe('discussions_not_resolved');
    r = await s.request('PUT', `${base}/discussions/${thread.id}/notes/${replyNote.id}`, { token: reporter.token, json: { resolved: true, body: 'x' } });
    expect([r.status, r.body]).toEqual([400, { error: 'body, resolved are mutually exclusive' }]);
    r = await s.request('PUT', `${base}/discussions/${thread.id}/notes/${replyNote.id}`, { token: reporter.token, json: {} });
    expect([r.status, r.body]).toEqual([400, { error: 'body, resolved are missing, exactly one parameter must be provided' }]);
    r = await s.request('PUT', `${base}/discussions/${thread.id}/notes/${replyNote.id}`, { token: reporter.token, json: { body: 'done, renamed' } });
    expect([r.status, r.body.body]).toEqual([200, 'done, renamed']);

    // Deleting the unresolved note leaves the thread resolved: the merge goes through.
    expect((await s.request('DELETE', `${base}/discussions/${thread.id}/notes/${replyNote.id}`, { token: reporter.token })).status).toBe(204);
    r = await s.request('GET', base);
    expect([r.body.blocking_discussions_resolved, r.body.user_notes_count]).toEqual([true, 3]);
    r = await s.request('PUT', `${base}/merge`);
    expect([r.status, r.body.state]).toEqual([200, 'merged']);
  });

  it('a reply to a comment turns it into a thread; unknown threads are 404', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    const comment = (await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'hmm' } })).body;
    let r = await s.request('GET', `${base}/discussions`, { token: dev.token });
    const id = r.body[0].id;
    expect(r.body[0].individual_note).toBe(true);
    r = await s.request('GET', `${base}/discussions/${id}`, { token: dev.token });
    expect(r.body.notes.map((n: any) => n.id)).toEqual([comment.id]);
    r = await s.request('POST', `${base}/discussions/${id}/notes`, { token: dev2.token, json: { body: 'agreed' } });
    expect(r.status).toBe(201);
    r = await s.request('GET', `${base}/discussions/${id}`, { token: dev.token });
    expect(r.body.individual_note).toBe(false);
    expect(r.body.notes.map((n: any) => [n.type, n.resolvable, n.resolved])).toEqual([['DiscussionNote', true, false], ['DiscussionNote', true, false]]);
    expect((await s.request('GET', `${base}/notes/${comment.id}`, { token: dev.token })).body.type).toBe('DiscussionNote');

    r = await s.request('GET', `${base}/discussions/${'0'.repeat(40)}`, { token: dev.token });
    expect([r.status, r.body]).toEqual([404, { message: '404 Discussion Not Found' }]);
    r = await s.request('POST', `${base}/discussions/nope/notes`, { token: dev.token, json: { body: 'x' } });
    expect([r.status, r.body]).toEqual([404, { message: '404 Discussion Not Found' }]);
    r = await s.request('GET', `${base}/discussions/nope/notes`, { token: dev.token });
    expect([r.status, r.body]).toEqual([404, { message: '404 Notes Not Found' }]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'on a line', position: { base_sha: 'a', start_sha: 'b', head_sha: 'c', position_type: 'text', new_path: 'x', new_line: 1 } } });
    expect([r.status, r.body]).toEqual([400, { message: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}` }]);
    expect((await s.request('GET', `${base}/discussions`, { token: dev.token })).body).toHaveLength(1);
  });

  it('the author of the merge request may resolve threads on it whatever their level', async () => {
    const author = await s.createUser('nauthor');
    await addMember(s, pid, author.id, 30);
    const mr = await newMr(pid, {}, author.token);
    // Now only a Reporter: still the author.
    expect((await s.request('PUT', `/projects/${pid}/members/${author.id}`, { json: { access_level: 20 } })).status).toBe(200);
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    const thread = (await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'nit' } })).body;
    expect((await s.request('PUT', `${base}/discussions/${thread.id}`, { token: reporter.token, json: { resolved: true } })).status).toBe(403);
    const r = await s.request('PUT', `${base}/discussions/${thread.id}`, { token: author.token, json: { resolved: true } });
    expect([r.status, r.body.notes[0].resolved]).toEqual([200, true]);
    // Resolving again keeps the first resolver.
    const again = await s.request('PUT', `${base}/discussions/${thread.id}`, { token: dev.token, json: { resolved: true } });
    expect(again.body.notes[0].resolved_by.username).toBe('nauthor');
  });

  it('threads on lines of the diff (DiffNote): added, removed and unchanged lines, and lines the diff does not show', async () => {
    const proj = (await createProject(s, 'diffnotes', { visibility: 'public' })).id;
    await commit(s, proj, 'main', { 'code.txt': 'a\nb\nc\nd\ne\n' });
    await commit(s, proj, 'dn', { 'code.txt': 'a\nB\nc\nd\ne\nf\n' }, { from: 'main' });
    const mr = await openMr(s, proj, 'dn');
    const base = `/projects/${proj}/merge_requests/${mr.iid}`;
    const refs = (await s.request('GET', base)).body.diff_refs;
    const at = (lines: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      body: 'here', position: { ...refs, position_type: 'text', new_path: 'code.txt', old_path: 'code.txt', ...lines, ...extra },
    });
    // An added line by new_line alone.
    let r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ new_line: 2 }) });
    expect(r.status).toBe(201);
    const note = r.body.notes[0];
    expect(Object.keys(note)).toEqual([...THREAD_NOTE_KEYS.slice(0, 11), 'commit_id', 'position', ...THREAD_NOTE_KEYS.slice(11)]);
    expect(note).toMatchObject({ type: 'DiffNote', resolvable: true, resolved: false, commit_id: null });
    expect(note.position).toEqual({ ...refs, old_path: 'code.txt', new_path: 'code.txt', position_type: 'text', old_line: null, new_line: 2, line_range: null });
    const thread = r.body.id;
    // A removed line by old_line alone; an unchanged line by both; form-style nested keys as python-gitlab sends them.
    expect((await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ old_line: 2 }) })).status).toBe(201);
    expect((await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ old_line: 3, new_line: 3 }) })).status).toBe(201);
    const form: Record<string, string> = { body: 'form' };
    for (const [k, v] of Object.entries({ ...refs, position_type: 'text', new_path: 'code.txt', new_line: '6' })) form[`position[${k}]`] = String(v);
    expect((await s.request('POST', `${base}/discussions`, { token: dev.token, form })).status).toBe(201);
    // What the diff does not show is GitLab's line code error; nothing is written.
    const invalid = { message: `400 Bad request - Note {:line_code=>["can't be blank", "must be a valid line code"]}` };
    for (const lines of [{ new_line: 3 }, { old_line: 2, new_line: 2 }, { new_line: 40 }]) {
      r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at(lines) });
      expect([r.status, r.body]).toEqual([400, invalid]);
    }
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ new_line: 2 }, { new_path: 'other.txt', old_path: 'other.txt' }) });
    expect([r.status, r.body]).toEqual([400, invalid]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ new_line: 2 }, { head_sha: 'f'.repeat(40) }) });
    expect([r.status, r.body]).toEqual([400, invalid]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({}) });
    expect(r.body.message).toContain(':position=>["is incomplete"]');
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'x', position: { head_sha: refs.head_sha } } });
    expect([r.status, r.body]).toEqual([400, { message: '400 Bad request - "position[base_sha]" not given' }]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ new_line: 2 }, { position_type: 'sound' }) });
    expect([r.status, r.body]).toEqual([400, { error: 'position[position_type] does not have a valid value' }]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: at({ new_line: 'two' }) });
    expect([r.status, r.body]).toEqual([400, { error: 'position[new_line] is invalid' }]);
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'x', position: 'here' } });
    expect([r.status, r.body]).toEqual([400, { error: 'position is invalid' }]);
    // A comment on the whole file.
    r = await s.request('POST', `${base}/discussions`, { token: dev.token, json: { body: 'file', position: { ...refs, position_type: 'file', new_path: 'code.txt' } } });
    expect([r.status, r.body.notes[0].position.position_type, r.body.notes[0].position.old_path]).toEqual([201, 'file', 'code.txt']);

    // A reply is a DiffNote at the same place; the thread resolves like any other.
    r = await s.request('POST', `${base}/discussions/${thread}/notes`, { token: reporter.token, json: { body: 'fixed' } });
    expect([r.body.type, r.body.position.new_line]).toEqual(['DiffNote', 2]);
    // dev is not a member of this project: commenting is open to them, resolving is not.
    expect((await s.request('PUT', `${base}/discussions/${thread}`, { token: dev.token, json: { resolved: true } })).status).toBe(403);
    r = await s.request('PUT', `${base}/discussions/${thread}`, { json: { resolved: true } });
    expect(r.body.notes.map((n: any) => n.resolved)).toEqual([true, true]);
    r = await s.request('GET', `${base}/discussions`, { token: dev.token });
    expect(r.body).toHaveLength(5);
    expect(r.body.every((d: any) => d.individual_note === false)).toBe(true);
  });

  it('award emoji on notes: react, list, take back; they go with the note', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    const note = (await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'ship it' } })).body;
    const awards = `${base}/notes/${note.id}/award_emoji`;
    let r = await s.request('POST', awards, { token: reporter.token, json: { name: 'eyes' } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'eyes', awardable_id: note.id, awardable_type: 'Note', user: { username: 'nreporter' } });
    const eyes = r.body;
    r = await s.request('POST', awards, { token: reporter.token, json: { name: 'eyes' } });
    expect([r.status, r.body]).toEqual([400, { message: { name: ['has already been taken'] } }]);
    // Racing duplicates: one wins, the others are 400, none is a 500.
    const race = await Promise.all([1, 2, 3, 4].map(() => s.request('POST', awards, { token: dev.token, json: { name: 'rocket' } })));
    expect(race.map((x) => x.status).sort()).toEqual([201, 400, 400, 400]);
    r = await s.request('GET', awards, { token: guest.token });
    expect(r.body.map((a: any) => a.name)).toEqual(['eyes', 'rocket']);
    expect((await s.request('GET', `${awards}/${eyes.id}`, { token: guest.token })).body.name).toBe('eyes');
    expect((await s.request('GET', `${awards}/999999`, { token: guest.token })).body).toEqual({ message: '404 Award Emoji Not Found' });
    expect((await s.request('DELETE', `${awards}/${eyes.id}`, { token: dev.token })).status).toBe(401);
    // Reading awards needs no sign-in on a public project, as GitLab's award emoji API.
    expect((await s.request('GET', awards, { token: null })).body.map((a: any) => a.name)).toEqual(['eyes', 'rocket']);
    expect((await s.request('DELETE', `${awards}/${eyes.id}`, { token: reporter.token })).status).toBe(204);
    // The merge request's own awards are apart from its notes'.
    expect((await s.request('GET', `${base}/award_emoji`, { token: dev.token })).body).toEqual([]);
    // Internal notes' awards are as hidden as the notes.
    const internal = (await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'secret', internal: true } })).body;
    expect((await s.request('GET', `${base}/notes/${internal.id}/award_emoji`, { token: guest.token })).body).toEqual({ message: '404 Award Emoji Not Found' });
    expect((await s.request('POST', `${base}/notes/${internal.id}/award_emoji`, { token: outsider.token, json: { name: 'eyes' } })).status).toBe(404);
    // A locked discussion: outsiders award nothing, on the merge request or its notes.
    expect((await s.request('PUT', base, { json: { discussion_locked: true } })).status).toBe(200);
    expect((await s.request('POST', `${base}/award_emoji`, { token: outsider.token, json: { name: 'eyes' } })).body).toEqual({ message: '404 Award Emoji Not Found' });
    expect((await s.request('POST', `${base}/notes/${note.id}/award_emoji`, { token: outsider.token, json: { name: 'eyes' } })).status).toBe(404);
    expect((await s.request('POST', `${base}/award_emoji`, { token: guest.token, json: { name: 'eyes' } })).status).toBe(201);
    expect((await s.request('PUT', base, { json: { discussion_locked: false } })).status).toBe(200);
    expect((await s.request('DELETE', `${base}/notes/${note.id}`, { token: dev.token })).status).toBe(204);
    expect(await s.app.lw.db.selectFrom('award_emoji').select('id').where('awardable_type', '=', 'Note').where('awardable_id', '=', note.id).execute()).toEqual([]);
  });

  it('subscriptions: participants are subscribed, a choice wins; 304 when nothing changes', async () => {
    const mr = await newMr(pid, {}, dev.token);
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    const subscribed = async (token: string) => (await s.request('GET', base, { token })).body.subscribed;
    // The author takes part; a reader does not until they comment.
    expect(await subscribed(dev.token)).toBe(true);
    expect(await subscribed(reporter.token)).toBe(false);
    await s.request('POST', `${base}/notes`, { token: reporter.token, json: { body: 'following' } });
    expect(await subscribed(reporter.token)).toBe(true);
    // Another Developer subscribes (201 with the merge request), then again is 304; unsubscribing the same way.
    let r = await s.request('POST', `${base}/subscribe`, { token: dev2.token });
    expect([r.status, r.body.subscribed, r.body.iid]).toEqual([201, true, mr.iid]);
    r = await s.request('POST', `${base}/subscribe`, { token: dev2.token });
    expect([r.status, r.text]).toEqual([304, '']);
    // GitLab finds the merge request with update_merge_request: readers who may not update it are refused.
    expect((await s.request('POST', `${base}/subscribe`, { token: outsider.token })).status).toBe(403);
    expect((await s.request('POST', `${base}/subscribe`, { token: guest.token })).status).toBe(403);
    r = await s.request('POST', `${base}/unsubscribe`, { token: dev.token });
    expect([r.status, r.body.subscribed]).toEqual([201, false]);
    expect(await subscribed(dev.token)).toBe(false);
    expect((await s.request('POST', `${base}/unsubscribe`, { token: dev.token })).status).toBe(304);
    expect((await s.request('POST', `${base}/subscribe`, { token: null })).status).toBe(401);
    expect((await s.request('GET', base, { token: null })).body.subscribed).toBe(false);
  });

  it('notes go with their merge request', async () => {
    const mr = await newMr();
    const base = `/projects/${pid}/merge_requests/${mr.iid}`;
    await s.request('POST', `${base}/notes`, { token: dev.token, json: { body: 'bye' } });
    expect((await s.request('DELETE', base)).status).toBe(204);
    const left = await s.app.lw.db.selectFrom('notes').select('id').where('noteable_id', '=', mr.id).execute();
    expect(left).toEqual([]);
    // A note written after the merge request was read but deleted is refused, not left behind.
    const { createNote } = await import('../../src/services/merge-requests/notes.js');
    await expect(createNote(s.app.lw, { projectId: pid, noteable: { type: 'MergeRequest', id: mr.id }, authorId: dev.id, body: 'late', type: null, internal: false })).rejects.toMatchObject({ status: 404 });
    expect(await s.app.lw.db.selectFrom('notes').select('id').where('noteable_id', '=', mr.id).execute()).toEqual([]);
  });
});

// The real @gitbeaker/rest client driving the issues API as an integration would: Issues
// create/all/show/edit/remove with filters and offset and keyset walking in three scopes, notes and
// threads, award emoji, time tracking, subscriptions, participants, statistics, milestone issues,
// and a merge request whose "Closes #n" closes the issue when merged. The tests run in order and
// share the project they build.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

type Api = InstanceType<typeof Gitlab>;
// gitbeaker's schemas are partial; read the fields a user reads.
type Issue = {
  id: number;
  iid: number;
  title: string;
  state: string;
  labels: string[];
  description: string | null;
  assignees: Array<{ username: string }>;
  milestone: { title: string } | null;
  author: { username: string };
  closed_by: { username: string } | null;
  task_completion_status: { count: number; completed_count: number };
  upvotes: number;
  user_notes_count: number;
  subscribed?: boolean;
  web_url: string;
};

let s: TestServer;
let api: Api; // root, the project's owner
let dev: Api; // a developer of the project
let devId: number;
let groupId: number;
let projectId: number;
let milestoneId: number;
const iid: Record<string, number> = {};

const asIssue = (x: unknown) => x as Issue;
const asIssues = (x: unknown) => x as Issue[];
const titles = (x: unknown) => asIssues(x).map((i) => i.title);

beforeAll(async () => {
  s = await startServer();
  api = new Gitlab({ host: s.url, token: s.rootToken });
  const d = await s.createUser('gbdev');
  devId = d.id;
  dev = new Gitlab({ host: s.url, token: d.token });
  const group = (await api.Groups.create('GB Issues', 'gb-issues')) as unknown as { id: number };
  groupId = group.id;
  const project = (await api.Projects.create({ name: 'gb-tracker', namespaceId: groupId, initializeWithReadme: true } as never)) as unknown as { id: number };
  projectId = project.id;
  await api.ProjectMembers.add(projectId, 30, { userId: devId } as never);
  const ms = (await api.ProjectMilestones.create(projectId, 'Sprint 1')) as unknown as { id: number };
  milestoneId = ms.id;
});
afterAll(async () => {
  await s?.close();
});

describe('@gitbeaker/rest issues', () => {
  it('Issues.create with labels, assignees, a milestone and a checklist', async () => {
    const bug = asIssue(
      await api.Issues.create(projectId, 'Login fails', {
        description: '- [x] reproduce\n- [ ] fix\n- [ ] test',
        labels: 'bug,backend',
        assigneeIds: [devId],
        milestoneId,
      }),
    );
    expect(bug.iid).toBe(1);
    expect(bug.state).toBe('opened');
    expect([...bug.labels].sort()).toEqual(['backend', 'bug']);
    expect(bug.assignees.map((a) => a.username)).toEqual(['gbdev']);
    expect(bug.milestone?.title).toBe('Sprint 1');
    expect(bug.author.username).toBe('root');
    expect(bug.task_completion_status).toEqual({ count: 3, completed_count: 1 });
    expect(bug.web_url).toBe(`${s.url}/gb-issues/gb-tracker/-/issues/1`);
    iid.bug = bug.iid;
    iid.ui = asIssue(await api.Issues.create(projectId, 'Polish the UI', { labels: 'frontend' })).iid;
    iid.dev = asIssue(await dev.Issues.create(projectId, 'Flaky test', { labels: 'ci' })).iid;
    for (let i = 0; i < 4; i++) await api.Issues.create(projectId, `Task ${i}`);
    expect([iid.bug, iid.ui, iid.dev]).toEqual([1, 2, 3]);
  });

  it('Issues.all filters in project, group and global scope', async () => {
    expect(await api.Issues.all({ projectId, perPage: 2 })).toHaveLength(7);
    expect(titles(await api.Issues.all({ projectId, labels: 'bug' }))).toEqual(['Login fails']);
    expect(titles(await api.Issues.all({ projectId, search: 'flaky' }))).toEqual(['Flaky test']);
    expect(titles(await api.Issues.all({ projectId, milestone: 'Sprint 1' }))).toEqual(['Login fails']);
    expect(titles(await api.Issues.all({ projectId, assigneeId: devId }))).toEqual(['Login fails']);
    expect(titles(await api.Issues.all({ projectId, authorId: devId }))).toEqual(['Flaky test']);
    expect(asIssues(await api.Issues.all({ projectId, iids: [1, 3] })).map((i) => i.iid).sort()).toEqual([1, 3]);
    expect(asIssues(await api.Issues.all({ projectId, orderBy: 'created_at', sort: 'asc' })).map((i) => i.iid)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(await api.Issues.all({ groupId })).toHaveLength(7);
    expect(titles(await api.Issues.all({ groupId, labels: 'frontend' }))).toEqual(['Polish the UI']);
    expect(await api.Issues.all({ scope: 'all' })).toHaveLength(7);
    expect(titles(await dev.Issues.all())).toEqual(['Flaky test']); // default scope created_by_me
    expect(titles(await dev.Issues.all({ scope: 'assigned_to_me' }))).toEqual(['Login fails']);
  });

  it('Issues.all with negated and None/Any filters', async () => {
    expect(await api.Issues.all({ projectId, not: { labels: 'bug' } })).toHaveLength(6);
    expect(titles(await api.Issues.all({ projectId, labels: 'None', orderBy: 'created_at', sort: 'asc' }))).toEqual(['Task 0', 'Task 1', 'Task 2', 'Task 3']);
    expect(await api.Issues.all({ projectId, labels: 'Any' })).toHaveLength(3);
    expect(titles(await api.Issues.all({ projectId, assigneeId: 'Any' } as never))).toEqual(['Login fails']);
    expect(await api.Issues.all({ projectId, assigneeId: 'None' } as never)).toHaveLength(6);
    expect(await api.Issues.all({ projectId, milestone: 'None' })).toHaveLength(6);
    expect(titles(await api.Issues.all({ projectId, milestone: 'Any' }))).toEqual(['Login fails']);
  });

  it('Issues.all with showExpanded gives offset pagination info', async () => {
    const res = await api.Issues.all({ projectId, perPage: 3, page: 2, showExpanded: true, pagination: 'offset' });
    expect(res.data).toHaveLength(3);
    expect(res.paginationInfo).toEqual({ total: 7, next: 3, current: 2, previous: 1, perPage: 3, totalPages: 3 });
  });

  it('Issues.all with keyset pagination walks every issue through the next links', async () => {
    const asc = await api.Issues.all({ projectId, pagination: 'keyset', orderBy: 'created_at', sort: 'asc', perPage: 2 } as never);
    expect(asIssues(asc).map((i) => i.iid)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const desc = await api.Issues.all({ projectId, pagination: 'keyset', orderBy: 'created_at', sort: 'desc', perPage: 3 } as never);
    expect(asIssues(desc).map((i) => i.iid)).toEqual([7, 6, 5, 4, 3, 2, 1]);
  });

  it('Issues.show by iid and by global id', async () => {
    const byIid = asIssue(await api.Issues.show(iid.bug, { projectId }));
    expect(byIid.title).toBe('Login fails');
    const byId = asIssue(await api.Issues.show(byIid.id));
    expect(byId.iid).toBe(iid.bug);
  });

  it('Issues.edit changes title and labels, closes and reopens', async () => {
    let bug = asIssue(await api.Issues.edit(projectId, iid.bug, { title: 'Login fails on Safari', addLabels: 'browser', removeLabels: 'backend' }));
    expect(bug.title).toBe('Login fails on Safari');
    expect([...bug.labels].sort()).toEqual(['browser', 'bug']);
    bug = asIssue(await dev.Issues.edit(projectId, iid.bug, { stateEvent: 'close' }));
    expect(bug.state).toBe('closed');
    expect(bug.closed_by?.username).toBe('gbdev');
    expect(titles(await api.Issues.all({ projectId, state: 'closed' }))).toEqual(['Login fails on Safari']);
    bug = asIssue(await api.Issues.edit(projectId, iid.bug, { stateEvent: 'reopen' }));
    expect(bug.state).toBe('opened');
    expect(bug.closed_by).toBeNull();
    expect(await api.Issues.all({ projectId, state: 'opened' })).toHaveLength(7);
  });

  it('IssueNotes.create/all and IssueDiscussions', async () => {
    await api.IssueNotes.create(projectId, iid.bug, 'Seen on Safari 17');
    await dev.IssueNotes.create(projectId, iid.bug, 'Working on it');
    const notes = (await api.IssueNotes.all(projectId, iid.bug, { sort: 'asc' })) as unknown as Array<{ body: string; system: boolean; author: { username: string } }>;
    expect(notes.filter((n) => !n.system).map((n) => [n.body, n.author.username])).toEqual([
      ['Seen on Safari 17', 'root'],
      ['Working on it', 'gbdev'],
    ]);
    const thread = (await api.IssueDiscussions.create(projectId, iid.bug, 'Which version?')) as unknown as { id: string };
    await dev.IssueDiscussions.addNote(projectId, iid.bug, thread.id, '17.2');
    const shown = (await api.IssueDiscussions.show(projectId, iid.bug, thread.id)) as unknown as { notes: Array<{ body: string }> };
    expect(shown.notes.map((n) => n.body)).toEqual(['Which version?', '17.2']);
    expect(asIssue(await api.Issues.show(iid.bug, { projectId })).user_notes_count).toBe(4);
  });

  it('IssueAwardEmojis.award/all/remove and upvotes', async () => {
    await api.IssueAwardEmojis.award(projectId, iid.bug, 'thumbsup');
    await dev.IssueAwardEmojis.award(projectId, iid.bug, 'thumbsup');
    const heart = (await dev.IssueAwardEmojis.award(projectId, iid.bug, 'heart')) as unknown as { id: number };
    const all = (await api.IssueAwardEmojis.all(projectId, iid.bug)) as unknown as Array<{ name: string; user: { username: string } }>;
    expect(all.map((a) => `${a.name}:${a.user.username}`).sort()).toEqual(['heart:gbdev', 'thumbsup:gbdev', 'thumbsup:root']);
    await dev.IssueAwardEmojis.remove(projectId, iid.bug, heart.id);
    expect(await api.IssueAwardEmojis.all(projectId, iid.bug)).toHaveLength(2);
    expect(asIssue(await api.Issues.show(iid.bug, { projectId })).upvotes).toBe(2);
  });

  it('time tracking: addTimeEstimate, addSpentTime, showTimeStats, reset', async () => {
    await api.Issues.addTimeEstimate(projectId, iid.bug, '1d');
    await api.Issues.addSpentTime(projectId, iid.bug, '2h');
    await dev.Issues.addSpentTime(projectId, iid.bug, '45m');
    const ts = (await api.Issues.showTimeStats(projectId, iid.bug)) as unknown as Record<string, unknown>;
    expect(ts).toEqual({ time_estimate: 28800, total_time_spent: 9900, human_time_estimate: '1d', human_total_time_spent: '2h 45m' });
    await api.Issues.resetSpentTime(projectId, iid.bug);
    const reset = (await api.Issues.resetTimeEstimate(projectId, iid.bug)) as unknown as Record<string, unknown>;
    expect([reset.time_estimate, reset.total_time_spent]).toEqual([0, 0]);
  });

  it('subscribe/unsubscribe and allParticipants', async () => {
    expect(asIssue(await dev.Issues.show(iid.ui, { projectId })).subscribed).toBe(false);
    expect(asIssue(await dev.Issues.subscribe(projectId, iid.ui)).subscribed).toBe(true);
    expect(asIssue(await dev.Issues.show(iid.ui, { projectId })).subscribed).toBe(true);
    expect(asIssue(await dev.Issues.unsubscribe(projectId, iid.ui)).subscribed).toBe(false);
    const people = (await api.Issues.allParticipants(projectId, iid.bug)) as unknown as Array<{ username: string }>;
    expect(people.map((u) => u.username).sort()).toEqual(['gbdev', 'root']);
  });

  it('IssuesStatistics.all in three scopes, with filters', async () => {
    const counts = async (opts: object) => ((await api.IssuesStatistics.all(opts as never)) as unknown as { statistics: { counts: Record<string, number> } }).statistics.counts;
    expect(await counts({ projectId })).toEqual({ all: 7, closed: 0, opened: 7 });
    expect(await counts({ groupId })).toEqual({ all: 7, closed: 0, opened: 7 });
    expect(await counts({ scope: 'all' })).toEqual({ all: 7, closed: 0, opened: 7 });
    expect(await counts({ projectId, labels: 'bug' })).toEqual({ all: 1, closed: 0, opened: 1 });
    expect(await counts({ projectId, search: 'task' })).toEqual({ all: 4, closed: 0, opened: 4 });
  });

  it('ProjectMilestones.allAssignedIssues', async () => {
    expect(titles(await api.ProjectMilestones.allAssignedIssues(projectId, milestoneId))).toEqual(['Login fails on Safari']);
  });

  it('a merge request saying "Closes #1": allIssuesClosed, allClosedByMergeRequestst, merged closes the issue', async () => {
    await dev.Commits.create(projectId, 'fix-login', 'Fix login on Safari', [{ action: 'create', filePath: 'login.txt', content: 'fixed\n' }], { startBranch: 'main' });
    const mr = (await dev.MergeRequests.create(projectId, 'fix-login', 'main', 'Fix login', { description: `Closes #${iid.bug}` })) as unknown as { iid: number };
    expect(asIssues(await api.MergeRequests.allIssuesClosed(projectId, mr.iid)).map((i) => i.iid)).toEqual([iid.bug]);
    const closers = (await api.Issues.allClosedByMergeRequestst(projectId, iid.bug)) as unknown as Array<{ iid: number }>;
    expect(closers.map((m) => m.iid)).toEqual([mr.iid]);
    const merged = (await api.MergeRequests.merge(projectId, mr.iid)) as unknown as { state: string };
    expect(merged.state).toBe('merged');
    const bug = asIssue(await api.Issues.show(iid.bug, { projectId }));
    expect(bug.state).toBe('closed');
    expect(bug.closed_by?.username).toBe('root');
    const stats = (await api.IssuesStatistics.all({ projectId })) as unknown as { statistics: { counts: Record<string, number> } };
    expect(stats.statistics.counts).toEqual({ all: 7, closed: 1, opened: 6 });
  });

  it('editing a merge request description updates what it closes; a commit on main saying "Closes #n" closes it', async () => {
    await dev.Commits.create(projectId, 'polish', 'Polish', [{ action: 'create', filePath: 'ui.txt', content: 'shiny\n' }], { startBranch: 'main' });
    const mr = (await dev.MergeRequests.create(projectId, 'polish', 'main', 'Polish the UI', { description: 'WIP' })) as unknown as { iid: number };
    expect(await api.MergeRequests.allIssuesClosed(projectId, mr.iid)).toEqual([]);
    await dev.MergeRequests.edit(projectId, mr.iid, { description: `Fixes #${iid.ui}` });
    expect(asIssues(await api.MergeRequests.allIssuesClosed(projectId, mr.iid)).map((i) => i.iid)).toEqual([iid.ui]);
    expect(asIssue(await api.Issues.show(iid.ui, { projectId })).state).toBe('opened');

    const task0 = asIssues(await api.Issues.all({ projectId, search: 'Task 0' }))[0];
    await api.Commits.create(projectId, 'main', `Tidy up\n\nCloses #${task0.iid}`, [{ action: 'create', filePath: 'tidy.txt', content: 'tidy\n' }]);
    expect(asIssue(await api.Issues.show(task0.iid, { projectId })).state).toBe('closed');
    await api.Issues.edit(projectId, task0.iid, { stateEvent: 'reopen' });
  });

  it('Issues.edit unassigns and removes the milestone', async () => {
    let ui = asIssue(await api.Issues.edit(projectId, iid.ui, { assigneeIds: [devId], milestoneId }));
    expect([ui.assignees.map((a) => a.username), ui.milestone?.title]).toEqual([['gbdev'], 'Sprint 1']);
    ui = asIssue(await api.Issues.edit(projectId, iid.ui, { assigneeIds: [], milestoneId: 0 }));
    expect([ui.assignees, ui.milestone]).toEqual([[], null]);
  });

  it('confidential issues stay hidden from outsiders of a public project', async () => {
    const pub = (await api.Projects.create({ name: 'gb-public', visibility: 'public' } as never)) as unknown as { id: number };
    await api.Issues.create(pub.id, 'Public roadmap');
    const secret = asIssue(await api.Issues.create(pub.id, 'Security hole', { confidential: true }));
    const o = await s.createUser('gboutsider');
    const outsider = new Gitlab({ host: s.url, token: o.token });
    expect(titles(await outsider.Issues.all({ projectId: pub.id }))).toEqual(['Public roadmap']);
    await expect(outsider.Issues.show(secret.iid, { projectId: pub.id })).rejects.toMatchObject({ cause: { description: '404 Not found' } });
    const stats = (await outsider.IssuesStatistics.all({ projectId: pub.id })) as unknown as { statistics: { counts: Record<string, number> } };
    expect(stats.statistics.counts).toEqual({ all: 1, closed: 0, opened: 1 });
    await expect(outsider.IssueNotes.create(pub.id, secret.iid, 'peek')).rejects.toMatchObject({ cause: { description: '404 Not found' } });
    expect(titles(await api.Issues.all({ projectId: pub.id, confidential: true }))).toEqual(['Security hole']);
  });

  it('Issues.remove: a developer may not, the owner may', async () => {
    await expect(dev.Issues.remove(projectId, iid.dev)).rejects.toMatchObject({ cause: { description: '403 Forbidden' } });
    await api.Issues.remove(projectId, iid.dev);
    await expect(api.Issues.show(iid.dev, { projectId })).rejects.toMatchObject({ cause: { description: '404 Not found' } });
    expect(await api.Issues.all({ projectId })).toHaveLength(6);
  });
});

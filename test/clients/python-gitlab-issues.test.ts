// python-gitlab (Debian's python3-gitlab, installed by .ci/run) driving an issue tracker end to
// end: issues with labels, assignees, a milestone and a checklist; filtered, offset and keyset lists
// in project, group and global scope; edit, close, reopen; notes and threads; award emoji; time
// tracking; subscriptions; participants; statistics; "Closes #n" in a merge request that closes the
// issue when merged; deletion. The flow is test/clients/python_gitlab_issues_flow.py.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';

const run = runPython;

let s: TestServer;
beforeAll(async () => {
  s = await startServer();
});
afterAll(async () => {
  await s?.close();
});

describe('python-gitlab issues', () => {
  it('runs an issue-tracking session unchanged', async () => {
    if (!(await hasPythonGitlab())) throw new Error('python3-gitlab is not installed: apt-get install -y python3-gitlab');
    const { stdout } = await run(PYTHON, [join(import.meta.dirname, 'python_gitlab_issues_flow.py'), s.url, s.rootToken], { timeout: 120_000 });
    const out = JSON.parse(stdout.trim().split('\n').pop()!);

    // Creating
    expect(out.bug_created).toEqual({
      iid: 1,
      title: 'Crash on start',
      state: 'opened',
      labels: ['bug', 'critical'],
      assignees: ['issalice'],
      assignee: 'issalice',
      milestone: 'v1.0',
      author: 'root',
      tasks: { count: 3, completed_count: 1 },
      web_url: `${s.url}/iss-group/tracker/-/issues/1`,
      references: 'iss-group/tracker#1',
    });
    expect(out.iids).toEqual([1, 2, 3]);
    expect(out.labels_created).toEqual(['bug', 'chore', 'critical', 'docs', 'feature']);

    // Lists and filters
    expect(out.open_titles).toEqual(['Add dark mode', 'Chore 0', 'Chore 1', 'Chore 2', 'Chore 3', 'Chore 4', 'Crash on start', 'Document the CLI']);
    expect(out.by_label).toEqual(['Crash on start']);
    expect(out.by_two_labels).toEqual(['Crash on start']);
    expect(out.by_search).toEqual(['Add dark mode']);
    expect(out.by_milestone).toEqual(['Crash on start']);
    expect(out.by_assignee).toEqual(['Crash on start']);
    expect(out.by_author).toEqual(['Document the CLI']);
    expect(out.iterator_count).toBe(8);
    expect(out.get_all_count).toBe(8);
    expect(out.default_order).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(out.iids_filter).toEqual([1, 3]);
    expect(out.open_issues_count).toBe(8);

    // Keyset pagination
    expect(out.keyset_asc).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(out.keyset_desc).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(out.keyset_get_all).toBe(8);

    // Edit, close, reopen
    expect(out.after_edit).toEqual(['Crash on startup', ['bug', 'critical', 'regression']]);
    expect(out.after_close).toEqual(['closed', 'root', true]);
    expect(out.closed_list).toEqual(['Crash on startup']);
    expect(out.after_reopen).toEqual(['opened', null, null]);
    expect(out.closed_after_reopen).toEqual([]);

    // Notes and threads
    expect(out.notes).toEqual(['I can reproduce this', 'Fix coming']);
    expect(out.notes_authors).toEqual(['root', 'issalice']);
    expect(out.thread).toEqual(['Linux only?', 'Also on macOS']);
    expect(out.thread_individual).toBe(false);
    expect(out.discussions).toBe(3);
    expect(out.user_notes_count).toBe(4);

    // Award emoji
    expect(out.awards).toEqual([['tada', 'issalice'], ['thumbsup', 'issalice'], ['thumbsup', 'root']]);
    expect(out.awards_after_delete).toBe(2);
    expect(out.upvotes).toBe(2);
    expect(out.my_reaction).toEqual(['Crash on startup']);

    // Time tracking
    expect(out.estimate).toEqual({ time_estimate: 12600, total_time_spent: 0, human_time_estimate: '3h 30m', human_total_time_spent: null });
    expect(out.spent).toEqual({ time_estimate: 12600, total_time_spent: 5400, human_time_estimate: '3h 30m', human_total_time_spent: '1h 30m' });
    expect(out.time_stats).toEqual([12600, 5400, '3h 30m', '1h 30m']);
    expect(out.time_stats_reset).toEqual([0, 0]);

    // Subscriptions and participants
    expect(out.subscribed_before).toBe(false);
    expect(out.subscribed_after).toEqual([true, true]);
    expect(out.subscribe_twice).toBe(304);
    expect(out.unsubscribed).toEqual([false, false]);
    expect(out.participants).toEqual(['issalice', 'root']);

    // Statistics
    expect(out.project_stats).toEqual({ all: 8, closed: 0, opened: 8 });
    expect(out.group_stats).toEqual({ all: 8, closed: 0, opened: 8 });
    expect(out.global_stats).toEqual({ all: 7, closed: 0, opened: 7 }); // scope created_by_me: root made 7
    expect(out.project_stats_bug).toEqual({ all: 1, closed: 0, opened: 1 });

    // Global and group lists
    expect(out.global_mine).toBe(7);
    expect(out.global_all).toBe(8);
    expect(out.alice_created).toEqual(['Document the CLI']);
    expect(out.alice_assigned).toEqual(['Crash on startup']);
    expect(out.group_issues).toBe(8);
    expect(out.group_by_label).toEqual(['Add dark mode']);
    expect(out.global_get).toBe('Crash on startup');
    expect(out.milestone_issues).toEqual(['Crash on startup']);

    // "Closes #1" in a merge request
    expect(out.closes_issues).toEqual([1]);
    expect(out.closed_by).toEqual([1]);
    expect(out.related_mrs).toEqual([1]);
    expect(out.bug_mr_count).toBe(1);
    expect(out.mr_state).toBe('merged');
    expect(out.bug_after_merge).toEqual(['closed', 'root']);
    expect(out.feat_after_merge).toBe('opened'); // "relates to #2" closes nothing
    expect(out.project_stats_after_merge).toEqual({ all: 8, closed: 1, opened: 7 });

    // Reassigning
    expect(out.feat_assigned).toEqual([['issalice'], 'v1.0']);
    expect(out.feat_cleared).toEqual([[], null, null]);

    // Deletion and errors
    expect(out.developer_delete).toEqual([403, '403 Forbidden']);
    expect(out.after_delete).toEqual([404, '404 Not found']);
    expect(out.count_after_delete).toBe(7);
    expect(out.search_issues).toEqual(['Add dark mode']);
    expect(out.search_project_issues.length).toBe(1);
    expect(out.search_projects).toEqual(['tracker']);
    expect(out.search_group_mrs).toBe(0);
    expect(out.search_blobs).toEqual(['README.md']);
    expect(out.global_blobs).toBe(400);
    expect(out.empty_title).toBe(400);
    expect(out.missing_issue).toEqual([404, '404 Not found']);
  }, 180_000);
});

// Issues (GitLab's issues, issue_assignees and label links, merge_requests_closing_issues): the
// project's issue tracker. The counts a list shows (notes, votes, open issues of a project) are
// kept on the rows by the writes, so lists never count per item.
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const issues: LabwrightMigration = {
  name: '0022-issues',
  async up(ctx) {
    await createTable(ctx, 'issues')
      .addColumn('iid', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('author_id', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      // opened | closed
      .addColumn('state', 'text', (c) => c.notNull())
      // issue | incident | test_case | task (GitLab's work item types an issue may have)
      .addColumn('issue_type', 'text', (c) => c.notNull().defaultTo('issue'))
      .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('discussion_locked', 'integer')
      // YYYY-MM-DD
      .addColumn('due_date', 'text')
      .addColumn('milestone_id', 'integer')
      .addColumn('closed_at', 'text')
      .addColumn('closed_by_id', 'integer')
      .addColumn('updated_by_id', 'integer')
      // The issue this one was moved to (POST …/move).
      .addColumn('moved_to_id', 'integer')
      .addColumn('time_estimate', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('total_time_spent', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('upvotes', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('downvotes', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('user_notes_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('unresolved_notes_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'issues_project_iid', 'issues', 'project_id, iid');
    await index(ctx, 'issues_project_created', 'issues', 'project_id, created_at, id');
    await index(ctx, 'issues_project_updated', 'issues', 'project_id, updated_at, id');
    await index(ctx, 'issues_project_state', 'issues', 'project_id, state, created_at, id');
    await index(ctx, 'issues_author', 'issues', 'author_id');
    await index(ctx, 'issues_milestone', 'issues', 'milestone_id');
    await createTable(ctx, 'issue_assignees')
      .addColumn('issue_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .execute();
    await index(ctx, 'issue_assignees_issue', 'issue_assignees', 'issue_id');
    await index(ctx, 'issue_assignees_user', 'issue_assignees', 'user_id, issue_id');
    await createTable(ctx, 'issue_labels')
      .addColumn('issue_id', 'integer', (c) => c.notNull())
      .addColumn('label_id', 'integer', (c) => c.notNull())
      .execute();
    await index(ctx, 'issue_labels_issue', 'issue_labels', 'issue_id');
    await index(ctx, 'issue_labels_label', 'issue_labels', 'label_id, issue_id');
    // Merge requests whose description closes an issue when they are merged (GitLab's
    // merge_requests_closing_issues), kept by every write of a merge request's description.
    await createTable(ctx, 'merge_requests_closing_issues')
      .addColumn('merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('issue_id', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'mr_closing_issues_pair', 'merge_requests_closing_issues', 'merge_request_id, issue_id');
    await index(ctx, 'mr_closing_issues_issue', 'merge_requests_closing_issues', 'issue_id');
    // Related issues (GitLab's issue_links): `relates_to` (the free tier's only type).
    await createTable(ctx, 'issue_links')
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('target_id', 'integer', (c) => c.notNull())
      .addColumn('link_type', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'issue_links_pair', 'issue_links', 'source_id, target_id');
    await index(ctx, 'issue_links_target', 'issue_links', 'target_id');
    await ctx.db.schema.alterTable('projects').addColumn('issue_iid_counter', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await ctx.db.schema.alterTable('projects').addColumn('open_issues_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    // The confidential ones among them (shown only to callers who may read confidential issues).
    await ctx.db.schema.alterTable('projects').addColumn('open_confidential_issues_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    for (const t of ['issues', 'issue_assignees', 'issue_labels', 'merge_requests_closing_issues', 'issue_links']) await notifyChanges(ctx, t);
  },
};

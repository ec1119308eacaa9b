// Merge requests and what their filters need: assignees, reviewers, labels, milestones, approvals,
// award emoji, blocks, pipelines from commit statuses, deployments and spam logs.
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const mergeRequests: LabwrightMigration = {
  name: '0005-merge-requests',
  async up(ctx) {
    await createTable(ctx, 'merge_requests')
      .addColumn('iid', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('source_project_id', 'integer', (c) => c.notNull())
      .addColumn('author_id', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('opened'))
      .addColumn('draft', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('source_branch', 'text', (c) => c.notNull())
      .addColumn('target_branch', 'text', (c) => c.notNull())
      .addColumn('merge_status', 'text', (c) => c.notNull().defaultTo('unchecked'))
      .addColumn('checked_source_sha', 'text')
      .addColumn('checked_target_sha', 'text')
      .addColumn('head_sha', 'text')
      .addColumn('start_sha', 'text')
      .addColumn('base_sha', 'text')
      .addColumn('commits_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('behind_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('ff_possible', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('source_missing', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('changes_count', 'text')
      .addColumn('merge_commit_sha', 'text')
      .addColumn('squash_commit_sha', 'text')
      .addColumn('in_progress_merge_commit_sha', 'text')
      .addColumn('merge_lock', 'text')
      .addColumn('merge_lock_at', 'text')
      .addColumn('squash', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('force_remove_source_branch', 'integer')
      .addColumn('should_remove_source_branch', 'integer')
      .addColumn('allow_collaboration', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('discussion_locked', 'integer')
      .addColumn('milestone_id', 'integer')
      .addColumn('merge_user_id', 'integer')
      .addColumn('merged_by_id', 'integer')
      .addColumn('merged_at', 'text')
      .addColumn('closed_by_id', 'integer')
      .addColumn('closed_at', 'text')
      .addColumn('merge_after', 'text')
      .addColumn('prepared_at', 'text')
      .addColumn('merge_when_pipeline_succeeds', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('merge_params', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('merge_error', 'text')
      .addColumn('approvals_before_merge', 'integer')
      .addColumn('time_estimate', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('total_time_spent', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('upvotes', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('downvotes', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'merge_requests_project_iid', 'merge_requests', 'project_id, iid');
    await index(ctx, 'merge_requests_project_created', 'merge_requests', 'project_id, created_at, id');
    await index(ctx, 'merge_requests_project_updated', 'merge_requests', 'project_id, updated_at, id');
    await index(ctx, 'merge_requests_project_state', 'merge_requests', 'project_id, state, created_at, id');
    await index(ctx, 'merge_requests_source', 'merge_requests', 'source_project_id, source_branch, state');
    await index(ctx, 'merge_requests_target', 'merge_requests', 'project_id, target_branch, state');
    await index(ctx, 'merge_requests_author', 'merge_requests', 'author_id, created_at, id');
    await index(ctx, 'merge_requests_milestone', 'merge_requests', 'milestone_id');
    await index(ctx, 'merge_requests_merged_at', 'merge_requests', 'merged_at, id');
    await index(ctx, 'merge_requests_created', 'merge_requests', 'created_at, id');
    await index(ctx, 'merge_requests_merge_user', 'merge_requests', 'merge_user_id');
    await index(ctx, 'merge_requests_in_progress', 'merge_requests', 'in_progress_merge_commit_sha');

    await createTable(ctx, 'merge_request_assignees')
      .addColumn('merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await uniqueIndex(ctx, 'mr_assignees_unique', 'merge_request_assignees', 'merge_request_id, user_id');
    await index(ctx, 'mr_assignees_user', 'merge_request_assignees', 'user_id');

    await createTable(ctx, 'merge_request_reviewers')
      .addColumn('merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('unreviewed'))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'mr_reviewers_unique', 'merge_request_reviewers', 'merge_request_id, user_id');
    await index(ctx, 'mr_reviewers_user', 'merge_request_reviewers', 'user_id');

    await createTable(ctx, 'labels')
      .addColumn('project_id', 'integer')
      .addColumn('group_id', 'integer')
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('title_lower', 'text', (c) => c.notNull())
      .addColumn('color', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('priority', 'integer')
      .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'labels_project_title', 'labels', 'project_id, title_lower');
    await index(ctx, 'labels_group_title', 'labels', 'group_id, title_lower');

    await createTable(ctx, 'merge_request_labels')
      .addColumn('merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('label_id', 'integer', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'mr_labels_unique', 'merge_request_labels', 'merge_request_id, label_id');
    await index(ctx, 'mr_labels_label', 'merge_request_labels', 'label_id, merge_request_id');

    await createTable(ctx, 'milestones')
      .addColumn('iid', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer')
      .addColumn('group_id', 'integer')
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
      .addColumn('due_date', 'text')
      .addColumn('start_date', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'milestones_project', 'milestones', 'project_id, title');
    await index(ctx, 'milestones_group', 'milestones', 'group_id, title');

    await createTable(ctx, 'merge_request_approvals')
      .addColumn('merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'mr_approvals_unique', 'merge_request_approvals', 'merge_request_id, user_id');
    await index(ctx, 'mr_approvals_user', 'merge_request_approvals', 'user_id');

    await createTable(ctx, 'award_emoji')
      .addColumn('awardable_type', 'text', (c) => c.notNull())
      .addColumn('awardable_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'award_emoji_unique', 'award_emoji', 'awardable_type, awardable_id, user_id, name');
    await index(ctx, 'award_emoji_user', 'award_emoji', 'user_id, name');

    await createTable(ctx, 'merge_request_blocks')
      .addColumn('blocking_merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('blocked_merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'mr_blocks_unique', 'merge_request_blocks', 'blocking_merge_request_id, blocked_merge_request_id');
    await index(ctx, 'mr_blocks_blocked', 'merge_request_blocks', 'blocked_merge_request_id');

    await createTable(ctx, 'ci_pipelines')
      .addColumn('iid', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('sha', 'text', (c) => c.notNull())
      .addColumn('before_sha', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('tag', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('source', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer')
      .addColumn('merge_request_id', 'integer')
      .addColumn('coverage', 'text')
      .addColumn('started_at', 'text')
      .addColumn('finished_at', 'text')
      .addColumn('committed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'ci_pipelines_project_iid', 'ci_pipelines', 'project_id, iid');
    await index(ctx, 'ci_pipelines_sha', 'ci_pipelines', 'project_id, sha, id');
    await index(ctx, 'ci_pipelines_mr', 'ci_pipelines', 'merge_request_id, id');

    await createTable(ctx, 'commit_statuses')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('pipeline_id', 'integer', (c) => c.notNull())
      .addColumn('sha', 'text', (c) => c.notNull())
      .addColumn('ref', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('stage', 'text', (c) => c.notNull().defaultTo('external'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('target_url', 'text')
      .addColumn('description', 'text')
      .addColumn('coverage', 'text')
      .addColumn('allow_failure', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('author_id', 'integer')
      .addColumn('started_at', 'text')
      .addColumn('finished_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'commit_statuses_pipeline', 'commit_statuses', 'pipeline_id, name');
    await index(ctx, 'commit_statuses_sha', 'commit_statuses', 'project_id, sha, id');

    await createTable(ctx, 'deployments')
      .addColumn('iid', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'integer', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('ref', 'text', (c) => c.notNull())
      .addColumn('sha', 'text', (c) => c.notNull())
      .addColumn('tag', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('user_id', 'integer')
      .addColumn('finished_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'deployments_project_iid', 'deployments', 'project_id, iid');
    await index(ctx, 'deployments_env', 'deployments', 'project_id, environment, id');

    await createTable(ctx, 'deployment_merge_requests')
      .addColumn('deployment_id', 'integer', (c) => c.notNull())
      .addColumn('merge_request_id', 'integer', (c) => c.notNull())
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('deployed_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'deployment_mrs_unique', 'deployment_merge_requests', 'deployment_id, merge_request_id');
    await index(ctx, 'deployment_mrs_mr', 'deployment_merge_requests', 'merge_request_id, environment');

    await createTable(ctx, 'spam_logs')
      .addColumn('user_id', 'integer')
      .addColumn('title', 'text')
      .addColumn('description', 'text')
      .addColumn('source_ip', 'text')
      .addColumn('user_agent', 'text')
      .addColumn('noteable_type', 'text', (c) => c.notNull())
      .addColumn('recaptcha_verified', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('submitted_as_ham', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'spam_logs_user', 'spam_logs', 'user_id, id');
  },
};

// Projects: one row per project; its full path lives in `routes`, its repository at <reposDir>/<id>.git.
import { createTable, index, type LabwrightMigration } from './helpers.js';

export const projects: LabwrightMigration = {
  name: '0002-projects',
  async up(ctx) {
    await createTable(ctx, 'projects')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('namespace_id', 'integer', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
      .addColumn('default_branch', 'text')
      .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('creator_id', 'integer')
      .addColumn('issues_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('repository_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('merge_requests_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('forking_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('wiki_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('builds_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('snippets_access_level', 'text', (c) => c.notNull().defaultTo('enabled'))
      .addColumn('pages_access_level', 'text', (c) => c.notNull().defaultTo('private'))
      .addColumn('squash_option', 'text', (c) => c.notNull().defaultTo('default_off'))
      .addColumn('merge_method', 'text', (c) => c.notNull().defaultTo('merge'))
      .addColumn('only_allow_merge_if_pipeline_succeeds', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('only_allow_merge_if_all_discussions_are_resolved', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('allow_merge_on_skipped_pipeline', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('remove_source_branch_after_merge', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('require_sha_for_merge', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('resolve_outdated_diff_discussions', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('printing_merge_request_link_enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('request_access_enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('lfs_enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('merge_commit_template', 'text')
      .addColumn('squash_commit_template', 'text')
      .addColumn('suggestion_commit_message', 'text')
      .addColumn('ci_config_path', 'text')
      .addColumn('topics', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('avatar_path', 'text')
      .addColumn('repository_size', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('mr_iid_counter', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('last_activity_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    // Listing: by namespace, by visibility, and every order_by key with the id tie-breaker.
    await index(ctx, 'projects_namespace', 'projects', 'namespace_id, id');
    await index(ctx, 'projects_visibility', 'projects', 'visibility, id');
    await index(ctx, 'projects_name', 'projects', 'name, id');
    await index(ctx, 'projects_path', 'projects', 'path, id');
    await index(ctx, 'projects_created_at', 'projects', 'created_at, id');
    await index(ctx, 'projects_updated_at', 'projects', 'updated_at, id');
    await index(ctx, 'projects_last_activity_at', 'projects', 'last_activity_at, id');
    await index(ctx, 'projects_creator', 'projects', 'creator_id');
  },
};

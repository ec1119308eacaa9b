// Protected branches and tags (GitLab's protected_branches, protected_tags and their access level
// tables, here one table for both kinds): a name or wildcard pattern per project, and the roles
// that may push, merge, unprotect (branches) or create (tags).
import { notifyChanges } from './0011-data-change-notices.js';
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const protectedRefs: LabwrightMigration = {
  name: '0016-protected-refs',
  async up(ctx) {
    await createTable(ctx, 'protected_refs')
      .addColumn('project_id', 'integer', (c) => c.notNull())
      // 'branch' or 'tag'
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('allow_force_push', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('code_owner_approval_required', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'protected_refs_name', 'protected_refs', 'project_id, kind, name');

    await createTable(ctx, 'protected_ref_access_levels')
      .addColumn('protected_ref_id', 'integer', (c) => c.notNull())
      // 'push', 'merge', 'unprotect' (branches) or 'create' (tags)
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('access_level', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'protected_ref_access_levels_unique', 'protected_ref_access_levels', 'protected_ref_id, action, access_level');
    await index(ctx, 'protected_ref_access_levels_ref', 'protected_ref_access_levels', 'protected_ref_id');

    for (const table of ['protected_refs', 'protected_ref_access_levels']) await notifyChanges(ctx, table);
  },
};

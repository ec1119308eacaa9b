// Indexes for per-request lookups by user (issue 7).
import type { LabwrightMigration } from './helpers.js';
import { index } from './helpers.js';

export const hotPathIndexes: LabwrightMigration = {
  name: '0008-hot-path-indexes',
  async up(ctx) {
    // An administrator's user entity asks whether the user has SCIM identities (any group).
    await index(ctx, 'scim_identities_user', 'scim_identities', 'user_id');
    // A user's personal namespace (kind 'user', owner_id): groups record their creator as owner_id
    // too, so the owner_id index alone walked every group an administrator had created.
    await index(ctx, 'namespaces_owner_kind', 'namespaces', 'owner_id, kind');
  },
};

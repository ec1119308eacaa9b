// Users, namespaces, routes, members, personal access tokens and the OAuth token tables.
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const foundation: LabwrightMigration = {
  name: '0001-foundation',
  async up(ctx) {
    await createTable(ctx, 'users')
      .addColumn('username', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('password_digest', 'text')
      .addColumn('state', 'text', (c) => c.notNull().defaultTo('active'))
      .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('user_type', 'text', (c) => c.notNull().defaultTo('human'))
      .addColumn('bio', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('location', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('public_email', 'text')
      .addColumn('website_url', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('organization', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('job_title', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('pronouns', 'text')
      .addColumn('avatar_path', 'text')
      .addColumn('can_create_group', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('projects_limit', 'integer', (c) => c.notNull().defaultTo(100000))
      .addColumn('external', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('private_profile', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failed_attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('locked_until', 'text')
      .addColumn('last_sign_in_at', 'text')
      .addColumn('current_sign_in_at', 'text')
      .addColumn('last_activity_on', 'text')
      .addColumn('confirmed_at', 'text')
      .addColumn('created_by_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'users_username_lower', 'users', 'lower(username)');
    await uniqueIndex(ctx, 'users_email_lower', 'users', 'lower(email)');
    await index(ctx, 'users_name', 'users', 'name, id');
    await index(ctx, 'users_created_at', 'users', 'created_at, id');
    await index(ctx, 'users_updated_at', 'users', 'updated_at, id');

    await createTable(ctx, 'namespaces')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('full_path', 'text', (c) => c.notNull())
      .addColumn('full_name', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('parent_id', 'integer')
      .addColumn('traversal', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('owner_id', 'integer')
      .addColumn('visibility', 'text', (c) => c.notNull().defaultTo('private'))
      .addColumn('description', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('avatar_path', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'namespaces_full_path_lower', 'namespaces', 'lower(full_path)');
    await index(ctx, 'namespaces_parent', 'namespaces', 'parent_id, name, id');
    await index(ctx, 'namespaces_traversal', 'namespaces', 'traversal');
    await index(ctx, 'namespaces_owner', 'namespaces', 'owner_id');
    await index(ctx, 'namespaces_kind_name', 'namespaces', 'kind, name, id');

    await createTable(ctx, 'routes')
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('path_lower', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'routes_path_lower', 'routes', 'path_lower');
    await uniqueIndex(ctx, 'routes_source', 'routes', 'source_type, source_id');

    await createTable(ctx, 'redirect_routes')
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('path', 'text', (c) => c.notNull())
      .addColumn('path_lower', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'redirect_routes_path_lower', 'redirect_routes', 'path_lower');
    await index(ctx, 'redirect_routes_source', 'redirect_routes', 'source_type, source_id');

    await createTable(ctx, 'members')
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('access_level', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('created_by_id', 'integer')
      .addColumn('member_role_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'members_source_user', 'members', 'source_type, source_id, user_id');
    await index(ctx, 'members_user', 'members', 'user_id, source_type, source_id');

    await createTable(ctx, 'personal_access_tokens')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('token_digest', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('revoked', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'text')
      .addColumn('last_used_at', 'text')
      .addColumn('last_used_ips', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('impersonation', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('previous_personal_access_token_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'pat_token_digest', 'personal_access_tokens', 'token_digest');
    await index(ctx, 'pat_user', 'personal_access_tokens', 'user_id, id');

    await createTable(ctx, 'oauth_applications')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('uid', 'text', (c) => c.notNull())
      .addColumn('secret_digest', 'text', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('confidential', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('trusted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('owner_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'oauth_applications_uid', 'oauth_applications', 'uid');
    await index(ctx, 'oauth_applications_owner', 'oauth_applications', 'owner_id');

    await createTable(ctx, 'oauth_access_grants')
      .addColumn('resource_owner_id', 'integer', (c) => c.notNull())
      .addColumn('application_id', 'integer', (c) => c.notNull())
      .addColumn('token_digest', 'text', (c) => c.notNull())
      .addColumn('expires_in', 'integer', (c) => c.notNull())
      .addColumn('redirect_uri', 'text', (c) => c.notNull())
      .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('code_challenge', 'text')
      .addColumn('code_challenge_method', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .execute();
    await uniqueIndex(ctx, 'oauth_access_grants_token', 'oauth_access_grants', 'token_digest');

    await createTable(ctx, 'oauth_access_tokens')
      .addColumn('resource_owner_id', 'integer', (c) => c.notNull())
      .addColumn('application_id', 'integer')
      .addColumn('token_digest', 'text', (c) => c.notNull())
      .addColumn('refresh_token_digest', 'text')
      .addColumn('expires_in', 'integer')
      .addColumn('scopes', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('grant_id', 'integer')
      .addColumn('grant_kind', 'text')
      .addColumn('family_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('revoked_at', 'text')
      .addColumn('last_used_at', 'text')
      .execute();
    await uniqueIndex(ctx, 'oauth_access_tokens_token', 'oauth_access_tokens', 'token_digest');
    await uniqueIndex(ctx, 'oauth_access_tokens_refresh', 'oauth_access_tokens', 'refresh_token_digest');
    await index(ctx, 'oauth_access_tokens_family', 'oauth_access_tokens', 'family_id');
    await index(ctx, 'oauth_access_tokens_grant', 'oauth_access_tokens', 'grant_kind, grant_id');
    await index(ctx, 'oauth_access_tokens_owner', 'oauth_access_tokens', 'resource_owner_id');
  },
};

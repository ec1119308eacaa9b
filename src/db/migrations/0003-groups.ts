// Groups: settings, sharing links, custom attributes, audit events, SSH keys, access-token bots,
// enterprise-user provisioning and identities.
import { createTable, index, uniqueIndex, type LabwrightMigration } from './helpers.js';

export const groups: LabwrightMigration = {
  name: '0003-groups',
  async up(ctx) {
    await createTable(ctx, 'group_settings')
      .addColumn('namespace_id', 'integer', (c) => c.notNull())
      .addColumn('settings', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('marked_for_deletion_on', 'text')
      .addColumn('repository_storage', 'text', (c) => c.notNull().defaultTo('default'))
      .addColumn('created_by_id', 'integer')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'group_settings_namespace', 'group_settings', 'namespace_id');

    await createTable(ctx, 'group_group_links')
      .addColumn('shared_group_id', 'integer', (c) => c.notNull())
      .addColumn('shared_with_group_id', 'integer', (c) => c.notNull())
      .addColumn('group_access', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'text')
      .addColumn('member_role_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'group_group_links_pair', 'group_group_links', 'shared_group_id, shared_with_group_id');
    await index(ctx, 'group_group_links_with', 'group_group_links', 'shared_with_group_id');

    await createTable(ctx, 'namespace_custom_attributes')
      .addColumn('namespace_id', 'integer', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'namespace_custom_attributes_key', 'namespace_custom_attributes', 'namespace_id, key');

    await createTable(ctx, 'audit_events')
      .addColumn('author_id', 'integer')
      .addColumn('author_name', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('entity_type', 'text', (c) => c.notNull())
      .addColumn('entity_id', 'integer', (c) => c.notNull())
      .addColumn('entity_path', 'text', (c) => c.notNull().defaultTo(''))
      .addColumn('target_type', 'text')
      .addColumn('target_id', 'integer')
      .addColumn('target_details', 'text')
      .addColumn('event_name', 'text', (c) => c.notNull())
      .addColumn('details', 'text', (c) => c.notNull().defaultTo('{}'))
      .addColumn('ip_address', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await index(ctx, 'audit_events_entity', 'audit_events', 'entity_type, entity_id, id');
    await index(ctx, 'audit_events_created', 'audit_events', 'created_at, id');

    await createTable(ctx, 'ssh_keys')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('key_type', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
      .addColumn('usage_type', 'text', (c) => c.notNull().defaultTo('auth_and_signing'))
      .addColumn('expires_at', 'text')
      .addColumn('last_used_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'ssh_keys_fingerprint_sha256', 'ssh_keys', 'fingerprint_sha256');
    await index(ctx, 'ssh_keys_user', 'ssh_keys', 'user_id, id');

    await createTable(ctx, 'resource_access_bots')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('source_type', 'text', (c) => c.notNull())
      .addColumn('source_id', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'resource_access_bots_user', 'resource_access_bots', 'user_id');
    await index(ctx, 'resource_access_bots_source', 'resource_access_bots', 'source_type, source_id');

    await createTable(ctx, 'user_group_provisions')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('provisioned_by_group_id', 'integer')
      .addColumn('enterprise_group_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'user_group_provisions_user', 'user_group_provisions', 'user_id');
    await index(ctx, 'user_group_provisions_group', 'user_group_provisions', 'provisioned_by_group_id');
    await index(ctx, 'user_group_provisions_enterprise', 'user_group_provisions', 'enterprise_group_id');

    await createTable(ctx, 'user_identities')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('provider', 'text', (c) => c.notNull())
      .addColumn('extern_uid', 'text', (c) => c.notNull())
      .addColumn('saml_provider_id', 'integer')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'user_identities_user_provider', 'user_identities', 'user_id, provider');

    await createTable(ctx, 'scim_identities')
      .addColumn('user_id', 'integer', (c) => c.notNull())
      .addColumn('group_id', 'integer', (c) => c.notNull())
      .addColumn('extern_uid', 'text', (c) => c.notNull())
      .addColumn('active', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await uniqueIndex(ctx, 'scim_identities_group_user', 'scim_identities', 'group_id, user_id');
  },
};

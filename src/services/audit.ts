// Audit events: security-relevant actions recorded for GET /audit_events and the group and
// project audit event lists. Recording never fails the action it records.
import type { Kysely, Transaction } from 'kysely';
import type { AppContext } from '../context.js';
import { nowIso } from '../db/database.js';
import type { DB } from '../db/types.js';

export interface AuditAuthor {
  id: number;
  name: string;
}

export interface AuditInput {
  author: AuditAuthor | null;
  entityType: 'Group' | 'Project' | 'User';
  entityId: number;
  entityPath: string;
  eventName: string;
  targetType?: string | null;
  targetId?: number | null;
  targetDetails?: string | null;
  /** Extra details (never secrets). */
  details?: Record<string, unknown>;
  ipAddress?: string | null;
}

/** Writes one audit event; inside a transaction when given one, so it commits with the change. */
export async function recordAudit(db: Kysely<DB> | Transaction<DB>, e: AuditInput): Promise<void> {
  const details = {
    event_name: e.eventName,
    author_name: e.author?.name ?? 'An unauthenticated user',
    author_class: e.author ? 'User' : 'Gitlab::Audit::UnauthenticatedAuthor',
    target_id: e.targetId ?? null,
    target_type: e.targetType ?? null,
    target_details: e.targetDetails ?? null,
    custom_message: e.details?.custom_message ?? e.eventName.replace(/_/g, ' '),
    ip_address: e.ipAddress ?? null,
    entity_path: e.entityPath,
    ...(e.details ?? {}),
  };
  await db
    .insertInto('audit_events')
    .values({
      author_id: e.author?.id ?? null,
      author_name: e.author?.name ?? '',
      entity_type: e.entityType,
      entity_id: e.entityId,
      entity_path: e.entityPath,
      target_type: e.targetType ?? null,
      target_id: e.targetId ?? null,
      target_details: e.targetDetails ?? null,
      event_name: e.eventName,
      details: JSON.stringify(details),
      ip_address: e.ipAddress ?? null,
      created_at: nowIso(),
    })
    .execute();
}

/** Fire-and-forget form for places outside a transaction; failures are logged, not raised. */
export function recordAuditLater(app: AppContext, e: AuditInput): void {
  recordAudit(app.db, e).catch((err) => app.log.warn({ err }, 'could not record an audit event'));
}

/** Token events (creation, rotation, revocation) as GitLab names them; the entity is the token's user. */
export async function recordTokenEvent(
  db: Kysely<DB> | Transaction<DB>,
  eventName: 'personal_access_token_created' | 'personal_access_token_rotated' | 'personal_access_token_revoked',
  token: { id: number; user_id: number; name: string },
): Promise<void> {
  const owner = await db.selectFrom('users').select(['id', 'name', 'username']).where('id', '=', token.user_id).executeTakeFirst();
  await recordAudit(db, {
    author: owner ? { id: owner.id, name: owner.name } : null,
    entityType: 'User',
    entityId: token.user_id,
    entityPath: owner?.username ?? '',
    eventName,
    targetType: 'PersonalAccessToken',
    targetId: token.id,
    targetDetails: token.name,
  });
}

// SSH public keys: parsing and validating the key blob (the type string inside must match the
// declared type), fingerprints, and storage.
import { createHash } from 'node:crypto';
import { sql, type Selectable, type Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import { nowIso } from '../../db/database.js';
import type { SshKeysTable } from '../../db/tables/groups.js';
import type { DB } from '../../db/types.js';
import { validationError } from '../../http/errors.js';
import { recordAudit } from '../audit.js';

export type SshKeyRow = Selectable<SshKeysTable>;

const ECDSA_CURVES: Record<string, { curve: string; pointLen: number }> = {
  'ecdsa-sha2-nistp256': { curve: 'nistp256', pointLen: 65 },
  'ecdsa-sha2-nistp384': { curve: 'nistp384', pointLen: 97 },
  'ecdsa-sha2-nistp521': { curve: 'nistp521', pointLen: 133 },
};

export const KEY_TYPES = ['ssh-ed25519', 'ssh-rsa', ...Object.keys(ECDSA_CURVES), 'sk-ssh-ed25519@openssh.com', 'sk-ecdsa-sha2-nistp256@openssh.com'];

/** Reads SSH wire-format strings (uint32 length + bytes) from a blob. */
function readStrings(blob: Buffer): Buffer[] | null {
  const out: Buffer[] = [];
  let off = 0;
  while (off < blob.length) {
    if (off + 4 > blob.length) return null;
    const len = blob.readUInt32BE(off);
    off += 4;
    if (len > blob.length - off) return null;
    out.push(blob.subarray(off, off + len));
    off += len;
  }
  return out;
}

function mpintBits(b: Buffer): number {
  let i = 0;
  while (i < b.length && b[i] === 0) i++;
  if (i === b.length) return 0;
  return (b.length - i - 1) * 8 + (32 - Math.clz32(b[i]));
}

export interface ParsedKey {
  type: string;
  blob: Buffer;
  comment: string;
  normalised: string;
  bits: number;
}

/** Parses `type base64 [comment]`; null when it is not a well-formed public key. */
export function parsePublicKey(text: string): ParsedKey | null {
  const parts = text.trim().split(/\s+/);
  if (parts.length < 2) return null;
  const [type, b64] = parts;
  const comment = parts.slice(2).join(' ');
  if (!KEY_TYPES.includes(type) || !/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) return null;
  const blob = Buffer.from(b64, 'base64');
  if (blob.toString('base64').replace(/=+$/, '') !== b64.replace(/=+$/, '')) return null;
  const fields = readStrings(blob);
  if (!fields || fields.length === 0 || fields[0].toString('latin1') !== type) return null;
  let bits = 0;
  if (type === 'ssh-ed25519') {
    if (fields.length !== 2 || fields[1].length !== 32) return null;
    bits = 256;
  } else if (type === 'ssh-rsa') {
    if (fields.length !== 3) return null;
    bits = mpintBits(fields[2]);
    if (bits < 1024 || mpintBits(fields[1]) === 0) return null;
  } else if (ECDSA_CURVES[type]) {
    const c = ECDSA_CURVES[type];
    if (fields.length !== 3 || fields[1].toString('latin1') !== c.curve || fields[2].length !== c.pointLen || fields[2][0] !== 4) return null;
    bits = Number(c.curve.slice(5));
  } else if (type === 'sk-ssh-ed25519@openssh.com') {
    if (fields.length !== 3 || fields[1].length !== 32) return null;
    bits = 256;
  } else {
    if (fields.length !== 4 || fields[1].toString('latin1') !== 'nistp256' || fields[2].length !== 65) return null;
    bits = 256;
  }
  return { type, blob, comment, bits, normalised: `${type} ${blob.toString('base64')}${comment ? ' ' + comment : ''}` };
}

export function fingerprints(blob: Buffer): { md5: string; sha256: string } {
  const md5 = createHash('md5').update(blob).digest('hex').match(/../g)!.join(':');
  const sha256 = 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
  return { md5, sha256 };
}

/** PostgreSQL advisory lock key of key creation (forks use 7_190_019, instance variables 7_190_023). */
const KEY_FINGERPRINT_LOCK = 7_190_029;

/**
 * GitLab keeps users' SSH keys and deploy keys in one `keys` table whose fingerprint_sha256 is
 * unique; here they are two tables, so every creation takes this lock (PostgreSQL; SQLite's
 * writer already runs alone) before it asks fingerprintTaken and inserts.
 */
export async function lockKeyFingerprints(app: AppContext, trx: Transaction<DB>): Promise<void> {
  if (app.database.dialect === 'postgres') await sql`select pg_advisory_xact_lock(${KEY_FINGERPRINT_LOCK})`.execute(trx);
}

/** Whether a user's SSH key or a deploy key already has this fingerprint. */
export async function fingerprintTaken(trx: Transaction<DB>, sha256: string): Promise<boolean> {
  const user = await trx.selectFrom('ssh_keys').select('id').where('fingerprint_sha256', '=', sha256).executeTakeFirst();
  if (user) return true;
  const deploy = await trx.selectFrom('deploy_keys').select('id').where('fingerprint_sha256', '=', sha256).executeTakeFirst();
  return deploy !== undefined;
}

export interface NewKey {
  title: string;
  key: string;
  expiresAt: string | null;
  usageType: string;
}

export async function createSshKey(app: AppContext, userId: number, input: NewKey, actor: { id: number; name: string }): Promise<SshKeyRow> {
  const errors: Record<string, string[]> = {};
  if (input.title.trim() === '') errors.title = ["can't be blank"];
  else if (input.title.length > 255) errors.title = ['is too long (maximum is 255 characters)'];
  const parsed = parsePublicKey(input.key);
  if (!parsed) {
    errors.key = ['is invalid'];
    errors.fingerprint_sha256 = ['cannot be generated'];
  }
  if (input.expiresAt && input.expiresAt <= nowIso()) errors.expires_at = ['must be in the future'];
  if (Object.keys(errors).length) throw validationError(errors);
  const fp = fingerprints(parsed!.blob);
  return app.database.transaction(async (trx) => {
    await lockKeyFingerprints(app, trx);
    if (await fingerprintTaken(trx, fp.sha256)) throw validationError({ fingerprint_sha256: ['has already been taken'] });
    const now = nowIso();
    const row = await trx
      .insertInto('ssh_keys')
      .values({
        user_id: userId,
        title: input.title,
        key: parsed!.normalised,
        key_type: parsed!.type,
        fingerprint: fp.md5,
        fingerprint_sha256: fp.sha256,
        usage_type: input.usageType,
        expires_at: input.expiresAt,
        last_used_at: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    const owner = await trx.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst();
    await recordAudit(trx, {
      author: actor,
      entityType: 'User',
      entityId: userId,
      entityPath: owner?.username ?? '',
      eventName: 'add_ssh_key',
      targetType: 'Key',
      targetId: row.id,
      targetDetails: row.title,
    });
    return row;
  });
}

export async function deleteSshKey(app: AppContext, key: SshKeyRow, actor: { id: number; name: string } | null): Promise<void> {
  await app.database.transaction(async (trx) => {
    await trx.deleteFrom('ssh_keys').where('id', '=', key.id).execute();
    await recordAudit(trx, {
      author: actor,
      entityType: 'User',
      entityId: key.user_id,
      entityPath: '',
      eventName: 'remove_ssh_key',
      targetType: 'Key',
      targetId: key.id,
      targetDetails: key.title,
    });
  });
}

/** Entities::SSHKey (deploy keys start with the same fields). */
export function presentSshKey(k: Pick<SshKeyRow, 'id' | 'title' | 'created_at' | 'expires_at' | 'last_used_at' | 'key' | 'usage_type'>) {
  return {
    id: k.id,
    title: k.title,
    created_at: k.created_at,
    expires_at: k.expires_at,
    last_used_at: k.last_used_at,
    key: k.key,
    usage_type: k.usage_type,
  };
}

/** The credential-inventory record of §2.5. */
export function presentInventoryKey(k: SshKeyRow) {
  return {
    id: k.id,
    title: k.title,
    created_at: k.created_at,
    expires_at: k.expires_at,
    last_used_at: k.last_used_at,
    usage_type: k.usage_type,
    user_id: k.user_id,
  };
}

// GET /oauth/token/info and GET/POST /oauth/userinfo (OpenID Connect claims as GitLab sends them).
import { createHmac } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { avatarUrl } from '../api/v4/entities/user.js';
import type { AppContext } from '../context.js';
import { findUserById } from '../db/repositories/users.js';
import { OAuthError } from '../http/errors.js';
import { baseUrl } from '../http/route.js';
import { findBearer, remainingSeconds, requireAccessToken } from './bearer.js';
import { OAuthParams } from './raw-params.js';
import { splitScopes } from './scopes.js';
import { todayUtc } from '../services/personal-access-tokens.js';

function sendJson(reply: FastifyReply, body: unknown): FastifyReply {
  reply.code(200).headers({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).type('application/json');
  return reply.send(JSON.stringify(body));
}

interface GroupClaims {
  groups: string[];
  direct: string[];
  owner: string[];
  maintainer: string[];
  developer: string[];
}

/** Groups the user belongs to directly, plus their subgroups (GitLab's membership_groups). */
export async function groupClaims(ctx: AppContext, userId: number): Promise<GroupClaims> {
  const today = todayUtc();
  const direct = await ctx.db
    .selectFrom('members')
    .innerJoin('namespaces', 'namespaces.id', 'members.source_id')
    .select(['namespaces.full_path', 'namespaces.traversal', 'members.access_level'])
    .where('members.source_type', '=', 'Namespace')
    .where('members.user_id', '=', userId)
    .where('namespaces.kind', '=', 'group')
    .where((eb) => eb.or([eb('members.expires_at', 'is', null), eb('members.expires_at', '>', today)]))
    .execute();
  const all = new Set(direct.map((d) => d.full_path));
  if (direct.length > 0) {
    const subgroups = await ctx.db
      .selectFrom('namespaces')
      .select('full_path')
      .where('kind', '=', 'group')
      .where((eb) => eb.or(direct.map((d) => eb('traversal', 'like', `${d.traversal}%`))))
      .execute();
    for (const s of subgroups) all.add(s.full_path);
  }
  const at = (level: number) => direct.filter((d) => d.access_level === level).map((d) => d.full_path).sort();
  return { groups: [...all].sort(), direct: direct.map((d) => d.full_path).sort(), owner: at(50), maintainer: at(40), developer: at(30) };
}

/** GitLab's sub_legacy: a digest of the user id keyed by an instance secret (stable per instance). */
export function subLegacy(ctx: AppContext, userId: number): string {
  return createHmac('sha256', ctx.config.secret).update(`sub_legacy:${userId}`).digest('hex');
}

export function registerInfoEndpoints(app: FastifyInstance): void {
  const ctx = app.lw;

  // GET /oauth/token/info
  app.get('/oauth/token/info', async function tokenInfo(req, reply) {
    const row = await requireAccessToken(ctx, findBearer(req, OAuthParams.fromRequest(req)));
    const application = row.application_id
      ? await ctx.db.selectFrom('oauth_applications').select('uid').where('id', '=', row.application_id).executeTakeFirst()
      : undefined;
    const scopes = splitScopes(row.scopes);
    const expiresIn = remainingSeconds(row);
    return sendJson(reply, {
      resource_owner_id: row.resource_owner_id,
      scope: scopes,
      expires_in: expiresIn,
      application: application ? { uid: application.uid } : null,
      created_at: Math.floor(Date.parse(row.created_at) / 1000),
      // Deprecated aliases GitLab still sends.
      scopes,
      expires_in_seconds: expiresIn,
    });
  });

  // GET /oauth/userinfo and POST /oauth/userinfo
  async function userinfo(req: FastifyRequest, reply: FastifyReply) {
    const row = await requireAccessToken(ctx, findBearer(req, OAuthParams.fromRequest(req)));
    const scopes = splitScopes(row.scopes);
    if (!scopes.includes('openid')) {
      throw new OAuthError('insufficient_scope', 'The request requires higher privileges than provided by the access token.', 403, {
        'WWW-Authenticate': 'Bearer realm="Labwright", error="insufficient_scope", scope="openid"',
      });
    }
    const user = await findUserById(ctx.db, row.resource_owner_id);
    if (!user) throw new OAuthError('invalid_token', 'The access token is invalid', 401);
    const base = baseUrl(ctx, req);
    const g = await groupClaims(ctx, user.id);
    const claims: Record<string, unknown> = {
      sub: String(user.id),
      sub_legacy: subLegacy(ctx, user.id),
      name: user.name,
      nickname: user.username,
      preferred_username: user.username,
      email: undefined,
      email_verified: undefined,
      website: user.website_url || undefined,
      profile: `${base}/${user.username}`,
      picture: avatarUrl(base, user) ?? undefined,
      groups: g.groups,
      groups_direct: g.direct,
      'https://gitlab.org/claims/groups/owner': g.owner.length ? g.owner : undefined,
      'https://gitlab.org/claims/groups/maintainer': g.maintainer.length ? g.maintainer : undefined,
      'https://gitlab.org/claims/groups/developer': g.developer.length ? g.developer : undefined,
    };
    // GitLab: the primary email with the `email` scope, else the public email when there is one.
    if (scopes.includes('email')) {
      claims.email = user.email;
      claims.email_verified = user.confirmed_at !== null;
    } else if (user.public_email) {
      claims.email = user.public_email;
      claims.email_verified = user.confirmed_at !== null;
    }
    return sendJson(reply, claims);
  }
  app.get('/oauth/userinfo', userinfo);
  app.post('/oauth/userinfo', userinfo);
}

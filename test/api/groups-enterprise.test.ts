import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

function ed25519(): string {
  const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as any;
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
  return `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(Buffer.from(jwk.x, 'base64url'))]).toString('base64')}`;
}

describe('enterprise users and the credential inventory (Premium, hosted)', () => {
  let s: TestServer;
  let owner: { id: number; username: string; token: string };
  let outsider: { id: number; username: string; token: string };
  let g: any;
  let ent: any;
  let entToken: string;
  let entTokenId: number;

  beforeAll(async () => {
    s = await startServer({ LABWRIGHT_PLAN: 'premium', LABWRIGHT_OFFERING: 'hosted' });
    owner = await s.createUser('owner');
    outsider = await s.createUser('outsider');
    g = (await s.request('POST', '/groups', { token: owner.token, json: { name: 'Corp', path: 'corp' } })).body;
    const r = await s.request('POST', '/users', {
      json: { username: 'emp', email: 'emp@corp.example', name: 'Employee One', password: 'password-1234', provider: 'group_saml', extern_uid: 'emp-1', group_id_for_saml: g.id, provisioned_by_group_id: g.id },
    });
    expect(r.status).toBe(201);
    ent = r.body;
    expect(ent.identities).toEqual([{ provider: 'group_saml', extern_uid: 'emp-1', saml_provider_id: g.id }]);
    expect(ent.provisioned_by_group_id).toBe(g.id);
    const t = await s.request('POST', `/users/${ent.id}/personal_access_tokens`, { json: { name: 'laptop', scopes: ['api'] } });
    entToken = t.body.token;
    entTokenId = t.body.id;
    await s.request('POST', '/user/keys', { token: entToken, json: { title: 'laptop key', key: ed25519() } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('sets identities through PUT /users/:id too', async () => {
    const other = await s.createUser('other');
    const r = await s.request('PUT', `/users/${other.id}`, { json: { provider: 'group_saml', extern_uid: 'o-1', group_id_for_saml: g.id } });
    expect(r.status).toBe(200);
    expect(r.body.identities).toEqual([{ provider: 'group_saml', extern_uid: 'o-1', saml_provider_id: g.id }]);
    expect(r.body.provisioned_by_group_id).toBe(null);
    const half = await s.request('PUT', `/users/${other.id}`, { json: { provider: 'group_saml' } });
    expect(half.status).toBe(400);
    await s.request('DELETE', `/users/${other.id}`);
  });

  it('refuses a bad group_id_for_saml without creating the user', async () => {
    const r = await s.request('POST', '/users', { json: { username: 'nobody', email: 'n@x.example', name: 'N', password: 'password-1234', provider: 'group_saml', extern_uid: 'n', group_id_for_saml: 99999 } });
    expect(r.status).toBe(400);
    expect((await s.request('GET', '/users?username=nobody')).body).toEqual([]);
  });

  it('lists SAML users with identities and scim_identities, and provisioned users, with filters', async () => {
    const r = await s.request('GET', `/groups/${g.id}/saml_users`, { token: owner.token });
    expect(r.status).toBe(200);
    expect(r.body.map((u: any) => u.username)).toEqual(['emp']);
    expect(r.body[0].identities).toEqual([{ provider: 'group_saml', extern_uid: 'emp-1', saml_provider_id: g.id }]);
    expect(r.body[0].scim_identities).toEqual([{ extern_uid: 'emp-1', group_id: g.id, active: true }]);
    expect((await s.request('GET', `/groups/${g.id}/saml_users?search=nomatch`, { token: owner.token })).body).toEqual([]);
    expect((await s.request('GET', `/groups/${g.id}/saml_users?username=emp&active=true`, { token: owner.token })).body.length).toBe(1);
    expect((await s.request('GET', `/groups/${g.id}/saml_users?blocked=true`, { token: owner.token })).body).toEqual([]);
    expect((await s.request('GET', `/groups/${g.id}/saml_users?created_before=2000-01-01T00:00:00Z`, { token: owner.token })).body).toEqual([]);
    const prov = await s.request('GET', `/groups/${g.id}/provisioned_users`, { token: owner.token });
    expect(prov.body.map((u: any) => u.username)).toEqual(['emp']);
    expect(prov.body[0].scim_identities).toBeUndefined();
    expect((await s.request('GET', `/groups/${g.id}/provisioned_users`, { token: outsider.token })).status).toBe(404);
    expect((await s.request('GET', `/groups/${g.id}/saml_users?created_after=yesterday`, { token: owner.token })).status).toBe(400);
  });

  it('lists, rotates and revokes enterprise users\' tokens and keys with §7 status codes', async () => {
    const pats = await s.request('GET', `/groups/${g.id}/manage/personal_access_tokens?sort=name_asc&state=active`, { token: owner.token });
    expect(pats.status).toBe(200);
    expect(pats.body.map((t: any) => t.id)).toEqual([entTokenId]);
    expect((await s.request('GET', `/groups/${g.id}/manage/personal_access_tokens?search=zzz`, { token: owner.token })).body).toEqual([]);
    expect((await s.request('GET', `/groups/${g.id}/manage/personal_access_tokens?sort=biggest`, { token: owner.token })).status).toBe(400);
    expect((await s.request('GET', `/groups/${g.id}/manage/personal_access_tokens`, { token: outsider.token })).status).toBe(404);
    const keys = await s.request('GET', `/groups/${g.id}/manage/ssh_keys`, { token: owner.token });
    expect(keys.body.length).toBe(1);
    expect(Object.keys(keys.body[0])).toEqual(['id', 'title', 'created_at', 'expires_at', 'last_used_at', 'usage_type', 'user_id']);
    const tooLong = await s.request('POST', `/groups/${g.id}/manage/personal_access_tokens/${entTokenId}/rotate`, { token: owner.token, json: { expires_at: '2999-01-01' } });
    expect(tooLong.status).toBe(400);
    const rot = await s.request('POST', `/groups/${g.id}/manage/personal_access_tokens/${entTokenId}/rotate`, { token: owner.token });
    expect(rot.status).toBe(200);
    expect(rot.body.token).toBeTruthy();
    const week = new Date(Date.now() + 7 * 86400000).toISOString().slice(0, 10);
    expect(rot.body.expires_at).toBe(week);
    expect((await s.request('GET', '/user', { token: entToken })).status).toBe(401);
    const again = await s.request('POST', `/groups/${g.id}/manage/personal_access_tokens/${entTokenId}/rotate`, { token: owner.token });
    expect(again.status).toBe(401);
    const missing = await s.request('POST', `/groups/${g.id}/manage/personal_access_tokens/999999/rotate`, { token: owner.token });
    expect(missing.status).toBe(404);
    const selfRotate = await s.request('POST', `/groups/${g.id}/manage/personal_access_tokens/self/rotate`, { token: rot.body.token });
    expect([401, 403, 404]).toContain(selfRotate.status);
    const del = await s.request('DELETE', `/groups/${g.id}/manage/personal_access_tokens/${rot.body.id}`, { token: owner.token });
    expect(del.status).toBe(204);
    const twice = await s.request('DELETE', `/groups/${g.id}/manage/personal_access_tokens/${rot.body.id}`, { token: owner.token });
    expect(twice.status).toBe(400);
    const delKey = await s.request('DELETE', `/groups/${g.id}/manage/ssh_keys/${keys.body[0].id}`, { token: owner.token });
    expect(delKey.status).toBe(204);
    expect((await s.request('DELETE', `/groups/${g.id}/manage/ssh_keys/${keys.body[0].id}`, { token: owner.token })).status).toBe(404);
  });

  it('lists and revokes resource access tokens; rotating one as a personal token is 405', async () => {
    const t = await s.request('POST', `/groups/${g.id}/access_tokens`, { token: owner.token, json: { name: 'bot', scopes: ['api'] } });
    expect(t.status).toBe(201);
    const list = await s.request('GET', `/groups/${g.id}/manage/resource_access_tokens`, { token: owner.token });
    expect(list.body.map((x: any) => x.id)).toEqual([t.body.id]);
    expect(list.body[0].resource_type).toBe('group');
    const wrong = await s.request('POST', `/groups/${g.id}/manage/personal_access_tokens/${t.body.id}/rotate`, { token: owner.token });
    expect(wrong.status).toBe(405);
    const rot = await s.request('POST', `/groups/${g.id}/manage/resource_access_tokens/${t.body.id}/rotate`, { token: owner.token });
    expect(rot.status).toBe(200);
    expect(rot.body.resource_id).toBe(g.id);
    const del = await s.request('DELETE', `/groups/${g.id}/manage/resource_access_tokens/${rot.body.id}`, { token: owner.token });
    expect(del.status).toBe(204);
  });
});

describe('the same on Free and on self-managed', () => {
  it('saml_users and the inventory do not exist on Free; the inventory not on self-managed', async () => {
    const free = await startServer();
    const premium = await startServer({ LABWRIGHT_PLAN: 'premium' });
    try {
      for (const s of [free, premium]) {
        const g = (await s.request('POST', '/groups', { json: { name: 'G', path: 'g' } })).body;
        expect((await s.request('GET', `/groups/${g.id}/manage/personal_access_tokens`)).status).toBe(404);
        expect((await s.request('GET', `/groups/${g.id}/saml_users`)).status).toBe(s === free ? 404 : 200);
      }
    } finally {
      await free.close();
      await premium.close();
    }
  });
});

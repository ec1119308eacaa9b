import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { openssh, sshString } from '../helpers/ssh-keys.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
  bob = await s.createUser('bob');
});
afterAll(async () => {
  await s?.close();
});

describe('SSH keys', () => {
  it('adds ed25519, RSA and ECDSA keys and lists them', async () => {
    for (const kind of ['ed25519', 'rsa', 'ecdsa'] as const) {
      const r = await s.request('POST', '/user/keys', { token: alice.token, json: { title: `my ${kind}`, key: openssh(kind), usage_type: 'auth' } });
      expect(r.status, kind).toBe(201);
      expect(Object.keys(r.body)).toEqual(['id', 'title', 'created_at', 'expires_at', 'last_used_at', 'key', 'usage_type']);
      expect(r.body.usage_type).toBe('auth');
    }
    const list = await s.request('GET', '/user/keys', { token: alice.token });
    expect(list.body.map((k: any) => k.title)).toEqual(['my ed25519', 'my rsa', 'my ecdsa']);
    const pub = await s.request('GET', `/users/${alice.id}/keys`, { token: null });
    expect(pub.body.length).toBe(3);
    const byName = await s.request('GET', '/users/alice/keys', { token: bob.token });
    expect(byName.body.length).toBe(3);
  });

  it('refuses keys that are not real public keys', async () => {
    const good = openssh('ed25519');
    const blob = good.split(' ')[1];
    const cases = [
      'not a key',
      `ssh-rsa ${blob}`, // the type inside the blob is ssh-ed25519
      `ssh-ed25519 ${blob.slice(0, -8)}`,
      `ssh-ed25519 !!!${blob}`,
      `ssh-dss ${blob}`,
      `ssh-ed25519 ${Buffer.concat([sshString('ssh-ed25519'), sshString(Buffer.alloc(31))]).toString('base64')}`,
    ];
    for (const key of cases) {
      const r = await s.request('POST', '/user/keys', { token: bob.token, json: { title: 'x', key } });
      expect(r.status, key).toBe(400);
      expect(r.body.message.key).toEqual(['is invalid']);
    }
    const missing = await s.request('POST', '/user/keys', { token: bob.token, json: { key: good } });
    expect(missing.status).toBe(400);
    const longTitle = await s.request('POST', '/user/keys', { token: bob.token, json: { title: 'x'.repeat(256), key: good } });
    expect(longTitle.status).toBe(400);
    const past = await s.request('POST', '/user/keys', { token: bob.token, json: { title: 'x', key: good, expires_at: '2001-01-01T00:00:00Z' } });
    expect(past.status).toBe(400);
    const badUsage = await s.request('POST', '/user/keys', { token: bob.token, json: { title: 'x', key: good, usage_type: 'both' } });
    expect(badUsage.status).toBe(400);
    const ok = await s.request('POST', '/user/keys', { token: bob.token, json: { title: 'x', key: good, expires_at: '2999-01-01T00:00:00Z' } });
    expect(ok.status).toBe(201);
    const dup = await s.request('POST', '/user/keys', { token: alice.token, json: { title: 'dup', key: good } });
    expect(dup.status).toBe(400);
    expect(dup.body.message.fingerprint_sha256).toEqual(['has already been taken']);
    const bobs = await s.request('GET', '/user/keys', { token: bob.token });
    expect(bobs.body.length).toBe(1);
  });

  it('only the owner deletes a key; admins use /users/:id/keys and /keys', async () => {
    const k = (await s.request('GET', '/user/keys', { token: alice.token })).body[0];
    const other = await s.request('DELETE', `/user/keys/${k.id}`, { token: bob.token });
    expect(other.status).toBe(404);
    const adminView = await s.request('GET', `/keys/${k.id}`);
    expect(adminView.body.user.username).toBe('alice');
    expect((await s.request('GET', `/keys/${k.id}`, { token: alice.token })).status).toBe(403);
    const row = await s.app.lw.db.selectFrom('ssh_keys').select('fingerprint_sha256').where('id', '=', k.id).executeTakeFirstOrThrow();
    const byFp = await s.request('GET', `/keys?fingerprint=${encodeURIComponent(row.fingerprint_sha256)}`);
    expect(byFp.body.id).toBe(k.id);
    const del = await s.request('DELETE', `/user/keys/${k.id}`, { token: alice.token });
    expect(del.status).toBe(204);
    const adminAdd = await s.request('POST', `/users/${bob.id}/keys`, { json: { title: 'by admin', key: openssh('rsa') } });
    expect(adminAdd.status).toBe(201);
    expect((await s.request('POST', `/users/${bob.id}/keys`, { token: alice.token, json: { title: 'no', key: openssh('rsa') } })).status).toBe(403);
    const adminDel = await s.request('DELETE', `/users/${bob.id}/keys/${adminAdd.body.id}`);
    expect(adminDel.status).toBe(204);
    expect((await s.request('GET', '/users/99999/keys')).status).toBe(404);
  });
});

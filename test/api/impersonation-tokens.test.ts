// Impersonation tokens (GitLab's /users/:user_id/impersonation_tokens, administrators only): made
// for a user, they act as that user; listed with a state filter, read, revoked; python-gitlab's
// calls (test set-ups often take a user's token this way).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPythonGitlab, PYTHON, runPython } from '../helpers/python.js';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };
let bob: { id: number; username: string; token: string };

const day = (offset: number) => new Date(Date.now() + offset * 86400_000).toISOString().slice(0, 10);
const FIELDS = ['id', 'name', 'revoked', 'created_at', 'description', 'scopes', 'user_id', 'last_used_at', 'last_used_ips', 'active', 'expires_at', 'impersonation'];

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('imp-alice');
  bob = await s.createUser('imp-bob');
});
afterAll(async () => {
  await s?.close();
});

describe('impersonation tokens', () => {
  it('an administrator makes one (201 with the token); it acts as the user; read, listed by state, revoked', async () => {
    const r = await s.request('POST', `/users/${alice.id}/impersonation_tokens`, { json: { name: 'as alice', scopes: ['api'], expires_at: day(10) } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual([...FIELDS, 'token']);
    expect(r.body).toMatchObject({ name: 'as alice', revoked: false, active: true, scopes: ['api'], user_id: alice.id, expires_at: day(10), impersonation: true });
    expect(r.body.token).toMatch(/^glpat-/);
    const me = await s.request('GET', '/user', { token: r.body.token });
    expect(me.body.username).toBe('imp-alice');
    // It writes as the user too.
    const p = await s.request('POST', '/projects', { token: r.body.token, json: { name: 'imp-made' } });
    expect(p.status).toBe(201);
    expect(p.body.owner.username).toBe('imp-alice');

    // A personal access token of the same user is not an impersonation token.
    const pat = await s.request('POST', `/users/${alice.id}/personal_access_tokens`, { json: { name: 'own', scopes: ['api'], expires_at: day(10) } });
    expect(pat.body.impersonation).toBeUndefined();
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens/${pat.body.id}`)).body).toEqual({ message: '404 Impersonation Token Not Found' });

    const one = await s.request('GET', `/users/${alice.id}/impersonation_tokens/${r.body.id}`);
    expect(one.status).toBe(200);
    expect(Object.keys(one.body)).toEqual(FIELDS);
    const second = await s.request('POST', `/users/${alice.id}/impersonation_tokens`, { json: { name: 'second', scopes: 'read_api,read_user', expires_at: day(5) } });
    expect(second.body.scopes).toEqual(['read_api', 'read_user']);
    const list = await s.request('GET', `/users/${alice.id}/impersonation_tokens`);
    expect(list.body.map((t: any) => t.name)).toEqual(['as alice', 'second']);
    expect(list.headers.get('x-total')).toBe('2');

    const del = await s.request('DELETE', `/users/${alice.id}/impersonation_tokens/${r.body.id}`);
    expect(del.status).toBe(204);
    expect((await s.request('GET', '/user', { token: r.body.token })).status).toBe(401);
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens/${r.body.id}`)).body).toMatchObject({ revoked: true, active: false });
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens`, { query: { state: 'active' } })).body.map((t: any) => t.name)).toEqual(['second']);
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens`, { query: { state: 'inactive' } })).body.map((t: any) => t.name)).toEqual(['as alice']);
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens`, { query: { state: 'nope' } })).body).toEqual({ error: 'state does not have a valid value' });
    // Another user's token by this user's path: 404.
    expect((await s.request('GET', `/users/${bob.id}/impersonation_tokens/${second.body.id}`)).status).toBe(404);
  });

  it('administrators only (401 anonymous, 403 others); unknown users 404; the rules of new tokens', async () => {
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens`, { token: null })).status).toBe(401);
    expect((await s.request('POST', `/users/${alice.id}/impersonation_tokens`, { token: bob.token, json: { name: 'x', scopes: ['api'] } })).status).toBe(403);
    expect((await s.request('GET', `/users/${alice.id}/impersonation_tokens`, { token: alice.token })).status).toBe(403);
    expect((await s.request('GET', '/users/999999/impersonation_tokens')).body).toEqual({ message: '404 User Not Found' });
    expect((await s.request('POST', `/users/${bob.id}/impersonation_tokens`, { json: { scopes: ['api'] } })).body).toEqual({ message: '400 Bad request - "name" not given' });
    expect((await s.request('POST', `/users/${bob.id}/impersonation_tokens`, { json: { name: 'x', scopes: ['nope'] } })).status).toBe(400);
    expect((await s.request('POST', `/users/${bob.id}/impersonation_tokens`, { json: { name: 'x', scopes: ['api'], expires_at: day(-1) } })).status).toBe(400);
    expect((await s.request('GET', `/users/${bob.id}/impersonation_tokens/abc`)).body).toEqual({ error: 'impersonation_token_id is invalid' });
    expect((await s.request('GET', `/users/${bob.id}/impersonation_tokens`)).body).toEqual([]);
  });

  it("python-gitlab's calls", async () => {
    if (!(await hasPythonGitlab())) return;
    const script = `
import gitlab, json, sys, datetime
gl = gitlab.Gitlab(sys.argv[1], private_token=sys.argv[2])
user = gl.users.get(int(sys.argv[3]))
t = user.impersonationtokens.create({'name': 'py', 'scopes': ['api'], 'expires_at': sys.argv[4]})
as_user = gitlab.Gitlab(sys.argv[1], private_token=t.token)
as_user.auth()
names = [x.name for x in user.impersonationtokens.list(state='active', get_all=True)]
user.impersonationtokens.delete(t.id)
print(json.dumps({'user': as_user.user.username, 'names': names, 'after': [x.name for x in user.impersonationtokens.list(state='active', get_all=True)]}))
`;
    const { stdout } = await runPython(PYTHON, ['-c', script, s.url, s.rootToken, String(bob.id), day(3)]);
    expect(JSON.parse(stdout)).toEqual({ user: 'imp-bob', names: ['py'], after: [] });
  });
});

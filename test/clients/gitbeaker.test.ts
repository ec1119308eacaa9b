// The real @gitbeaker/rest client against the real server: offset pagination walked through Link
// rel="next", expanded pagination info from the X-* headers, keyset walking, current user, errors.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let api: InstanceType<typeof Gitlab>;
const USERS = 7;

beforeAll(async () => {
  s = await startServer();
  for (let i = 0; i < USERS; i++) await s.createUser(`gb${i}`);
  api = new Gitlab({ host: s.url, token: s.rootToken });
});
afterAll(async () => {
  await s?.close();
});

describe('@gitbeaker/rest', () => {
  it('Users.all({ perPage: 2 }) walks every page through Link rel="next"', async () => {
    const all = await api.Users.all({ perPage: 2 });
    expect(all).toHaveLength(USERS + 1);
    expect(new Set(all.map((u) => u.id)).size).toBe(USERS + 1);
  });

  it('showExpanded gives the pagination info from the X-* headers', async () => {
    const res = await api.Users.all({ perPage: 3, page: 2, showExpanded: true, pagination: 'offset' });
    expect(res.data).toHaveLength(3);
    expect(res.paginationInfo).toEqual({ total: USERS + 1, next: 3, current: 2, previous: 1, perPage: 3, totalPages: 3 });
  });

  it('maxPages stops early', async () => {
    const some = await api.Users.all({ perPage: 2, maxPages: 2 });
    expect(some).toHaveLength(4);
  });

  it('keyset pagination walks every user through the next links', async () => {
    const byId = await api.Users.all({ pagination: 'keyset', orderBy: 'id', sort: 'asc', perPage: 3 } as never);
    expect((byId as Array<{ id: number }>).map((u) => u.id)).toEqual(Array.from({ length: USERS + 1 }, (_, i) => i + 1));
    const byName = await api.Users.all({ pagination: 'keyset', orderBy: 'name', sort: 'desc', perPage: 3 } as never);
    expect((byName as unknown[]).length).toBe(USERS + 1);
  });

  it('showCurrentUser and show', async () => {
    const me = await api.Users.showCurrentUser();
    expect(me.username).toBe('root');
    expect(me.web_url).toBe(`${s.url}/root`);
    const other = await api.Users.show(2);
    expect(other.username).toBe('gb0');
  });

  it('creates a user and a token; the token works in a second client; rotate and revoke', async () => {
    const u = (await api.Users.create({ username: 'gbnew', email: 'gbnew@example.com', name: 'GB New', password: 'password-1234' } as never)) as unknown as { id: number; username: string };
    expect(u.username).toBe('gbnew');
    const t = (await api.Users.createPersonalAccessToken(u.id, 'gb', ['api'])) as unknown as { id: number; token: string };
    const client = new Gitlab({ host: s.url, token: t.token });
    expect((await client.Users.showCurrentUser()).username).toBe('gbnew');
    const self = (await client.PersonalAccessTokens.show()) as unknown as { id: number };
    expect(self.id).toBe(t.id);
    const rotated = (await client.PersonalAccessTokens.rotate(t.id)) as unknown as { token: string };
    await expect(client.Users.showCurrentUser()).rejects.toMatchObject({ cause: { description: '401 Unauthorized' } });
    const next = new Gitlab({ host: s.url, token: rotated.token });
    expect((await next.Users.showCurrentUser()).username).toBe('gbnew');
    await next.PersonalAccessTokens.remove();
    await expect(next.Users.showCurrentUser()).rejects.toMatchObject({ cause: { description: '401 Unauthorized' } });
  });

  it('errors carry GitLab’s message: unknown user, bad token', async () => {
    await expect(api.Users.show(999999)).rejects.toMatchObject({ cause: { description: '404 User Not Found' } });
    const bad = new Gitlab({ host: s.url, token: 'wrong' });
    await expect(bad.Users.showCurrentUser()).rejects.toMatchObject({ cause: { description: '401 Unauthorized' } });
  });

  it('the /version call python-gitlab and gitbeaker make', async () => {
    const v = await api.Metadata.show();
    expect(v.version).toMatch(/^\d+\.\d+\.\d+/);
  });
});

// Groups, namespaces, keys and group access tokens through an independent client, @gitbeaker/rest.
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gitlab } from '@gitbeaker/rest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let alice: { id: number; username: string; token: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('alice');
});
afterAll(async () => {
  await s?.close();
});

describe('@gitbeaker/rest', () => {
  it('creates, shows, lists, edits, transfers, shares and removes groups', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const top = await api.Groups.create('Beaker Group', 'beaker-group', { visibility: 'public', description: 'from gitbeaker' });
    expect(top.full_path).toBe('beaker-group');
    const sub = await api.Groups.create('Beaker Sub', 'beaker-sub', { parentId: top.id as number });
    expect(sub.parent_id).toBe(top.id);
    const shown = await api.Groups.show('beaker-group/beaker-sub');
    expect(shown.id).toBe(sub.id);
    const all = await api.Groups.all({ allAvailable: true });
    expect(all.map((g) => g.full_path)).toEqual(['beaker-group', 'beaker-group/beaker-sub']);
    const subs = await api.Groups.allSubgroups(top.id as number);
    expect(subs.map((g) => g.id)).toEqual([sub.id]);
    const edited = await api.Groups.edit(top.id as number, { description: 'edited', requestAccessEnabled: false });
    expect(edited.description).toBe('edited');
    expect(edited.request_access_enabled).toBe(false);
    const other = await api.Groups.create('Other Group', 'other-group');
    await api.Groups.share(top.id as number, other.id as number, 30, {});
    const after = await api.Groups.show(top.id as number);
    expect((after as any).shared_with_groups[0].group_id).toBe(other.id);
    await api.Groups.unshare(top.id as number, other.id as number, {});
    await api.Groups.transfer(sub.id as number, { groupId: other.id as number } as any);
    expect((await api.Groups.show(sub.id as number)).full_path).toBe('other-group/beaker-sub');
    await api.Groups.remove(other.id as number);
    await expect(api.Groups.show(sub.id as number)).rejects.toThrow();
  });

  it('reads namespaces and manages SSH keys and group access tokens', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const ns = await api.Namespaces.all();
    expect(ns.map((n) => n.full_path)).toContain('alice');
    const exists = await api.Namespaces.exists('alice');
    expect(exists.exists).toBe(true);
    const jwk = generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }) as any;
    const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, b.length]), b]);
    const key = `ssh-ed25519 ${Buffer.concat([str(Buffer.from('ssh-ed25519')), str(Buffer.from(jwk.x, 'base64url'))]).toString('base64')} a@b`;
    const created = await api.UserSSHKeys.create('laptop', key);
    expect(created.title).toBe('laptop');
    expect((await api.UserSSHKeys.all()).length).toBe(1);
    await api.UserSSHKeys.remove(created.id as number);
    const g = await api.Groups.create('Token Group', 'token-group');
    const nextYear = `${new Date().getUTCFullYear() + 1}-01-01`;
    const t = await api.GroupAccessTokens.create(g.id as number, 'ci', ['read_api'] as any, nextYear, { accessLevel: 20 } as any);
    expect((t as any).access_level).toBe(20);
    expect((t as any).token).toBeTruthy();
    const bot = new Gitlab({ host: s.url, token: (t as any).token });
    expect((await bot.Groups.show(g.id as number)).id).toBe(g.id);
  });
});

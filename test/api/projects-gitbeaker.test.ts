// Projects and members through an independent client, @gitbeaker/rest, as real users call them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gitlab } from '@gitbeaker/rest';
import { startServer, type TestServer } from '../helpers/server.js';

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

describe('@gitbeaker/rest', () => {
  it('creates, shows, lists, edits, archives and removes projects; manages members', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const created = await api.Projects.create({ name: 'Beaker', initializeWithReadme: true, visibility: 'private', mergeMethod: 'ff', squashOption: 'always' });
    expect(created.path_with_namespace).toBe('alice/beaker');
    expect(created.default_branch).toBe('main');
    expect(created.merge_method).toBe('ff');

    const shown = await api.Projects.show('alice/beaker');
    expect(shown.id).toBe(created.id);
    expect((shown as any).permissions.project_access.access_level).toBe(50);

    const all = await api.Projects.all({ owned: true });
    expect(all.map((p) => p.id)).toContain(created.id);

    const edited = await api.Projects.edit(created.id, { description: 'edited', removeSourceBranchAfterMerge: false });
    expect(edited.description).toBe('edited');
    expect(edited.remove_source_branch_after_merge).toBe(false);

    const archived = await api.Projects.archive(created.id);
    expect(archived.archived).toBe(true);
    await api.Projects.unarchive(created.id);

    const member = await api.ProjectMembers.add(created.id, 30, { userId: bob.id });
    expect(member.access_level).toBe(30);
    const members = await api.ProjectMembers.all(created.id);
    expect(members.map((m) => m.username).sort()).toEqual(['alice', 'bob']);

    // bob sees the project now; an outsider client gets a 404.
    const bobApi = new Gitlab({ host: s.url, token: bob.token });
    expect((await bobApi.Projects.show(created.id)).id).toBe(created.id);
    await api.ProjectMembers.remove(created.id, bob.id);
    await expect(bobApi.Projects.show(created.id)).rejects.toMatchObject({ cause: { response: { status: 404 } } });

    // getAll follows Link headers across pages.
    for (let i = 0; i < 3; i++) await api.Projects.create({ name: `more-${i}` });
    const paged = await api.Projects.all({ owned: true, perPage: 2, orderBy: 'id', sort: 'asc' });
    expect(paged.map((p) => p.name)).toEqual(['Beaker', 'more-0', 'more-1', 'more-2']);

    await api.Projects.remove(created.id);
    await expect(api.Projects.show(created.id)).rejects.toMatchObject({ cause: { response: { status: 404 } } });
  });
  it('forks, lists forks, and removes and restores the fork relation', async () => {
    const api = new Gitlab({ host: s.url, token: alice.token });
    const up = await api.Projects.create({ name: 'Beaker Up', path: 'beaker-up', initializeWithReadme: true, visibility: 'public' });
    const bobApi = new Gitlab({ host: s.url, token: bob.token });
    const fork = await bobApi.Projects.fork(up.id, { path: 'beaker-fork', name: 'Beaker Fork' });
    expect(fork.path_with_namespace).toBe('bob/beaker-fork');
    expect((fork as any).forked_from_project.id).toBe(up.id);
    const forks = await api.Projects.allForks(up.id);
    expect(forks.map((p) => p.id)).toEqual([fork.id]);
    expect((await api.Projects.show(up.id)).forks_count).toBe(1);
    await bobApi.Projects.removeForkRelationship(fork.id);
    expect((await bobApi.Projects.show(fork.id)) as any).not.toHaveProperty('forked_from_project');
    expect(await api.Projects.allForks(up.id)).toEqual([]);
    await bobApi.Projects.createForkRelationship(fork.id, up.id);
    expect(((await bobApi.Projects.show(fork.id)) as any).forked_from_project.id).toBe(up.id);
    const mr = await bobApi.MergeRequests.create(fork.id, 'main', 'main', 'same branch, two projects', { targetProjectId: up.id });
    expect([mr.project_id, mr.source_project_id]).toEqual([up.id, fork.id]);
  });
});

// @gitbeaker/rest as CI tools use it: CI/CD variables through ProjectVariables, GroupVariables and
// InstanceLevelCICDVariables (camelCase options sent as snake_case JSON, the edit's filter in the
// body, show's and remove's filter in the query string, every page walked through Link), and
// DeployTokens for projects, groups and the instance.
import { Gitlab } from '@gitbeaker/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
let api: InstanceType<typeof Gitlab>;
let projectId: number;
let groupId: number;

beforeAll(async () => {
  s = await startServer();
  api = new Gitlab({ host: s.url, token: s.rootToken });
  const group = await api.Groups.create('Beaker Vars', 'beaker-vars');
  groupId = group.id;
  projectId = (await api.Projects.create({ name: 'beaker-app', namespaceId: groupId })).id;
});
afterAll(async () => {
  await s?.close();
});

describe('@gitbeaker/rest CI tooling', () => {
  it('ProjectVariables: create, all (every page), show, edit, remove, with environment scopes', async () => {
    const created = await api.ProjectVariables.create(projectId, 'DEPLOY_TOKEN', 'deploy-secret-1', { masked: true, protected: true, variableType: 'env_var' });
    expect(created).toMatchObject({ key: 'DEPLOY_TOKEN', value: 'deploy-secret-1', masked: true, protected: true, environment_scope: '*' });
    for (let i = 0; i < 23; i++) await api.ProjectVariables.create(projectId, `V_${i}`, `${i}`);
    expect(await api.ProjectVariables.all(projectId, { perPage: 10 })).toHaveLength(24);
    await api.ProjectVariables.create(projectId, 'URL', 'prod', { environmentScope: 'production', description: 'Production URL' });
    await api.ProjectVariables.create(projectId, 'URL', 'stage', { environmentScope: 'staging' });
    await expect(api.ProjectVariables.show(projectId, 'URL')).rejects.toMatchObject({ cause: { response: { status: 409 } } });
    const shown = await api.ProjectVariables.show(projectId, 'URL', { filter: { environment_scope: 'production' } });
    expect(shown).toMatchObject({ value: 'prod', description: 'Production URL', environment_scope: 'production' });
    const edited = await api.ProjectVariables.edit(projectId, 'URL', 'stage-2', { filter: { environment_scope: 'staging' } });
    expect(edited).toMatchObject({ value: 'stage-2', environment_scope: 'staging' });
    await api.ProjectVariables.remove(projectId, 'URL', { filter: { environment_scope: 'production' } });
    const urls = (await api.ProjectVariables.all(projectId)).filter((v) => v.key === 'URL');
    expect(urls.map((v) => [v.environment_scope, v.value])).toEqual([['staging', 'stage-2']]);
  });

  it('GroupVariables and InstanceLevelCICDVariables', async () => {
    const g = await api.GroupVariables.create(groupId, 'GROUP_KEY', 'group-value', { variableType: 'file' });
    expect(g).toMatchObject({ key: 'GROUP_KEY', variable_type: 'file', hidden: false });
    expect((await api.GroupVariables.edit(groupId, 'GROUP_KEY', 'group-value-2')).value).toBe('group-value-2');
    expect((await api.GroupVariables.all(groupId)).map((v) => v.key)).toEqual(['GROUP_KEY']);
    await api.GroupVariables.remove(groupId, 'GROUP_KEY');
    expect(await api.GroupVariables.all(groupId)).toEqual([]);

    const i = await api.InstanceLevelCICDVariables.create('REGISTRY', 'registry.local', { protected: true });
    expect(i).toEqual({ variable_type: 'env_var', key: 'REGISTRY', value: 'registry.local', protected: true, masked: false, raw: false, description: null });
    expect((await api.InstanceLevelCICDVariables.edit('REGISTRY', 'registry.internal')).value).toBe('registry.internal');
    expect((await api.InstanceLevelCICDVariables.show('REGISTRY')).value).toBe('registry.internal');
    expect((await api.InstanceLevelCICDVariables.all()).map((v) => v.key)).toEqual(['REGISTRY']);
  });

  it('DeployTokens: create for a project and a group, all in three scopes, remove', async () => {
    const p = await api.DeployTokens.create('ci', ['read_repository'], { projectId, expires_at: '2099-01-01T00:00:00Z' } as never);
    expect(p).toMatchObject({ name: 'ci', scopes: ['read_repository'], expires_at: '2099-01-01T00:00:00.000Z', revoked: false, expired: false });
    expect(String(p.token)).toMatch(/^gldt-/);
    const g = await api.DeployTokens.create('group', ['read_repository', 'read_package_registry'], { groupId, username: 'beaker-bot' } as never);
    expect(g.username).toBe('beaker-bot');
    expect((await api.DeployTokens.all({ projectId })).map((t) => t.name)).toEqual(['ci']);
    expect((await api.DeployTokens.all({ groupId })).map((t) => t.name)).toEqual(['group']);
    expect((await api.DeployTokens.all()).map((t) => t.name)).toEqual(['ci', 'group']);
    await api.DeployTokens.remove(p.id as number, { projectId });
    expect(await api.DeployTokens.all({ projectId })).toEqual([]);
  });
});

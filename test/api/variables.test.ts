// CI/CD variables: project (Maintainers), group (Owners) and instance (administrators) variables,
// GitLab's entity and field order, validations and their messages, environment scopes with
// filter[environment_scope] and the 409 for ambiguous keys, masked and hidden values, limits, values
// encrypted at rest, and variables going with their project or group.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { addMember, closeServer, createProject } from './mr-helpers.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let alice: U; // the project's and group's creator (Maintainer of the project, Owner of the group)
let dev: U;
let maint: U;
let outsider: U;
let project: { id: number; path_with_namespace: string };
let group: { id: number; full_path: string };

beforeAll(async () => {
  s = await startServer();
  alice = await s.createUser('valice');
  dev = await s.createUser('vdev');
  maint = await s.createUser('vmaint');
  outsider = await s.createUser('voutsider');
  project = await createProject(s, 'vars', { token: alice.token });
  await addMember(s, project.id, dev.id, 30);
  await addMember(s, project.id, maint.id, 40);
  group = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Var Group', path: 'var-group' } })).body;
  const m = await s.request('POST', `/groups/${group.id}/members`, { token: alice.token, json: { user_id: maint.id, access_level: 40 } });
  expect(m.status).toBe(201);
}, 60_000);

afterAll(async () => closeServer(s));

const pv = (path = '') => `/projects/${project.id}/variables${path}`;
const gv = (path = '') => `/groups/${group.id}/variables${path}`;

describe('project variables', () => {
  it('creates a variable with the defaults, in GitLab field order, and reads it back', async () => {
    const r = await s.request('POST', pv(), { token: maint.token, json: { key: 'DEPLOY_TOKEN', value: 'secret-value-1' } });
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.text).toBe(
      '{"variable_type":"env_var","key":"DEPLOY_TOKEN","value":"secret-value-1","hidden":false,"protected":false,"masked":false,"raw":false,"environment_scope":"*","description":null}',
    );
    const got = await s.request('GET', pv('/DEPLOY_TOKEN'), { token: alice.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(r.body);
    // Keys are case-sensitive.
    expect((await s.request('GET', pv('/deploy_token'), { token: alice.token })).body).toEqual({ message: '404 Variable Not Found' });
  });

  it('takes every attribute, as a form too, and strips the key', async () => {
    const r = await s.request('POST', pv(), {
      token: maint.token,
      form: { key: '  FILE_VAR ', value: 'line one\nline two', variable_type: 'file', protected: 'true', raw: '1', environment_scope: 'production', description: 'A file' },
    });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      variable_type: 'file',
      key: 'FILE_VAR',
      value: 'line one\nline two',
      hidden: false,
      protected: true,
      masked: false,
      raw: true,
      environment_scope: 'production',
      description: 'A file',
    });
  });

  it('lists the variables oldest first with offset pagination', async () => {
    const r = await s.request('GET', pv(), { token: maint.token, query: { per_page: 1 } });
    expect(r.status).toBe(200);
    expect(r.body.map((v: any) => v.key)).toEqual(['DEPLOY_TOKEN']);
    expect(r.headers.get('x-total')).toBe('2');
    expect(r.headers.get('x-next-page')).toBe('2');
    expect(r.headers.get('link')).toContain('rel="next"');
    const all = await s.request('GET', pv(), { token: maint.token });
    expect(all.body.map((v: any) => v.key)).toEqual(['DEPLOY_TOKEN', 'FILE_VAR']);
  });

  it('is for Maintainers: 401 without a token, 403 for Developers, 404 for outsiders of a private project', async () => {
    expect((await s.request('GET', pv(), { token: null })).body).toEqual({ message: '401 Unauthorized' });
    for (const [method, path] of [['GET', pv()], ['GET', pv('/DEPLOY_TOKEN')], ['POST', pv()], ['PUT', pv('/DEPLOY_TOKEN')], ['DELETE', pv('/DEPLOY_TOKEN')]] as const) {
      const json = method === 'GET' ? undefined : { key: 'X', value: 'y' };
      const r = await s.request(method, path, { token: dev.token, json });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { message: '403 Forbidden' }]);
      const o = await s.request(method, path, { token: outsider.token, json });
      expect(o.status).toBe(404);
      expect(o.body).toEqual({ message: '404 Project Not Found' });
    }
    // Administrators are allowed; the full path works as the id.
    const byPath = await s.request('GET', `/projects/${encodeURIComponent(project.path_with_namespace)}/variables/DEPLOY_TOKEN`);
    expect(byPath.body.value).toBe('secret-value-1');
  });

  it("refuses wrong input with GitLab's messages and changes nothing", async () => {
    const cases: Array<[Record<string, unknown>, unknown]> = [
      [{}, { message: '400 Bad request - "key" not given' }],
      [{ key: 'A' }, { message: '400 Bad request - "value" not given' }],
      [{ key: 'A', value: 'x', variable_type: 'secret' }, { error: 'variable_type does not have a valid value' }],
      [{ key: 'A', value: 'x', protected: 'maybe' }, { error: 'protected is invalid' }],
      [{ key: 'BAD-KEY', value: 'x' }, { message: { key: ["can contain only letters, digits and '_'."] } }],
      [{ key: '', value: 'x' }, { message: { key: ["can't be blank", "can contain only letters, digits and '_'."] } }],
      [{ key: 'K'.repeat(256), value: 'x' }, { message: { key: ['is too long (maximum is 255 characters)'] } }],
      [{ key: 'M', value: 'short', masked: true }, { message: { value: ['is invalid'] } }],
      [{ key: 'M', value: 'has a space', masked: true }, { message: { value: ['is invalid'] } }],
      [{ key: 'M', value: 'with$dollar', masked: true }, { message: { value: ['is invalid'] } }],
      [{ key: 'E', value: 'x', environment_scope: 'prod!' }, { message: { environment_scope: ["can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces"] } }],
      [{ key: 'D', value: 'x', description: 'd'.repeat(256) }, { message: { description: ['is too long (maximum is 255 characters)'] } }],
      [{ key: 'DEPLOY_TOKEN', value: 'again' }, { message: { key: ['(DEPLOY_TOKEN) has already been taken'] } }],
      [{ key: 'F', value: 'x', filter: 'nope' }, null],
    ];
    for (const [json, body] of cases) {
      const r = await s.request('POST', pv(), { token: maint.token, json });
      if (body === null) {
        // A stray filter on creation is not declared and is ignored.
        expect(r.status).toBe(201);
        await s.request('DELETE', pv('/F'), { token: maint.token });
        continue;
      }
      expect([json, r.status, r.body]).toEqual([json, 400, body]);
    }
    const all = await s.request('GET', pv(), { token: maint.token });
    expect(all.body.map((v: any) => v.key)).toEqual(['DEPLOY_TOKEN', 'FILE_VAR']);
    expect((await s.request('GET', pv('/DEPLOY_TOKEN'), { token: maint.token })).body.value).toBe('secret-value-1');
  });

  it('masks values GitLab can mask: 8+ characters of its alphabet, anything but whitespace when raw', async () => {
    const ok = await s.request('POST', pv(), { token: maint.token, json: { key: 'MASKED', value: 'abc+/=@:.~-_12', masked: true } });
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ masked: true, value: 'abc+/=@:.~-_12' });
    const raw = await s.request('POST', pv(), { token: maint.token, json: { key: 'MASKED_RAW', value: 'pa$$w0rd!{}', masked: true, raw: true } });
    expect(raw.status).toBe(201);
    // Turning raw off makes the value unmaskable: refused, nothing changed.
    const off = await s.request('PUT', pv('/MASKED_RAW'), { token: maint.token, json: { raw: false } });
    expect(off.body).toEqual({ message: { value: ['is invalid'] } });
    expect((await s.request('GET', pv('/MASKED_RAW'), { token: maint.token })).body.raw).toBe(true);
  });

  it('hides a variable made masked_and_hidden: its value is never shown again and it stays hidden', async () => {
    const r = await s.request('POST', pv(), { token: maint.token, json: { key: 'HIDDEN', value: 'hidden-value-123', masked_and_hidden: true } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ key: 'HIDDEN', value: null, hidden: true, masked: true });
    expect((await s.request('GET', pv('/HIDDEN'), { token: maint.token })).body.value).toBeNull();
    expect((await s.request('GET', pv(), { token: maint.token })).body.find((v: any) => v.key === 'HIDDEN').value).toBeNull();
    const unmask = await s.request('PUT', pv('/HIDDEN'), { token: maint.token, json: { masked: false } });
    expect(unmask.status).toBe(400);
    expect(unmask.body).toEqual({ message: { base: ['The visibility setting cannot be changed for masked and hidden variables.'] } });
    const edit = await s.request('PUT', pv('/HIDDEN'), { token: maint.token, json: { value: 'new-hidden-value', description: 'rotated', masked: true } });
    expect(edit.status).toBe(200);
    expect(edit.body).toMatchObject({ value: null, hidden: true, masked: true, description: 'rotated' });
    // masked_and_hidden is not an update parameter.
    const shown = await s.request('POST', pv(), { token: maint.token, json: { key: 'SHOWN', value: 'visible-value', masked_and_hidden: false } });
    expect(shown.body).toMatchObject({ value: 'visible-value', hidden: false, masked: false });
    await s.request('PUT', pv('/SHOWN'), { token: maint.token, json: { masked_and_hidden: true } });
    expect((await s.request('GET', pv('/SHOWN'), { token: maint.token })).body.hidden).toBe(false);
  });

  it('updates only what is sent and never renames', async () => {
    const r = await s.request('PUT', pv('/DEPLOY_TOKEN'), { token: maint.token, json: { key: 'OTHER', value: 'rotated-1', protected: true } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ key: 'DEPLOY_TOKEN', value: 'rotated-1', protected: true, masked: false, environment_scope: '*', description: null });
    const d = await s.request('PUT', pv('/DEPLOY_TOKEN'), { token: maint.token, form: { description: 'Deploys' } });
    expect(d.body).toMatchObject({ value: 'rotated-1', protected: true, description: 'Deploys' });
    expect((await s.request('GET', pv('/OTHER'), { token: maint.token })).status).toBe(404);
    expect((await s.request('PUT', pv('/NOPE'), { token: maint.token, json: { value: 'x' } })).body).toEqual({ message: '404 Variable Not Found' });
  });

  it('keeps one key per environment scope; filter[environment_scope] picks one, 409 when ambiguous', async () => {
    for (const scope of ['*', 'staging', 'review/*']) {
      const r = await s.request('POST', pv(), { token: maint.token, json: { key: 'API_URL', value: `url-${scope}`, environment_scope: scope } });
      expect(r.status).toBe(201);
    }
    const dup = await s.request('POST', pv(), { token: maint.token, json: { key: 'API_URL', value: 'x', environment_scope: 'staging' } });
    expect(dup.body).toEqual({ message: { key: ['(API_URL) has already been taken'] } });
    const ambiguous = { message: "There are multiple variables with provided parameters. Please use 'filter[environment_scope]'" };
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const r = await s.request(method, pv('/API_URL'), { token: maint.token, json: method === 'PUT' ? { value: 'z' } : undefined });
      expect([method, r.status, r.body]).toEqual([method, 409, ambiguous]);
    }
    // python-gitlab and gitbeaker send the filter in the query string; gitbeaker's edit in the JSON body.
    const got = await s.request('GET', pv('/API_URL'), { token: maint.token, query: { 'filter[environment_scope]': 'review/*' } });
    expect(got.body).toMatchObject({ value: 'url-review/*', environment_scope: 'review/*' });
    const put = await s.request('PUT', pv('/API_URL'), { token: maint.token, json: { value: 'new-staging', filter: { environment_scope: 'staging' } } });
    expect(put.body).toMatchObject({ value: 'new-staging', environment_scope: 'staging' });
    const moved = await s.request('PUT', pv('/API_URL'), { token: maint.token, query: { 'filter[environment_scope]': 'staging' }, json: { environment_scope: 'review/*' } });
    expect(moved.body).toEqual({ message: { key: ['(API_URL) has already been taken'] } });
    expect((await s.request('GET', pv('/API_URL'), { token: maint.token, query: { 'filter[environment_scope]': 'production' } })).body).toEqual({ message: '404 Variable Not Found' });
    // A blank filter is no filter.
    expect((await s.request('GET', pv('/API_URL'), { token: maint.token, query: { 'filter[environment_scope]': '' } })).status).toBe(409);
    expect((await s.request('GET', pv('/API_URL'), { token: maint.token, query: { filter: 'staging' } })).body).toEqual({ error: 'filter is invalid' });
    const del = await s.request('DELETE', pv('/API_URL'), { token: maint.token, query: { 'filter[environment_scope]': 'staging' } });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const left = (await s.request('GET', pv(), { token: maint.token })).body.filter((v: any) => v.key === 'API_URL').map((v: any) => v.environment_scope);
    expect(left).toEqual(['*', 'review/*']);
  });

  it('counts characters as GitLab does, strips only ASCII whitespace, bounds values, and reads a .json suffix', async () => {
    const emoji = await s.request('POST', pv(), { token: maint.token, json: { key: 'EMOJI', value: 'x', description: '😀'.repeat(200) } });
    expect(emoji.status).toBe(201);
    const nbsp = await s.request('POST', pv(), { token: maint.token, json: { key: '\u00a0NBSP', value: 'x' } });
    expect(nbsp.body).toEqual({ message: { key: ["can contain only letters, digits and '_'."] } });
    const blankScope = await s.request('POST', pv(), { token: maint.token, json: { key: 'BLANK', value: 'x', environment_scope: ' ' } });
    expect(blankScope.body).toEqual({ message: { environment_scope: ["can't be blank", "can contain only letters, digits, '-', '_', '/', '$', '{', '}', '.', '*' and spaces"] } });
    const big = await s.request('POST', pv(), { token: maint.token, json: { key: 'BIG', value: 'x'.repeat(262_145) } });
    expect(big.body).toEqual({ message: { value: ['is too long (maximum is 262144 characters)'] } });
    expect((await s.request('GET', pv('/EMOJI.json'), { token: maint.token })).body.key).toBe('EMOJI');
    expect((await s.request('DELETE', pv('/EMOJI'), { token: maint.token })).status).toBe(204);
  });

  it('is refused to everyone when CI/CD or the repository is turned off', async () => {
    const off = await createProject(s, 'vars-off', { token: alice.token });
    await s.request('POST', `/projects/${off.id}/variables`, { token: alice.token, json: { key: 'A', value: 'x' } });
    expect((await s.request('PUT', `/projects/${off.id}`, { token: alice.token, json: { builds_access_level: 'disabled' } })).status).toBe(200);
    expect((await s.request('GET', `/projects/${off.id}/variables`)).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('POST', `/projects/${off.id}/variables`, { token: alice.token, json: { key: 'B', value: 'x' } })).status).toBe(403);
  });

  it('keeps values encrypted at rest', async () => {
    const rows = await s.app.lw.db.selectFrom('ci_variables').selectAll().where('source_type', '=', 'Project').execute();
    expect(rows.length).toBeGreaterThan(3);
    for (const row of rows) {
      expect(row.encrypted_value).toMatch(/^v1:/);
      expect(row.encrypted_value).not.toContain('rotated-1');
      expect(row.encrypted_value).not.toContain('hidden');
    }
  });

  it('stops at the project limit of 8,000 variables', async () => {
    const other = await createProject(s, 'vars-limit', { token: alice.token });
    const now = new Date().toISOString();
    const rows = Array.from({ length: 7999 }, (_, i) => ({
      source_type: 'Project',
      source_id: other.id,
      key: `V${i}`,
      encrypted_value: 'v1:x',
      variable_type: 'env_var',
      protected: 0,
      masked: 0,
      hidden: 0,
      raw: 0,
      environment_scope: '*',
      description: null,
      created_at: now,
      updated_at: now,
    }));
    for (let i = 0; i < rows.length; i += 500) await s.app.lw.db.insertInto('ci_variables').values(rows.slice(i, i + 500)).execute();
    await s.settle();
    expect((await s.request('POST', `/projects/${other.id}/variables`, { json: { key: 'LAST', value: 'x' } })).status).toBe(201);
    const over = await s.request('POST', `/projects/${other.id}/variables`, { json: { key: 'ONE_MORE', value: 'x' } });
    expect(over.status).toBe(400);
    expect(over.body).toEqual({ message: { base: ['Maximum number of project ci variables (8000) exceeded'] } });
    // Deleting the project takes its variables along.
    expect((await s.request('DELETE', `/projects/${other.id}`)).status).toBe(202);
    const left = await s.app.lw.db.selectFrom('ci_variables').select('id').where('source_type', '=', 'Project').where('source_id', '=', other.id).execute();
    expect(left).toEqual([]);
  }, 60_000);

  it('shows null for a value sealed under another instance secret, and refuses to keep it without a new value', async () => {
    await s.request('POST', pv(), { token: maint.token, json: { key: 'SEALED', value: 'sealed-value' } });
    await s.app.lw.db.updateTable('ci_variables').set({ encrypted_value: 'v1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' }).where('key', '=', 'SEALED').execute();
    await s.settle();
    expect((await s.request('GET', pv('/SEALED'), { token: maint.token })).body.value).toBeNull();
    const keep = await s.request('PUT', pv('/SEALED'), { token: maint.token, json: { description: 'x' } });
    expect(keep.status).toBe(422);
    const fresh = await s.request('PUT', pv('/SEALED'), { token: maint.token, json: { value: 'resealed' } });
    expect(fresh.body.value).toBe('resealed');
  });
});

describe('group variables', () => {
  it('are for Owners: a Maintainer gets 403, a non-member of a private group 404', async () => {
    expect((await s.request('GET', gv(), { token: maint.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('POST', gv(), { token: maint.token, json: { key: 'G', value: 'x' } })).status).toBe(403);
    expect((await s.request('GET', gv(), { token: outsider.token })).body).toEqual({ message: '404 Group Not Found' });
    expect((await s.request('GET', gv(), { token: null })).status).toBe(401);
  });

  it('create, read, list, update and delete with GitLab entity and 404 wording', async () => {
    const r = await s.request('POST', gv(), { token: alice.token, json: { key: 'GROUP_TOKEN', value: 'group-secret', protected: true, description: 'For all projects' } });
    expect(r.status).toBe(201);
    expect(Object.keys(r.body)).toEqual(['variable_type', 'key', 'value', 'hidden', 'protected', 'masked', 'raw', 'environment_scope', 'description']);
    expect(r.body).toMatchObject({ key: 'GROUP_TOKEN', value: 'group-secret', protected: true, environment_scope: '*' });
    expect((await s.request('GET', `/groups/${encodeURIComponent(group.full_path)}/variables/GROUP_TOKEN`, { token: alice.token })).body.value).toBe('group-secret');
    expect((await s.request('GET', gv(), { token: alice.token })).body.map((v: any) => v.key)).toEqual(['GROUP_TOKEN']);
    expect((await s.request('PUT', gv('/GROUP_TOKEN'), { token: alice.token, json: { value: 'group-secret-2' } })).body.value).toBe('group-secret-2');
    expect((await s.request('GET', gv('/MISSING'), { token: alice.token })).body).toEqual({ message: '404 GroupVariable Not Found' });
    const stale = await s.request('DELETE', gv('/GROUP_TOKEN'), { token: alice.token, headers: { 'If-Unmodified-Since': 'Thu, 01 Jan 2015 00:00:00 GMT' } });
    expect(stale.status).toBe(412);
    expect((await s.request('DELETE', gv('/GROUP_TOKEN'), { token: alice.token })).status).toBe(204);
    expect((await s.request('GET', gv('/GROUP_TOKEN'), { token: alice.token })).status).toBe(404);
  });

  it('are refused while the group or an ancestor is archived', async () => {
    const top = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Arch', path: 'arch-group' } })).body;
    const child = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Child', path: 'child', parent_id: top.id } })).body;
    expect((await s.request('POST', `/groups/${child.id}/variables`, { token: alice.token, json: { key: 'C', value: 'x' } })).status).toBe(201);
    expect((await s.request('POST', `/groups/${top.id}/archive`, { token: alice.token })).status).toBe(201);
    expect((await s.request('GET', `/groups/${child.id}/variables`, { token: alice.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('POST', `/groups/${top.id}/variables`, { token: alice.token, json: { key: 'D', value: 'x' } })).status).toBe(403);
  });

  it('ignores environment_scope on the Free plan (a Premium feature), as GitLab does', async () => {
    const r = await s.request('POST', gv(), { token: alice.token, json: { key: 'SCOPED', value: 'x', environment_scope: 'production' } });
    expect(r.status).toBe(201);
    expect(r.body.environment_scope).toBe('*');
    const again = await s.request('POST', gv(), { token: alice.token, json: { key: 'SCOPED', value: 'y', environment_scope: 'staging' } });
    expect(again.body).toEqual({ message: { key: ['(SCOPED) has already been taken'] } });
  });

  it('go with their group', async () => {
    const g = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Gone', path: 'gone-group' } })).body;
    const sub = (await s.request('POST', '/groups', { token: alice.token, json: { name: 'Sub', path: 'sub', parent_id: g.id } })).body;
    await s.request('POST', `/groups/${g.id}/variables`, { token: alice.token, json: { key: 'A', value: 'x' } });
    await s.request('POST', `/groups/${sub.id}/variables`, { token: alice.token, json: { key: 'B', value: 'y' } });
    const del = await s.request('DELETE', `/groups/${g.id}`, { token: alice.token });
    expect(del.status).toBe(202);
    const left = await s.app.lw.db.selectFrom('ci_variables').select('id').where('source_type', '=', 'Namespace').where('source_id', 'in', [g.id, sub.id]).execute();
    expect(left).toEqual([]);
  });
});

describe('group variables on Premium', () => {
  let p: TestServer;
  let owner: U;
  let gid: number;
  beforeAll(async () => {
    p = await startServer({ LABWRIGHT_PLAN: 'premium' });
    owner = await p.createUser('powner');
    gid = (await p.request('POST', '/groups', { token: owner.token, json: { name: 'P', path: 'p-group' } })).body.id;
  }, 60_000);
  afterAll(async () => closeServer(p));

  it('scopes variables; PUT without a filter takes the first of the key and a filter that matches nothing falls back to it', async () => {
    for (const scope of ['production', 'staging']) {
      const r = await p.request('POST', `/groups/${gid}/variables`, { token: owner.token, json: { key: 'URL', value: scope, environment_scope: scope } });
      expect(r.body.environment_scope).toBe(scope);
    }
    expect((await p.request('GET', `/groups/${gid}/variables/URL`, { token: owner.token })).status).toBe(409);
    expect((await p.request('GET', `/groups/${gid}/variables/URL`, { token: owner.token, query: { 'filter[environment_scope]': 'staging' } })).body.value).toBe('staging');
    const first = await p.request('PUT', `/groups/${gid}/variables/URL`, { token: owner.token, json: { value: 'prod-2' } });
    expect(first.body).toMatchObject({ environment_scope: 'production', value: 'prod-2' });
    const fallback = await p.request('PUT', `/groups/${gid}/variables/URL`, { token: owner.token, json: { value: 'prod-3', filter: { environment_scope: 'nowhere' } } });
    expect(fallback.body).toMatchObject({ environment_scope: 'production', value: 'prod-3' });
    expect((await p.request('DELETE', `/groups/${gid}/variables/URL`, { token: owner.token })).status).toBe(409);
  });
});

describe('instance variables', () => {
  it('are for administrators, without hidden or environment_scope, unique by key', async () => {
    expect((await s.request('GET', '/admin/ci/variables', { token: alice.token })).body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('GET', '/admin/ci/variables', { token: null })).status).toBe(401);
    const r = await s.request('POST', '/admin/ci/variables', { json: { key: 'REGISTRY', value: 'registry.example.com', environment_scope: 'production', masked_and_hidden: true } });
    expect(r.status).toBe(201);
    expect(r.text).toBe('{"variable_type":"env_var","key":"REGISTRY","value":"registry.example.com","protected":false,"masked":false,"raw":false,"description":null}');
    expect((await s.request('POST', '/admin/ci/variables', { json: { key: 'REGISTRY', value: 'x' } })).body).toEqual({ message: { key: ['(REGISTRY) has already been taken'] } });
    const long = await s.request('POST', '/admin/ci/variables', { json: { key: 'LONG', value: 'x'.repeat(10_001) } });
    expect(long.body).toEqual({ message: { value: ['The value of the provided variable exceeds the 10000 character limit'] } });
    expect((await s.request('PUT', '/admin/ci/variables/REGISTRY', { json: { masked: true, value: 'registry.internal' } })).body).toMatchObject({ masked: true, value: 'registry.internal' });
    expect((await s.request('GET', '/admin/ci/variables/REGISTRY')).body.value).toBe('registry.internal');
    expect((await s.request('GET', '/admin/ci/variables/NOPE')).body).toEqual({ message: '404 InstanceVariable Not Found' });
    expect((await s.request('DELETE', '/admin/ci/variables/REGISTRY')).status).toBe(204);
    expect((await s.request('GET', '/admin/ci/variables')).body).toEqual([]);
  });

  it('stops at 25', async () => {
    for (let i = 0; i < 25; i++) expect((await s.request('POST', '/admin/ci/variables', { json: { key: `I${i}`, value: 'x' } })).status).toBe(201);
    const over = await s.request('POST', '/admin/ci/variables', { json: { key: 'I25', value: 'x' } });
    expect(over.body).toEqual({ message: { base: ['Maximum number of ci instance level variables (25) exceeded'] } });
    for (let i = 0; i < 25; i++) await s.request('DELETE', `/admin/ci/variables/I${i}`);
  });
});

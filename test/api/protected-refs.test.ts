// Protected branches and tags through the API (GitLab's protected_branches and protected_tags
// APIs), and what they change for the API's writers: commits and files, branch creation and
// deletion, tags, merging, the branch entity, and the default branch protected when it appears.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';

let s: TestServer;
type U = { id: number; username: string; token: string };
let owner: U;
let maint: U;
let dev: U;
let outsider: U;
let pid: number;

async function addMember(projectId: number, userId: number, level: number) {
  const r = await s.request('POST', `/projects/${projectId}/members`, { token: owner.token, json: { user_id: userId, access_level: level } });
  expect(r.status).toBe(201);
}

async function commit(token: string, branch: string, file: string, extra: Record<string, unknown> = {}) {
  return s.request('POST', `/projects/${pid}/repository/commits`, {
    token,
    json: { branch, commit_message: `edit ${file}`, actions: [{ action: 'create', file_path: file, content: file }], ...extra },
  });
}

beforeAll(async () => {
  s = await startServer();
  owner = await s.createUser('pbowner');
  maint = await s.createUser('pbmaint');
  dev = await s.createUser('pbdev');
  outsider = await s.createUser('pbout');
  const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'guarded', initialize_with_readme: true, visibility: 'private' } });
  expect(p.status).toBe(201);
  pid = p.body.id;
  await addMember(pid, maint.id, 40);
  await addMember(pid, dev.id, 30);
});

afterAll(async () => {
  await s?.close();
});

describe('the default branch', () => {
  it('is protected when it appears, as GitLab (Maintainers push and merge, no force push)', async () => {
    const list = await s.request('GET', `/projects/${pid}/protected_branches`, { token: dev.token });
    expect(list.status).toBe(200);
    expect(list.body).toHaveLength(1);
    const rule = list.body[0];
    expect(Object.keys(rule)).toEqual(['id', 'name', 'push_access_levels', 'merge_access_levels', 'allow_force_push', 'unprotect_access_levels', 'code_owner_approval_required', 'inherited']);
    expect(rule).toMatchObject({ name: 'main', allow_force_push: false, unprotect_access_levels: [], code_owner_approval_required: false, inherited: false });
    expect(rule.push_access_levels).toEqual([{ id: expect.any(Number), access_level: 40, access_level_description: 'Maintainers', user_id: null, group_id: null }]);
    expect(rule.merge_access_levels).toEqual([{ id: expect.any(Number), access_level: 40, access_level_description: 'Maintainers', user_id: null, group_id: null }]);
  });

  it('shows in the branch entity: protected, and can_push per caller', async () => {
    const asDev = await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: dev.token });
    expect(asDev.body).toMatchObject({ name: 'main', protected: true, developers_can_push: false, developers_can_merge: false, can_push: false, default: true });
    const asMaint = await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: maint.token });
    expect(asMaint.body).toMatchObject({ protected: true, can_push: true });
  });

  it('refuses a Developer\'s commits: 403 from the commits API, 400 from the files API; nothing lands', async () => {
    const before = await s.request('GET', `/projects/${pid}/repository/branches/main`);
    const c = await commit(dev.token, 'main', 'dev.txt');
    expect(c.status).toBe(403);
    expect(c.body).toEqual({ message: '403 Forbidden - You are not allowed to push into this branch' });
    const f = await s.request('POST', `/projects/${pid}/repository/files/dev2.txt`, { token: dev.token, json: { branch: 'main', commit_message: 'x', content: 'x' } });
    expect(f.status).toBe(400);
    expect(f.body).toEqual({ message: 'You are not allowed to push into this branch' });
    const after = await s.request('GET', `/projects/${pid}/repository/branches/main`);
    expect(after.body.commit.id).toBe(before.body.commit.id);
    // A Maintainer commits; a Developer commits to a new branch of their own.
    expect((await commit(maint.token, 'main', 'maint.txt')).status).toBe(201);
    expect((await commit(dev.token, 'dev-work', 'dev.txt', { start_branch: 'main' })).status).toBe(201);
  });

  it('lets only those who may merge into it merge a merge request (user.can_merge, 401 on merge)', async () => {
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: dev.token, json: { source_branch: 'dev-work', target_branch: 'main', title: 'dev work' } });
    expect(mr.status).toBe(201);
    const iid = mr.body.iid;
    const seen = await s.request('GET', `/projects/${pid}/merge_requests/${iid}`, { token: dev.token });
    expect(seen.body.user).toEqual({ can_merge: false });
    const refused = await s.request('PUT', `/projects/${pid}/merge_requests/${iid}/merge`, { token: dev.token });
    expect(refused.status).toBe(401);
    // Developers may merge once the rule says so (push still Maintainers).
    await s.request('DELETE', `/projects/${pid}/protected_branches/main`, { token: maint.token });
    const again = await s.request('POST', `/projects/${pid}/protected_branches`, { token: maint.token, json: { name: 'main', push_access_level: 40, merge_access_level: 30 } });
    expect(again.status).toBe(201);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${iid}`, { token: dev.token })).body.user).toEqual({ can_merge: true });
    const branch = await s.request('GET', `/projects/${pid}/repository/branches/main`, { token: dev.token });
    expect(branch.body).toMatchObject({ developers_can_push: false, developers_can_merge: true, can_push: false });
    const merged = await s.request('PUT', `/projects/${pid}/merge_requests/${iid}/merge`, { token: dev.token, json: { should_remove_source_branch: true } });
    expect(merged.status).toBe(200);
    expect(merged.body.state).toBe('merged');
  });
});

describe('the protected branches API', () => {
  it('creates, finds, searches, updates and deletes rules, wildcards included', async () => {
    const created = await s.request('POST', `/projects/${pid}/protected_branches`, {
      token: maint.token,
      json: { name: 'release/*', push_access_level: 0, merge_access_level: 30, allow_force_push: false },
    });
    expect(created.status).toBe(201);
    expect(created.body.push_access_levels).toEqual([expect.objectContaining({ access_level: 0, access_level_description: 'No one' })]);
    expect(created.body.merge_access_levels).toEqual([expect.objectContaining({ access_level: 30, access_level_description: 'Developers + Maintainers' })]);
    const dup = await s.request('POST', `/projects/${pid}/protected_branches`, { token: maint.token, json: { name: 'release/*' } });
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({ message: "Protected branch 'release/*' already exists" });
    expect(created.body.unprotect_access_levels).toEqual([expect.objectContaining({ access_level: 40, access_level_description: 'Maintainers' })]);
    // code_owner_approval_required is a paid-tier attribute: ignored on the free plan.
    const owners = await s.request('POST', `/projects/${pid}/protected_branches`, { token: maint.token, json: { name: 'owned', code_owner_approval_required: true } });
    expect(owners.body.code_owner_approval_required).toBe(false);
    expect((await s.request('DELETE', `/projects/${pid}/protected_branches/owned`, { token: maint.token })).status).toBe(204);
    const one = await s.request('GET', `/projects/${pid}/protected_branches/${encodeURIComponent('release/*')}`, { token: dev.token });
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(created.body.id);
    const search = await s.request('GET', `/projects/${pid}/protected_branches?search=RELEASE`, { token: dev.token });
    expect(search.body.map((r: { name: string }) => r.name)).toEqual(['release/*']);
    // GitLab's fuzzy match: words shorter than three characters match a whole name only.
    expect((await s.request('GET', `/projects/${pid}/protected_branches?search=ma`, { token: dev.token })).body).toEqual([]);
    expect((await s.request('GET', `/projects/${pid}/protected_branches?search=MAIN`, { token: dev.token })).body.map((r: { name: string }) => r.name)).toEqual(['main']);
    // PATCH: force push, and one more push level (appended).
    const patched = await s.request('PATCH', `/projects/${pid}/protected_branches/${encodeURIComponent('release/*')}`, {
      token: maint.token,
      json: { allow_force_push: true, allowed_to_push: [{ access_level: 40 }] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.allow_force_push).toBe(true);
    expect(patched.body.push_access_levels.map((l: { access_level: number }) => l.access_level)).toEqual([0, 40]);
    const twice = await s.request('PATCH', `/projects/${pid}/protected_branches/${encodeURIComponent('release/*')}`, { token: maint.token, json: { allowed_to_push: [{ access_level: 40 }] } });
    expect(twice.status).toBe(422);
    expect(twice.body).toEqual({ message: ['Push access levels access level has already been taken'] });
    // Removing one level by id.
    const zero = patched.body.push_access_levels.find((l: { access_level: number }) => l.access_level === 0);
    const removed = await s.request('PATCH', `/projects/${pid}/protected_branches/${encodeURIComponent('release/*')}`, { token: maint.token, json: { allowed_to_push: [{ id: zero.id, _destroy: true }] } });
    expect(removed.status).toBe(200);
    expect(removed.body.push_access_levels.map((l: { access_level: number }) => l.access_level)).toEqual([40]);
  });

  it('answers bad input with GitLab\'s 4xx and changes nothing', async () => {
    const path = `/projects/${pid}/protected_branches`;
    const count = async () => (await s.request('GET', path, { token: maint.token })).body.length;
    const n = await count();
    expect((await s.request('POST', path, { token: maint.token, json: {} })).body).toEqual({ message: '400 Bad request - "name" not given' });
    const badLevel = await s.request('POST', path, { token: maint.token, json: { name: 'x', push_access_level: 50 } });
    expect(badLevel.status).toBe(400);
    expect(badLevel.body).toEqual({ error: 'push_access_level does not have a valid value' });
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'x', unprotect_access_level: 0 } })).status).toBe(400);
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'x', allowed_to_push: [{ user_id: dev.id }] } })).status).toBe(400);
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'x', allowed_to_push: 'nope' } })).status).toBe(400);
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'x'.repeat(1025) } })).status).toBe(422);
    const blank = await s.request('POST', path, { token: maint.token, json: { name: '  ' } });
    expect(blank.status).toBe(422);
    expect(blank.body).toEqual({ message: ["Name can't be blank"] });
    const twice = await s.request('POST', path, { token: maint.token, json: { name: 'x', push_access_level: 30, allowed_to_push: [{ access_level: 30 }] } });
    expect(twice.status).toBe(422);
    expect(twice.body).toEqual({ message: ['Push access levels access level has already been taken'] });
    // Parameters are checked before the caller's role; a rule is found before it (404, then 403).
    expect((await s.request('POST', path, { token: dev.token, json: {} })).status).toBe(400);
    expect((await s.request('PATCH', `${path}/nope`, { token: dev.token, json: { allow_force_push: true } })).status).toBe(404);
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'a\u0001b' } })).body).toEqual({ message: ['Name is invalid'] });
    const many = Array.from({ length: 50 }, () => ({ access_level: 40 }));
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'x', allowed_to_push: many } })).body).toEqual({ error: 'allowed_to_push has too many entries' });
    expect((await s.request('PATCH', `${path}/nope`, { token: maint.token, json: { allow_force_push: true } })).body).toEqual({ message: '404 Not found' });
    expect((await s.request('PATCH', `${path}/main`, { token: maint.token, json: { allowed_to_push: [{ id: 999999, access_level: 30 }] } })).status).toBe(404);
    expect((await s.request('DELETE', `${path}/nope`, { token: maint.token })).status).toBe(404);
    expect(await count()).toBe(n);
  });

  it('lets only those its unprotect levels name change or remove a rule', async () => {
    const path = `/projects/${pid}/protected_branches`;
    const r = await s.request('POST', path, { token: maint.token, json: { name: 'admins-only', unprotect_access_level: 60 } });
    expect(r.status).toBe(201);
    expect((await s.request('PATCH', `${path}/admins-only`, { token: maint.token, json: { allow_force_push: true } })).status).toBe(403);
    expect((await s.request('DELETE', `${path}/admins-only`, { token: maint.token })).status).toBe(403);
    expect((await s.request('DELETE', `${path}/admins-only`, { token: s.rootToken })).status).toBe(204);
  });

  it('lets Maintainers write rules and code readers read them', async () => {
    const path = `/projects/${pid}/protected_branches`;
    expect((await s.request('POST', path, { token: dev.token, json: { name: 'mine' } })).status).toBe(403);
    expect((await s.request('DELETE', `${path}/main`, { token: dev.token })).status).toBe(403);
    expect((await s.request('PATCH', `${path}/main`, { token: dev.token, json: { allow_force_push: true } })).status).toBe(403);
    expect((await s.request('GET', path, { token: outsider.token })).status).toBe(404);
    expect((await s.request('GET', path, { token: null })).status).toBe(404);
    expect((await s.request('POST', path, { token: outsider.token, json: { name: 'mine' } })).status).toBe(404);
    // A public project's rules are readable anonymously; writing needs a user.
    const pub = await s.request('POST', '/projects', { token: owner.token, json: { name: 'open', visibility: 'public', initialize_with_readme: true } });
    expect((await s.request('GET', `/projects/${pub.body.id}/protected_branches`, { token: null })).status).toBe(200);
    expect((await s.request('POST', `/projects/${pub.body.id}/protected_branches`, { token: null, json: { name: 'x' } })).status).toBe(401);
  });
});

describe('writers of branches under a rule', () => {
  it('lets a Developer who may only merge create a protected branch from a commit a protected branch holds', async () => {
    // release/* : push 40, merge 30 (set above).
    const fromMain = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'release/1', ref: 'main' } });
    expect(fromMain.status).toBe(201);
    expect(fromMain.body).toMatchObject({ name: 'release/1', protected: true, developers_can_merge: true, can_push: false });
    expect((await commit(dev.token, 'side', 'side.txt', { start_branch: 'main' })).status).toBe(201);
    const fromSide = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'release/2', ref: 'side' } });
    expect(fromSide.status).toBe(400);
    expect(fromSide.body).toEqual({ message: 'You can only use an existing protected branch ref as the basis of a new protected branch.' });
    const hotfix = await s.request('POST', `/projects/${pid}/protected_branches`, { token: maint.token, json: { name: 'hotfix-*' } });
    expect(hotfix.status).toBe(201);
    const denied = await s.request('POST', `/projects/${pid}/repository/branches`, { token: dev.token, json: { branch: 'hotfix-1', ref: 'main' } });
    expect(denied.status).toBe(400);
    expect(denied.body).toEqual({ message: 'You are not allowed to create protected branches on this project.' });
    expect((await s.request('POST', `/projects/${pid}/repository/branches`, { token: maint.token, json: { branch: 'hotfix-1', ref: 'side' } })).status).toBe(201);
  });

  it('lets only Maintainers delete a protected branch, and keeps protected branches among merged ones', async () => {
    const denied = await s.request('DELETE', `/projects/${pid}/repository/branches/hotfix-1`, { token: dev.token });
    expect(denied.status).toBe(400);
    expect(denied.body).toEqual({ message: 'You are not allowed to delete protected branches from this project. Only a project maintainer or owner can delete a protected branch.' });
    expect((await s.request('DELETE', `/projects/${pid}/repository/branches/hotfix-1`, { token: maint.token })).status).toBe(204);
    // release/1 is merged into main (same commit) but protected: it stays.
    expect((await s.request('DELETE', `/projects/${pid}/repository/merged_branches`, { token: maint.token })).status).toBe(202);
    expect((await s.request('GET', `/projects/${pid}/repository/branches/release%2F1`)).status).toBe(200);
  });
});

describe('the legacy branch protect routes', () => {
  it('PUT …/branches/:branch/protect and …/unprotect answer the branch, as GitLab', async () => {
    const made = await s.request('POST', `/projects/${pid}/repository/branches`, { token: maint.token, json: { branch: 'legacy', ref: 'main' } });
    expect(made.status).toBe(201);
    expect((await s.request('PUT', `/projects/${pid}/repository/branches/legacy/protect`, { token: dev.token })).status).toBe(403);
    expect((await s.request('PUT', `/projects/${pid}/repository/branches/nope/protect`, { token: maint.token })).body).toEqual({ message: '404 Branch Not Found' });
    const p1 = await s.request('PUT', `/projects/${pid}/repository/branches/legacy/protect`, { token: maint.token, json: { developers_can_push: true } });
    expect(p1.status).toBe(200);
    expect(p1.body).toMatchObject({ name: 'legacy', protected: true, developers_can_push: true, developers_can_merge: false });
    const p2 = await s.request('PUT', `/projects/${pid}/repository/branches/legacy/protect`, { token: maint.token, json: { developers_can_merge: true } });
    expect(p2.body).toMatchObject({ protected: true, developers_can_push: true, developers_can_merge: true });
    const rule = await s.request('GET', `/projects/${pid}/protected_branches/legacy`, { token: maint.token });
    expect(rule.body.merge_access_levels.map((l: { access_level: number }) => l.access_level)).toEqual([30]);
    const u = await s.request('PUT', `/projects/${pid}/repository/branches/legacy/unprotect`, { token: maint.token });
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ name: 'legacy', protected: false });
    expect((await s.request('GET', `/projects/${pid}/protected_branches/legacy`, { token: maint.token })).status).toBe(404);
  });
});

describe('merging never removes the default branch', () => {
  it('keeps the source branch when it is the default branch, even unprotected', async () => {
    await s.request('DELETE', `/projects/${pid}/protected_branches/main`, { token: maint.token });
    const target = await s.request('POST', `/projects/${pid}/repository/branches`, { token: maint.token, json: { branch: 'downstream', ref: 'main~1' } });
    expect(target.status).toBe(201);
    const mr = await s.request('POST', `/projects/${pid}/merge_requests`, { token: maint.token, json: { source_branch: 'main', target_branch: 'downstream', title: 'main down' } });
    expect(mr.status).toBe(201);
    const merged = await s.request('PUT', `/projects/${pid}/merge_requests/${mr.body.iid}/merge`, { token: maint.token, json: { should_remove_source_branch: true } });
    expect(merged.status).toBe(200);
    expect((await s.request('GET', `/projects/${pid}/repository/branches/main`)).status).toBe(200);
    const again = await s.request('POST', `/projects/${pid}/protected_branches`, { token: maint.token, json: { name: 'main', merge_access_level: 30 } });
    expect(again.status).toBe(201);
  });
});

describe('protected tags', () => {
  it('has its API for Maintainers, and guards tag creation and deletion', async () => {
    const path = `/projects/${pid}/protected_tags`;
    expect((await s.request('GET', path, { token: dev.token })).status).toBe(403);
    const created = await s.request('POST', path, { token: maint.token, json: { name: 'v*', create_access_level: 40 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ name: 'v*', create_access_levels: [{ id: expect.any(Number), access_level: 40, access_level_description: 'Maintainers', user_id: null, group_id: null }] });
    const dup = await s.request('POST', path, { token: maint.token, json: { name: 'v*' } });
    expect(dup.status).toBe(422);
    expect(dup.body).toEqual({ message: ['Name has already been taken'] });
    expect((await s.request('GET', `${path}/v*`, { token: maint.token })).body.name).toBe('v*');
    expect((await s.request('POST', path, { token: maint.token, json: { name: 'x', create_access_level: 20 } })).status).toBe(400);

    const denied = await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'v1.0', ref: 'main' } });
    expect(denied.status).toBe(400);
    expect(denied.body).toEqual({ message: 'You are not allowed to create this tag as it is protected.' });
    expect((await s.request('POST', `/projects/${pid}/repository/tags`, { token: dev.token, json: { tag_name: 'nightly', ref: 'main' } })).status).toBe(201);
    const made = await s.request('POST', `/projects/${pid}/repository/tags`, { token: maint.token, json: { tag_name: 'v1.0', ref: 'main' } });
    expect(made.status).toBe(201);
    expect(made.body.protected).toBe(true);
    expect((await s.request('GET', `/projects/${pid}/repository/tags/nightly`)).body.protected).toBe(false);
    // A release that would make a protected tag is refused the same way.
    const release = await s.request('POST', `/projects/${pid}/releases`, { token: dev.token, json: { tag_name: 'v2.0', ref: 'main' } });
    expect(release.status).toBe(400);
    // GitLab's TagPolicy: a Developer may not delete a protected tag (403).
    const del = await s.request('DELETE', `/projects/${pid}/repository/tags/v1.0`, { token: dev.token });
    expect(del.status).toBe(403);
    expect(del.body).toEqual({ message: '403 Forbidden' });
    expect((await s.request('DELETE', `/projects/${pid}/repository/tags/v1.0`, { token: maint.token })).status).toBe(204);
    expect((await s.request('DELETE', `${path}/v*`, { token: maint.token })).status).toBe(204);
    expect((await s.request('GET', `${path}/v*`, { token: maint.token })).status).toBe(404);
  });
});

describe('a namespace\'s default branch protection', () => {
  it('follows the group\'s default_branch_protection_defaults, and level 0 protects nothing', async () => {
    const g = await s.request('POST', '/groups', {
      token: owner.token,
      json: { name: 'devpush', path: 'devpush', default_branch_protection_defaults: { allowed_to_push: [{ access_level: 30 }], allowed_to_merge: [{ access_level: 40 }], allow_force_push: true } },
    });
    expect(g.status).toBe(201);
    const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'in-group', namespace_id: g.body.id, initialize_with_readme: true } });
    expect(p.status).toBe(201);
    const rules = await s.request('GET', `/projects/${p.body.id}/protected_branches`, { token: owner.token });
    expect(rules.body).toHaveLength(1);
    expect(rules.body[0]).toMatchObject({ name: 'main', allow_force_push: true });
    expect(rules.body[0].push_access_levels[0].access_level).toBe(30);
    expect(rules.body[0].merge_access_levels[0].access_level).toBe(40);

    const none = await s.request('POST', '/groups', { token: owner.token, json: { name: 'open-group', path: 'open-group', default_branch_protection: 0 } });
    expect(none.status).toBe(201);
    // The deprecated level sets the defaults it stands for.
    expect(none.body.default_branch_protection_defaults).toEqual({ allowed_to_push: [{ access_level: 30 }], allow_force_push: true, allowed_to_merge: [{ access_level: 30 }] });
    const q = await s.request('POST', '/projects', { token: owner.token, json: { name: 'free', namespace_id: none.body.id, initialize_with_readme: true } });
    expect((await s.request('GET', `/projects/${q.body.id}/protected_branches`, { token: owner.token })).body).toEqual([]);
  });

  it('goes with its project', async () => {
    const p = await s.request('POST', '/projects', { token: owner.token, json: { name: 'short-lived', initialize_with_readme: true } });
    expect((await s.request('GET', `/projects/${p.body.id}/protected_branches`, { token: owner.token })).body).toHaveLength(1);
    expect((await s.request('DELETE', `/projects/${p.body.id}`, { token: owner.token })).status).toBe(202);
    const left = await s.app.lw.db.selectFrom('protected_refs').select('id').where('project_id', '=', p.body.id).execute();
    expect(left).toEqual([]);
  });
});

describe('the instance default (LABWRIGHT_DEFAULT_BRANCH_PROTECTION)', () => {
  it('applies to personal projects: 0 protects nothing, 4 lets Developers make the first push', async () => {
    for (const [level, expected] of [['0', 0], ['4', 1]] as const) {
      const other = await startServer({ LABWRIGHT_DEFAULT_BRANCH_PROTECTION: level });
      try {
        const u = await other.createUser(`lvl${level}`);
        const d = await other.createUser(`lvldev${level}`);
        const p = await other.request('POST', '/projects', { token: u.token, json: { name: 'p' } });
        await other.request('POST', `/projects/${p.body.id}/members`, { token: u.token, json: { user_id: d.id, access_level: 30 } });
        const first = await other.request('POST', `/projects/${p.body.id}/repository/files/a.txt`, { token: d.token, json: { branch: 'main', content: 'a', commit_message: 'first' } });
        expect(first.status).toBe(201);
        const rules = await other.request('GET', `/projects/${p.body.id}/protected_branches`, { token: u.token });
        expect(rules.body).toHaveLength(expected);
        // A group that sets nothing shows the instance's protection.
        const g = await other.request('POST', '/groups', { token: u.token, json: { name: `g${level}`, path: `g${level}` } });
        expect(g.body.default_branch_protection).toBe(Number(level));
        expect(g.body.default_branch_protection_defaults.allowed_to_push).toEqual([{ access_level: level === '0' ? 30 : 40 }]);
      } finally {
        await other.close();
      }
    }
  });
});

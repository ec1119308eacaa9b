// Defects a fuzzing pass found (2026-12-03): integers below PostgreSQL's integer range reached the
// database (a 500 there), a label or milestone could be renamed to a title its project already
// has, and simultaneous identical requests met a unique index as a 500 on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let gid: number;
beforeAll(async () => {
  s = await startServer();
  pid = (await createProject(s, 'races')).id;
  gid = (await s.request('POST', '/groups', { json: { name: 'Races', path: 'races' } })).body.id;
});
afterAll(async () => {
  await closeServer(s);
});

const LOW = '-9999999999';

describe('integers below the database range', () => {
  it('are refused with a 400, never sent to the database', async () => {
    const cases: Array<[string, string, Record<string, unknown>?]> = [
      ['GET', `/projects?id_after=${LOW}`],
      ['GET', `/projects?id_before=${LOW}`],
      ['GET', `/users?pagination=keyset&order_by=id&id_after=${LOW}`],
      ['GET', `/todos?project_id=${LOW}`],
      ['GET', `/personal_access_tokens?user_id=${LOW}`],
      ['GET', `/namespaces/races/exists?parent_id=${LOW}`],
      ['GET', '/keys/-2147483649'],
      ['GET', '/user/keys/-2147483649'],
      ['DELETE', '/applications/-2147483649'],
      ['DELETE', `/projects/${pid}/share/-2147483649`],
      ['POST', '/groups', { name: 'zz', path: 'zz', parent_id: Number(LOW) }],
      ['POST', `/projects/${pid}/members`, { user_id: Number(LOW), access_level: 30 }],
      ['POST', `/projects/${pid}/share`, { group_id: Number(LOW), group_access: 30 }],
    ];
    for (const [method, path, json] of cases) {
      const r = await s.request(method, path, json ? { json } : {});
      expect(r.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
      expect(r.status, `${method} ${path}`).toBeLessThan(500);
      expect(r.body, `${method} ${path}`).toHaveProperty(r.body?.error !== undefined ? 'error' : 'message');
    }
    // The lowest integer the database holds is still a valid id: not found, not refused.
    expect((await s.request('GET', '/keys/-2147483648')).status).toBe(404);
    expect((await s.request('GET', `/groups/zz`)).status).toBe(404);
  });
});

describe('renaming to a title that is taken', () => {
  it('a project label: 400 has already been taken, nothing changed', async () => {
    const a = (await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'alpha', color: '#000000' } })).body;
    const b = (await s.request('POST', `/projects/${pid}/labels`, { json: { name: 'beta', color: '#111111' } })).body;
    const r = await s.request('PUT', `/projects/${pid}/labels/${b.id}`, { json: { new_name: 'alpha', color: '#222222' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { title: ['has already been taken'] } });
    const after = (await s.request('GET', `/projects/${pid}/labels/${b.id}`)).body;
    expect(after).toMatchObject({ name: 'beta', color: '#111111' });
    // Its own title, or a free one, is still fine.
    expect((await s.request('PUT', `/projects/${pid}/labels/${a.id}`, { json: { new_name: 'alpha', description: 'd' } })).status).toBe(200);
    expect((await s.request('PUT', `/projects/${pid}/labels/${b.id}`, { json: { new_name: 'gamma' } })).body.name).toBe('gamma');
  });

  it('a group label', async () => {
    await s.request('POST', `/groups/${gid}/labels`, { json: { name: 'one', color: '#000000' } });
    const two = (await s.request('POST', `/groups/${gid}/labels`, { json: { name: 'two', color: '#000000' } })).body;
    const r = await s.request('PUT', `/groups/${gid}/labels/${two.id}`, { json: { new_name: 'one' } });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ message: { title: ['has already been taken'] } });
  });

  it('a project and a group milestone', async () => {
    for (const owner of [`/projects/${pid}`, `/groups/${gid}`]) {
      await s.request('POST', `${owner}/milestones`, { json: { title: 'v1' } });
      const m2 = (await s.request('POST', `${owner}/milestones`, { json: { title: 'v2' } })).body;
      const r = await s.request('PUT', `${owner}/milestones/${m2.id}`, { json: { title: 'v1', description: 'x' } });
      expect(r.status, owner).toBe(400);
      expect(r.body).toEqual({ message: { title: ['has already been taken'] } });
      const after = (await s.request('GET', `${owner}/milestones/${m2.id}`)).body;
      expect(after).toMatchObject({ title: 'v2', description: null });
      expect((await s.request('PUT', `${owner}/milestones/${m2.id}`, { json: { title: 'v2', description: 'y' } })).status).toBe(200);
    }
  });
});

describe('the same request ten times at once', () => {
  const at = (n: number, f: () => Promise<{ status: number }>) => Promise.all(Array.from({ length: n }, f));

  it('sharing a project with a group: one 201, the others 409', async () => {
    const g = (await s.request('POST', '/groups', { json: { name: 'Sharee', path: 'sharee' } })).body;
    const rs = await at(10, () => s.request('POST', `/projects/${pid}/share`, { json: { group_id: g.id, group_access: 30 } }));
    expect(rs.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    expect((await s.request('GET', `/projects/${pid}`)).body.shared_with_groups).toHaveLength(1);
  });

  it('sharing a group with a group: one 200 (the spec\'s status), the others 409', async () => {
    const g = (await s.request('POST', '/groups', { json: { name: 'Sharee2', path: 'sharee2' } })).body;
    const rs = await at(10, () => s.request('POST', `/groups/${gid}/share`, { json: { group_id: g.id, group_access: 30 } }));
    expect(rs.map((r) => r.status).sort()).toEqual([200, ...Array(9).fill(409)]);
    expect((await s.request('GET', `/groups/${gid}`)).body.shared_with_groups).toHaveLength(1);
  });

  it('blocking a merge request: one 201, the others 409', async () => {
    await commit(s, pid, 'b1', { 'b1.txt': '1' }, { from: 'main' });
    await commit(s, pid, 'b2', { 'b2.txt': '2' }, { from: 'main' });
    const blocked = await openMr(s, pid, 'b1');
    const blocking = await openMr(s, pid, 'b2');
    const rs = await at(10, () => s.request('POST', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`, { json: { blocking_merge_request_iid: blocking.iid } }));
    expect(rs.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
    expect((await s.request('GET', `/projects/${pid}/merge_requests/${blocked.iid}/blocks`)).body).toHaveLength(1);
  });

  it('creating a label or a milestone of one title: one 201, the others 409, one row and a new iid', async () => {
    for (const owner of [`/projects/${pid}`, `/groups/${gid}`]) {
      const labels = await at(10, () => s.request('POST', `${owner}/labels`, { json: { name: 'same', color: '#000000' } }));
      expect(labels.map((r) => r.status).sort(), owner).toEqual([201, ...Array(9).fill(409)]);
      const listed = (await s.request('GET', `${owner}/labels?per_page=100`)).body.filter((l: { name: string }) => l.name === 'same');
      expect(listed, owner).toHaveLength(1);
      const ms = await at(10, () => s.request('POST', `${owner}/milestones`, { json: { title: 'same' } }));
      expect(ms.map((r) => r.status).sort(), owner).toEqual([201, ...Array(9).fill(409)]);
      const all = (await s.request('GET', `${owner}/milestones?per_page=100`)).body as Array<{ title: string; iid: number }>;
      expect(all.filter((m) => m.title === 'same'), owner).toHaveLength(1);
      expect(new Set(all.map((m) => m.iid)).size, owner).toBe(all.length);
    }
  });

  it('marking a merge request as a to-do: one 201, the others 304, one pending to-do', async () => {
    await commit(s, pid, 't1', { 't1.txt': '1' }, { from: 'main' });
    const mr = await openMr(s, pid, 't1');
    const rs = await at(10, () => s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/todo`));
    expect(rs.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(304)]);
    const todos = (await s.request('GET', '/todos?type=MergeRequest&action=marked')).body as Array<{ target: { iid: number } }>;
    expect(todos.filter((t) => t.target.iid === mr.iid)).toHaveLength(1);
  });

  it('approving a merge request: one 201, the others 401, one approval and one approved event', async () => {
    await commit(s, pid, 'a1', { 'a1.txt': '1' }, { from: 'main' });
    const mr = await openMr(s, pid, 'a1');
    const rs = await at(10, () => s.request('POST', `/projects/${pid}/merge_requests/${mr.iid}/approve`));
    expect(rs.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(401)]);
    const approvals = (await s.request('GET', `/projects/${pid}/merge_requests/${mr.iid}/approvals`)).body;
    expect(approvals.approved_by).toHaveLength(1);
    const events = (await s.request('GET', `/projects/${pid}/events?action=approved&target_type=merge_request`)).body as Array<{ target_iid: number }>;
    expect(events.filter((e) => e.target_iid === mr.iid)).toHaveLength(1);
  });

  it('setting a group custom attribute: all 200, one attribute', async () => {
    const rs = await at(10, () => s.request('PUT', `/groups/${gid}/custom_attributes/k1`, { json: { value: 'v' } }));
    expect(rs.map((r) => r.status)).toEqual(Array(10).fill(200));
    const list = (await s.request('GET', `/groups/${gid}/custom_attributes`)).body;
    expect(list).toEqual([{ key: 'k1', value: 'v' }]);
  });
});

// Wrong input on every merge request route gives a GitLab-shaped 4xx and changes nothing: huge
// ids (beyond PostgreSQL's integer), wrong types, arrays where strings go, unknown records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../helpers/server.js';
import { closeServer, commit, createProject, openMr } from './mr-helpers.js';

let s: TestServer;
let pid: number;
let iid: number;
const HUGE = '99999999999';
beforeAll(async () => {
  s = await startServer();
  pid = (await createProject(s, 'robust')).id;
  await commit(s, pid, 'r1', { 'r.txt': 'r' }, { from: 'main' });
  iid = (await openMr(s, pid, 'r1')).iid;
});
afterAll(async () => {
  await closeServer(s);
});

describe('no input produces a 500', () => {
  it('huge and malformed ids', async () => {
    const P = `/projects/${pid}/merge_requests`;
    const cases: Array<[string, string, unknown?]> = [
      ['GET', `${P}/${HUGE}`],
      ['GET', `${P}/-1`],
      ['PUT', `${P}/${HUGE}`, { title: 'x' }],
      ['PUT', `${P}/${HUGE}/merge`],
      ['GET', `${P}/${iid}/award_emoji`],
      ['DELETE', `${P}/${iid}/award_emoji/${HUGE}`],
      ['DELETE', `${P}/${iid}/blocks/${HUGE}`],
      ['POST', `${P}/${iid}/blocks`, { blocking_merge_request_id: HUGE }],
      ['POST', `${P}/${iid}/blocks`, { blocking_merge_request_iid: HUGE }],
      ['GET', `/projects/${pid}/milestones/${HUGE}`],
      ['GET', `/projects/${pid}/labels/${HUGE}`],
      ['GET', `/projects/${pid}/deployments/${HUGE}`],
      ['GET', `/projects/${pid}/pipelines/${HUGE}`],
      ['POST', `/projects/${pid}/statuses/${'a'.repeat(40)}`, { state: 'success', pipeline_id: HUGE }],
      ['GET', P, { author_id: HUGE, assignee_id: HUGE, reviewer_id: HUGE, iids: HUGE, merge_user_id: HUGE }],
      ['GET', P, { 'not[author_id]': HUGE, 'approved_by_ids[]': HUGE }],
      ['GET', `/groups/1/merge_requests`, { source_project_id: HUGE }],
      ['POST', P, { source_branch: 'r1', target_branch: 'main', title: 't', assignee_ids: [HUGE], reviewer_ids: [HUGE], milestone_id: HUGE }],
      ['PUT', `${P}/${iid}`, { milestone_id: HUGE, assignee_id: HUGE }],
      ['PUT', `${P}/${iid}`, { approvals_before_merge: HUGE }],
      ['POST', `/projects/${pid}/labels`, { name: 'p', color: 'red', priority: HUGE }],
    ];
    for (const [method, path, data] of cases) {
      const r = method === 'GET'
        ? await s.request(method, path, { query: (data ?? {}) as Record<string, string> })
        : await s.request(method, path, { json: data ?? {} });
      expect(r.status, `${method} ${path} ${JSON.stringify(data)}: ${r.text}`).toBeLessThan(500);
    }
  });

  it('wrong types', async () => {
    const P = `/projects/${pid}/merge_requests`;
    const bodies: unknown[] = [
      { source_branch: ['a'], target_branch: 'main', title: 't' },
      { source_branch: 'r1', target_branch: { a: 1 }, title: 't' },
      { source_branch: 'r1', target_branch: 'main', title: null },
      { source_branch: 'r1', target_branch: 'main', title: 't', squash: 'maybe' },
      { source_branch: 'r1', target_branch: 'main', title: 't', merge_after: 'soon' },
      { source_branch: 'r1', target_branch: 'main', title: 't', labels: { x: 1 } },
      { source_branch: 'r1', target_branch: 'main', title: 't', milestone: ['x'] },
    ];
    for (const json of bodies) {
      const r = await s.request('POST', P, { json });
      expect(r.status, `${JSON.stringify(json)}: ${r.text}`).toBeGreaterThanOrEqual(400);
      expect(r.status).toBeLessThan(500);
    }
    const merges: unknown[] = [{ sha: ['x'] }, { squash: 'x' }, { auto_merge: 'x' }, { merge_commit_message: { a: 1 } }];
    for (const json of merges) {
      const r = await s.request('PUT', `${P}/${iid}/merge`, { json });
      expect(r.status, `${JSON.stringify(json)}: ${r.text}`).toBe(400);
    }
    const lists: Array<Record<string, string>> = [{ not: 'x' }, { 'not[labels][x]': '1' }, { labels: '' }, { milestone: '' }, { search: '%_\\' }, { in: 'title,title' }];
    for (const query of lists) {
      const r = await s.request('GET', P, { query });
      expect(r.status, `${JSON.stringify(query)}: ${r.text}`).toBeLessThan(500);
    }
    expect((await s.request('GET', `${P}/${iid}`)).body.state).toBe('opened');
    expect((await s.request('GET', P)).body).toHaveLength(1);
  });
});

// To-do lists (GitLab's lib/api/todos.rb): the caller's to-dos with GitLab's filters, marking one
// or all done, and marking an issue or a merge request as a to-do.
import type { FastifyInstance } from 'fastify';
import { nowIso } from '../../../db/database.js';
import { findUserRefsByIds } from '../../../db/repositories/users.js';
import { ApiError, notFound } from '../../../http/errors.js';
import { paginateOffset } from '../../../http/pagination.js';
import { route, type Ctx } from '../../../http/route.js';
import { canReadProject } from '../../../services/access.js';
import { canReadIssue, canReadIssues } from '../../../services/issues/access.js';
import { loadIssueBundle, type IssueRow } from '../../../services/issues/rows.js';
import { userCanReadMrs } from '../../../services/merge-requests/access.js';
import { canMerge, protectionFor } from '../../../services/merge-requests/merge.js';
import { loadBundle, type MrRow, type ProjectInfo } from '../../../services/merge-requests/rows.js';
import { effectiveAccess, fullName, fullPath, joinProjects, projectQueries, type NamespaceRow } from '../../../services/projects/lookup.js';
import { markTodo, registerTodos, TodoAction, TODO_ACTION_NAMES, TODO_TYPES, type TodoRow } from '../../../services/todos.js';
import { canReadGroup } from '../../../services/groups/visibility.js';
import { presentProjects } from '../entities/project.js';
import { presentNamespacesFor } from '../namespaces/routes.js';
import { AccessLevel } from '../../../services/access.js';
import { presentIssue, issueWebUrl } from '../entities/issue.js';
import { presentMergeRequest } from '../entities/merge-request.js';
import { presentUserBasic } from '../entities/user.js';
import { assigneesOf, issueFromPath, issueSubscribed } from '../issues/context.js';
import { mrFromPath, subscriptionState } from '../merge-requests/context.js';
import { integerPathParam } from '../repository/common.js';

const ACTION_BY_NAME = new Map(Object.entries(TODO_ACTION_NAMES).map(([value, name]) => [name, Number(value)]));

interface Project extends ProjectInfo {
  access: number;
}

/** Everything a page of to-dos shows: projects with the caller's access, targets, authors, the comments' ids. */
async function presentTodos(c: Ctx, rows: TodoRow[], opts: { subscribed?: boolean } = {}): Promise<Record<string, unknown>[]> {
  // `subscribed`: the targets show whether the caller is subscribed (single responses), as GitLab's POST routes.
  if (!rows.length) return [];
  const db = c.app.db;
  const user = c.requireUser();
  const projectIds = [...new Set(rows.flatMap((r) => (r.project_id !== null ? [r.project_id] : [])))];
  const groupIds = [...new Set(rows.flatMap((r) => (r.group_id !== null ? [r.group_id] : [])))];
  const pq = projectQueries(db, projectIds);
  const idsOf = (type: string) => [...new Set(rows.filter((r) => r.target_type === type).map((r) => r.target_id))];
  const issueIds = idsOf('Issue');
  const mrIds = idsOf('MergeRequest');
  const noteIds = [...new Set(rows.filter((r) => r.note_id !== null).map((r) => r.note_id!))];
  const [projects, namespaces, groups, issues, mrs, authors, notes] = await Promise.all([
    projectIds.length ? pq.projects.execute() : [],
    projectIds.length ? pq.namespaces.execute() : [],
    groupIds.length ? (db.selectFrom('namespaces').selectAll().where('id', 'in', groupIds).where('kind', '=', 'group').execute() as Promise<NamespaceRow[]>) : [],
    issueIds.length ? (db.selectFrom('issues').selectAll().where('id', 'in', issueIds).execute() as Promise<IssueRow[]>) : [],
    mrIds.length ? (db.selectFrom('merge_requests').selectAll().where('id', 'in', mrIds).execute() as Promise<MrRow[]>) : [],
    findUserRefsByIds(db, [...new Set(rows.map((r) => r.author_id))]),
    noteIds.length ? db.selectFrom('notes').select(['id', 'body', 'internal']).where('id', 'in', noteIds).execute() : [],
  ]);
  const noteBodies = new Map(notes.map((n) => [n.id, n.body]));
  const internalNotes = new Set(notes.filter((n) => n.internal === 1).map((n) => n.id));
  const joined = joinProjects(projects, namespaces);
  const withAccess = new Map<number, Project>();
  for (const [id, p] of joined) withAccess.set(id, { ...p, access: await effectiveAccess(db, user, p.project, p.namespace) });
  const readableGroups = new Map<number, NamespaceRow>();
  for (const g of groups) if (await canReadGroup(db, user, g)) readableGroups.set(g.id, g);
  const infos = [...withAccess.values()].map((p) => ({ project: p.project, namespace: p.namespace }));
  const confidential = issues.filter((i) => i.confidential === 1).map((i) => i.id);
  const assignees = confidential.length ? await db.selectFrom('issue_assignees').select(['issue_id', 'user_id']).where('issue_id', 'in', confidential).execute() : [];
  const issueById = new Map(issues.map((i) => [i.id, i]));
  const mrById = new Map(mrs.map((m) => [m.id, m]));
  // Todos::AllowedTargetFilterService: to-dos of targets the caller may no longer read are left out of the page.
  const readable = rows.filter((t) => {
    if (t.project_id === null) return t.target_type === 'Namespace' && t.group_id === t.target_id && readableGroups.has(t.target_id);
    const p = withAccess.get(t.project_id);
    if (!p || !canReadProject(user, p.project, p.access)) return false;
    // A mention in an internal note shows its text: only to those who still read internal notes (GitLab's TodoPolicy).
    if (t.note_id !== null && internalNotes.has(t.note_id) && !user.is_admin && p.access < (t.target_type === 'Issue' ? AccessLevel.PLANNER : AccessLevel.REPORTER)) return false;
    if (t.target_type === 'Issue') {
      const issue = issueById.get(t.target_id);
      return Boolean(issue) && canReadIssues(user, p, p.access) && canReadIssue(user, p.access, issue!, assignees.filter((a) => a.issue_id === t.target_id).map((a) => a.user_id));
    }
    if (t.target_type === 'MergeRequest') return mrById.has(t.target_id) && userCanReadMrs(user, p, p.access);
    return t.target_type === 'Project' && t.target_id === t.project_id;
  });
  const shownIssues = issues.filter((i) => readable.some((t) => t.target_type === 'Issue' && t.target_id === i.id));
  const shownMrs = mrs.filter((m) => readable.some((t) => t.target_type === 'MergeRequest' && t.target_id === m.id));
  const shownGroups = [...readableGroups.values()].filter((g) => readable.some((t) => t.target_type === 'Namespace' && t.target_id === g.id));
  const [issueBundle, mrBundle, groupEntities] = await Promise.all([
    shownIssues.length ? loadIssueBundle(db, shownIssues, infos, user) : null,
    shownMrs.length ? loadBundle(db, shownMrs, infos) : null,
    shownGroups.length ? presentNamespacesFor(c, shownGroups) : [],
  ]);
  const groupEntity = new Map(shownGroups.map((g, i) => [g.id, groupEntities[i]!]));
  // Project targets: Entities::Project (the list entity, without the caller's `permissions`), presented together.
  const targetProjects = [...new Set(readable.filter((t) => t.target_type === 'Project').map((t) => t.target_id))].map((id) => withAccess.get(id)!.project);
  const projectEntity = new Map<number, Record<string, unknown>>();
  if (targetProjects.length) {
    for (const entity of (await presentProjects(db, targetProjects, { base: c.base, user })) as Array<Record<string, unknown>>) {
      const { permissions: _own, ...project } = entity;
      projectEntity.set(project.id as number, project);
    }
  }
  const protections = new Map<number, Awaited<ReturnType<typeof protectionFor>>>();
  for (const m of shownMrs) if (!protections.has(m.project_id)) protections.set(m.project_id, await protectionFor(c.app, withAccess.get(m.project_id)!));
  // The caller's subscription to each merge request (single POST responses only, as GitLab).
  const subscriptions = new Map<string, boolean>();
  if (opts.subscribed) {
    for (const m of shownMrs) subscriptions.set(`MergeRequest:${m.id}`, (await subscriptionState(c, m, user.id)).subscribed);
    for (const i of shownIssues) subscriptions.set(`Issue:${i.id}`, await issueSubscribed(c, { issue: i, assignees: await assigneesOf(c.app.db, i.id) }));
  }
  return readable.map((t) => {
    const author = authors.get(t.author_id);
    let parent: Record<string, unknown>;
    let target: Record<string, unknown>;
    let url: string;
    let title: string;
    if (t.project_id === null) {
      // A group's own to-do: the group as resource parent and as target (Entities::Namespace).
      const g = readableGroups.get(t.target_id)!;
      target = groupEntity.get(g.id)!;
      parent = { group: namespaceBasic(target) };
      url = t.action === TodoAction.MEMBER_ACCESS_REQUESTED ? `${c.base}/groups/${g.full_path}/-/group_members?tab=access_requests` : `${c.base}/groups/${g.full_path}`;
      title = g.full_path;
    } else {
      const p = withAccess.get(t.project_id)!;
      const path = fullPath(p.project, p.namespace);
      parent = {
        project: {
          id: p.project.id,
          description: p.project.description,
          name: p.project.name,
          name_with_namespace: fullName(p.project, p.namespace),
          path: p.project.path,
          path_with_namespace: path,
          created_at: p.project.created_at,
        },
      };
      if (t.target_type === 'Project') {
        target = projectEntity.get(t.target_id)!;
        url = t.action === TodoAction.MEMBER_ACCESS_REQUESTED ? `${c.base}/${path}/-/project_members?tab=access_requests` : `${c.base}/${path}`;
        title = path;
      } else if (t.target_type === 'Issue') {
        const issue = issueById.get(t.target_id)!;
        target = presentIssue(issue, { base: c.base, bundle: issueBundle!, ...(opts.subscribed ? { subscribed: subscriptions.get(`Issue:${issue.id}`) ?? false } : {}) });
        url = issueWebUrl(c.base, path, issue);
        title = issue.title;
      } else {
        const mr = mrById.get(t.target_id)!;
        target = presentMergeRequest(mr, {
          base: c.base,
          bundle: mrBundle!,
          canMerge: canMerge(user, p.access, p, protections.get(mr.project_id)!, mr.target_branch),
          canReadPipelines: p.project.builds_access_level !== 'disabled' && (p.project.visibility === 'public' || p.access >= AccessLevel.REPORTER || !!user.is_admin),
          ...(opts.subscribed ? { subscribed: subscriptions.get(`MergeRequest:${mr.id}`) ?? false } : {}),
        });
        url = `${c.base}/${path}/-/merge_requests/${mr.iid}`;
        title = mr.title;
      }
    }
    return {
      id: t.id,
      ...parent,
      author: author ? presentUserBasic(author, { base: c.base }) : null,
      action_name: TODO_ACTION_NAMES[t.action] ?? 'marked',
      target_type: t.target_type,
      target,
      target_url: t.note_id ? `${url}#note_${t.note_id}` : url,
      // Todo#body: the comment, a stored text (a failed transfer's reason), the group's or project's path, the title.
      body: t.note_id ? (noteBodies.get(t.note_id) ?? title) : (t.body ?? title),
      state: t.state,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  });
}

/** Entities::NamespaceBasic: the first fields of the namespace entity. */
function namespaceBasic(ns: Record<string, unknown>): Record<string, unknown> {
  const { id, name, path, kind, full_path, parent_id, avatar_url, web_url } = ns;
  return { id, name, path, kind, full_path, parent_id, avatar_url, web_url };
}

/** 304 Not Modified: the to-do is there already (python-gitlab raises on it, as against GitLab). */
function notModified(): ApiError {
  return new ApiError(304, { message: '304 Not Modified' });
}

export function registerTodoRoutes(app: FastifyInstance): void {
  registerTodos();

  // GET /todos
  route(app, 'GET', '/todos', async function listTodos(c) {
    const user = c.requireUser();
    const actionName = c.params.enum('action', [...ACTION_BY_NAME.keys()]);
    const authorId = c.params.int('author_id');
    const projectId = c.params.int('project_id');
    const groupId = c.params.int('group_id');
    const state = c.params.enum('state', ['pending', 'done']) ?? 'pending';
    const type = c.params.enum('type', TODO_TYPES);
    let q = c.app.db.selectFrom('todos').selectAll().where('user_id', '=', user.id).where('state', '=', state);
    if (actionName) q = q.where('action', '=', ACTION_BY_NAME.get(actionName)!);
    if (authorId !== undefined) q = q.where('author_id', '=', authorId);
    if (projectId !== undefined) q = q.where('project_id', '=', projectId);
    if (type) q = q.where('target_type', '=', type);
    if (groupId !== undefined) {
      const group = await c.app.db.selectFrom('namespaces').select('traversal').where('id', '=', groupId).where('kind', '=', 'group').executeTakeFirst();
      // An unknown group: no to-dos (as GitLab's plain filter).
      if (!group) q = q.where('id', '<', 0);
      // Todo.for_group_ids_and_descendants: the projects' to-dos and the groups' own, in the subtree.
      else {
        q = q.where((eb) =>
          eb.or([
            eb('project_id', 'in', eb.selectFrom('projects').innerJoin('namespaces', 'namespaces.id', 'projects.namespace_id').select('projects.id').where('namespaces.traversal', 'like', `${group.traversal}%`)),
            eb('group_id', 'in', eb.selectFrom('namespaces').select('id').where('traversal', 'like', `${group.traversal}%`)),
          ]),
        );
      }
    }
    const rows = await paginateOffset(c, q.orderBy('id', 'desc'));
    return presentTodos(c, rows);
  });

  // POST /todos/:id/mark_as_done
  route(app, 'POST', '/todos/:id/mark_as_done', async function markDone(c) {
    const user = c.requireUser();
    const id = integerPathParam(c, 'id');
    const todo = await c.app.db.selectFrom('todos').selectAll().where('id', '=', id).where('user_id', '=', user.id).executeTakeFirst();
    // A to-do whose target the caller may no longer read is not shown, nor changed.
    if (!todo || !(await presentTodos(c, [todo])).length) throw notFound();
    let row = todo;
    if (todo.state === 'pending') {
      row = (await c.app.db.updateTable('todos').set({ state: 'done', resolved_by_action: 'api_done', updated_at: nowIso() }).where('id', '=', id).returningAll().executeTakeFirst()) ?? todo;
    }
    return (await presentTodos(c, [row], { subscribed: true }))[0];
  });

  // POST /todos/mark_as_done
  route(app, 'POST', '/todos/mark_as_done', async function markAllDone(c) {
    const user = c.requireUser();
    await c.app.db.updateTable('todos').set({ state: 'done', resolved_by_action: 'api_all_done', updated_at: nowIso() }).where('user_id', '=', user.id).where('state', '=', 'pending').execute();
    c.status(204);
    return undefined;
  });

  // POST /projects/:id/issues/:issue_iid/todo
  route(app, 'POST', '/projects/:id/issues/:issue_iid/todo', async function issueTodo(c) {
    const user = c.requireUser();
    const s = await issueFromPath(c);
    const todo = await markTodo(c.app, s.info, { type: 'Issue', id: s.issue.id, issue: s.issue }, user);
    if (!todo) throw notModified();
    return (await presentTodos(c, [todo], { subscribed: true }))[0];
  });

  // POST /projects/:id/merge_requests/:merge_request_iid/todo
  route(app, 'POST', '/projects/:id/merge_requests/:merge_request_iid/todo', async function mrTodo(c) {
    const user = c.requireUser();
    const p = await mrFromPath(c);
    const todo = await markTodo(c.app, p.info, { type: 'MergeRequest', id: p.mr.id }, user);
    if (!todo) throw notModified();
    return (await presentTodos(c, [todo], { subscribed: true }))[0];
  });
}


// Entities::Todo (GET /todos and the routes that mark to-dos).
import { NStr, Int, Str, Time, ifHas, nullable, obj, optional } from './common.js';
import { Issue } from './issues.js';
import { MergeRequest } from './merge-requests.js';
import { Namespace } from './namespaces.js';
import { Type } from '@sinclair/typebox';
import { NamespaceBasic, Project } from './projects.js';
import { UserBasic } from './users.js';

/** Entities::ProjectIdentity. */
export const ProjectIdentity = obj({ id: Int(), description: NStr(), name: Str(), name_with_namespace: Str(), path: Str(), path_with_namespace: Str(), created_at: Time() }, { title: 'ProjectIdentity' });

/** Entities::Project, a to-do's project target: the list entity without the caller's `permissions`. */
const ProjectTarget = Type.Omit(Project, ['permissions'], { additionalProperties: true, title: 'Project' });

export const Todo = obj(
  {
    id: Int(),
    ...optional({ project: ProjectIdentity, group: NamespaceBasic }),
    author: nullable(UserBasic),
    action_name: Str(),
    target_type: Str(),
    target: ifHas(['merge_status'], MergeRequest, ifHas(['iid'], Issue, ifHas(['path_with_namespace'], ProjectTarget, Namespace))),
    target_url: Str(),
    body: Str(),
    state: Str(),
    created_at: Time(),
    updated_at: Time(),
  },
  { title: 'Todo' },
);

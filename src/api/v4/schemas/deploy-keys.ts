// Deploy keys (api/v4/deploy-keys/routes.ts): Entities::DeployKey, with the project lists of the
// administrators' instance list, and Entities::DeployKeysProject (the key and its link's can_push).
import { Arr, Bool, Int, Str, Time, nullable, obj } from './common.js';
import { ProjectIdentity } from './todos.js';
import { sshKeyProps, UserBasic } from './users.js';

const deployKeyProps = {
  ...sshKeyProps,
  fingerprint: Str(),
  fingerprint_sha256: Str(),
};

export const DeployKey = obj(deployKeyProps, { title: 'DeployKey' });
export const DeployKeyWithProjects = obj(
  { ...deployKeyProps, projects_with_write_access: Arr(ProjectIdentity), projects_with_readonly_access: Arr(ProjectIdentity) },
  { title: 'DeployKeyWithProjects' },
);
export const DeployKeysProject = obj({ ...deployKeyProps, can_push: Bool() }, { title: 'DeployKeysProject' });

/** Entities::DeployKeyWithUser (GET /keys?fingerprint= finding a deploy key). */
export const DeployKeyWithUser = obj(
  {
    ...deployKeyProps,
    user: nullable(UserBasic),
    deploy_keys_projects: Arr(obj({ id: Int(), deploy_key_id: Int(), project_id: Int(), created_at: Time(), updated_at: Time(), can_push: Bool() })),
  },
  { title: 'DeployKeyWithUser' },
);

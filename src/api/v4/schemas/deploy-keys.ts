// Deploy keys (api/v4/deploy-keys/routes.ts): Entities::DeployKey, with the project lists of the
// administrators' instance list, and Entities::DeployKeysProject (the key and its link's can_push).
import { Arr, Bool, Str, obj } from './common.js';
import { ProjectIdentity } from './todos.js';
import { sshKeyProps } from './users.js';

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

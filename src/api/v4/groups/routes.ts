// The groups API (spec document 3): reading and listing, writing, sharing and transfer, group
// projects, avatar, custom attributes, enterprise users and the credential inventory.
import type { FastifyInstance } from 'fastify';
import { registerEnterpriseUserFields, registerEnterpriseUserParams, registerUserCleanup } from '../../../services/groups/enterprise.js';
import { registerGroupSharingAccess } from '../../../services/groups/visibility.js';
import { adminUserParamHooks, adminUserPresentHooks, userDeletionHooks } from '../../../services/users.js';
import { registerGroupEnterpriseRoutes } from './enterprise.js';
import { registerGroupExtraRoutes } from './extras.js';
import { registerGroupProjectRoutes } from './projects.js';
import { registerGroupReadRoutes } from './read.js';
import { registerGroupShareRoutes } from './share.js';
import { registerGroupWriteRoutes } from './write.js';

export function registerGroupRoutes(app: FastifyInstance): void {
  registerGroupSharingAccess();
  registerEnterpriseUserParams(adminUserParamHooks);
  registerUserCleanup(userDeletionHooks);
  registerEnterpriseUserFields(adminUserPresentHooks);
  registerGroupReadRoutes(app);
  registerGroupWriteRoutes(app);
  registerGroupShareRoutes(app);
  registerGroupProjectRoutes(app);
  registerGroupExtraRoutes(app);
  registerGroupEnterpriseRoutes(app);
}

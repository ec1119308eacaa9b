// Mounts every /api/v4 resource (alphabetical), then the API's 404 catch-all.
import type { FastifyInstance } from 'fastify';
import { registerAccessTokenRoutes } from './access-tokens/routes.js';
import { registerApplicationRoutes } from './applications/routes.js';
import { registerAuditEventRoutes } from './audit-events/routes.js';
import { registerDeploymentRoutes } from './deployments/routes.js';
import { registerDeployKeyRoutes } from './deploy-keys/routes.js';
import { registerDeployTokenRoutes } from './deploy-tokens/routes.js';
import { registerEnvironmentRoutes } from './environments/routes.js';
import { registerEventRoutes } from './events/routes.js';
import { registerGroupRoutes } from './groups/routes.js';
import { registerHookRoutes } from './hooks/routes.js';
import { registerIssueRoutes } from './issues/routes.js';
import { registerLabelRoutes } from './labels/routes.js';
import { registerKeyRoutes } from './keys/routes.js';
import { registerMemberRoutes } from './members/routes.js';
import { registerMergeRequestRoutes } from './merge-requests/routes.js';
import { registerMilestoneRoutes } from './milestones/routes.js';
import { registerNamespaceRoutes } from './namespaces/routes.js';
import { registerPersonalAccessTokenRoutes } from './personal-access-tokens/routes.js';
import { registerProjectRoutes } from './projects/routes.js';
import { registerProjectShareRoutes } from './projects/share.js';
import { registerProtectedRefRoutes } from './protected-refs/routes.js';
import { registerReleaseRoutes } from './releases/routes.js';
import { registerResourceEventRoutes } from './resource-events/routes.js';
import { registerSearchRoutes } from './search/routes.js';
import { registerSnippetRoutes } from './snippets/routes.js';
import { registerWikiRoutes } from './wikis/routes.js';
import { registerTodoRoutes } from './todos/routes.js';
import { registerUploadRoutes } from './uploads/routes.js';
import { registerMarkdownRoutes } from './markdown/routes.js';
import { registerBadgeRoutes } from './badges/routes.js';
import { registerRepositoryRoutes } from './repository/index.js';
import { registerStatusRoutes } from './statuses/routes.js';
import { registerUserRoutes } from './users/routes.js';
import { registerVariableRoutes } from './variables/routes.js';
import { registerVersionRoutes } from './version/routes.js';

export type RouteModule = (app: FastifyInstance) => void;

export const apiModules: RouteModule[] = [
  registerAccessTokenRoutes,
  registerApplicationRoutes,
  registerAuditEventRoutes,
  registerDeploymentRoutes,
  registerDeployKeyRoutes,
  registerDeployTokenRoutes,
  registerEnvironmentRoutes,
  registerEventRoutes,
  registerGroupRoutes,
  registerHookRoutes,
  registerIssueRoutes,
  registerLabelRoutes,
  registerKeyRoutes,
  registerMemberRoutes,
  registerMergeRequestRoutes,
  registerMilestoneRoutes,
  registerNamespaceRoutes,
  registerPersonalAccessTokenRoutes,
  registerProjectRoutes,
  registerProjectShareRoutes,
  registerProtectedRefRoutes,
  registerReleaseRoutes,
  registerResourceEventRoutes,
  registerSearchRoutes,
  registerSnippetRoutes,
  registerWikiRoutes,
  registerTodoRoutes,
  registerUploadRoutes,
  registerMarkdownRoutes,
  registerBadgeRoutes,
  registerRepositoryRoutes,
  registerStatusRoutes,
  registerUserRoutes,
  registerVariableRoutes,
  registerVersionRoutes,
];

export async function registerApi(app: FastifyInstance): Promise<void> {
  await app.register(
    async (api) => {
      for (const mod of apiModules) mod(api);
    },
    { prefix: '/api/v4' },
  );
}

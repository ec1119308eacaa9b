// Mounts every /api/v4 resource (alphabetical), then the API's 404 catch-all.
import type { FastifyInstance } from 'fastify';
import { registerPersonalAccessTokenRoutes } from './personal-access-tokens/routes.js';
import { registerUserRoutes } from './users/routes.js';
import { registerVersionRoutes } from './version/routes.js';

export type RouteModule = (app: FastifyInstance) => void;

export const apiModules: RouteModule[] = [
  registerPersonalAccessTokenRoutes,
  registerUserRoutes,
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

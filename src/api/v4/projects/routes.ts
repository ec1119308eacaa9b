// The Projects API (GitLab's lib/api/projects.rb): create, list, read, update, delete, transfer,
// archive. Members live in ../members.
import type { FastifyInstance } from 'fastify';
import { registerProjectUserHooks } from '../../../services/projects/user-hooks.js';
import { registerRepositorySize } from '../../../services/repository/repository-size.js';
import { registerProjectCreateRoutes } from './create.js';
import { registerProjectForkRoutes } from './forks.js';
import { registerProjectStarRoutes } from './stars.js';
import { registerProjectListRoutes } from './list.js';
import { registerProjectSingleRoutes } from './single.js';

export function registerProjectRoutes(app: FastifyInstance): void {
  registerProjectUserHooks();
  registerRepositorySize();
  registerProjectCreateRoutes(app);
  registerProjectListRoutes(app);
  registerProjectSingleRoutes(app);
  registerProjectForkRoutes(app);
  registerProjectStarRoutes(app);
}

// Modules outside /api/v4 (OAuth provider, web pages, git over HTTP). Each registers its routes.
import type { FastifyInstance } from 'fastify';
import { registerGroupUploadRoutes } from './api/v4/groups/extras.js';
import { registerWebArchiveRoutes } from './api/v4/repository/archive.js';
import { registerWebUploadRoutes } from './api/v4/uploads/routes.js';
import { registerGitHttp } from './git-http/index.js';
import { oauthAndWebModule } from './web/module.js';

export type AppModule = (app: FastifyInstance) => Promise<void> | void;

export const extraModules: AppModule[] = [registerGitHttp, oauthAndWebModule, registerGroupUploadRoutes, registerWebArchiveRoutes, registerWebUploadRoutes];

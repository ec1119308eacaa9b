// Modules outside /api/v4 (OAuth provider, web pages, git over HTTP). Each registers its routes.
import type { FastifyInstance } from 'fastify';

export type AppModule = (app: FastifyInstance) => Promise<void> | void;

export const extraModules: AppModule[] = [];

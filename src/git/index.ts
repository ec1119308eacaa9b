/** Barrel of the git storage layer (see repository.ts and http-backend.ts). */
export * from './repository.js';
export { gitHttpBackend, serveGitHttp, parseGitPath } from './http-backend.js';
export type { GitHttpOptions, GitHttpResponse, ParsedGitPath, ServeGitOptions, GitService } from './http-backend.js';

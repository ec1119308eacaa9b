// Response schemas of the API (JSON Schema via TypeBox) and the registry of what each route answers.
export * from './common.js';
export * from './users.js';
export * from './tokens.js';
export * from './projects.js';
export * from './namespaces.js';
export * from './groups.js';
export * from './repository.js';
export * from './merge-requests.js';
export * from './misc.js';
export { RESPONSES, responseFor, responseSchema, type ResponseSpec } from './registry.js';

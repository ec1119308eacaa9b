// The response-schema oracle: a 2xx answer must be what the route's entry in the response registry
// (src/api/v4/schemas/registry.ts) says: a JSON body matching its schema, no body, or a non-JSON
// body. Validators are compiled once per route.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { responseFor, type ResponseSpec } from '../../src/api/v4/schemas/registry.js';

// ajv is a dependency of fastify (hoisted to node_modules); strict off for TypeBox's `if`/unions.
const ajv = new Ajv({ strict: false, allErrors: false });
const validators = new Map<string, ValidateFunction | null>();

function validatorFor(key: string, spec: ResponseSpec): ValidateFunction | null {
  let v = validators.get(key);
  if (v === undefined) {
    v = spec.kind === 'json' ? ajv.compile(spec.schema) : null;
    validators.set(key, v);
  }
  return v;
}

/** The deepest error first (anyOf and if/then report their own summary after the cause). */
function describeErrors(errors: ErrorObject[] | null | undefined, title: string): string {
  if (!errors?.length) return `does not match ${title}`;
  const e = [...errors].sort((a, b) => b.instancePath.split('/').length - a.instancePath.split('/').length)[0];
  // Array indices vary from case to case; the failure is the same one.
  const at = e.instancePath.replace(/\/\d+(?=\/|$)/g, '/*') || '(body)';
  const params = e.keyword === 'required' ? ` '${(e.params as { missingProperty?: string }).missingProperty}'` : e.keyword === 'type' ? '' : ` ${JSON.stringify(e.params)}`;
  return `does not match ${title}: ${at} ${e.message ?? e.keyword}${params}`;
}

export interface Answer {
  method: string;
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * Problems of one answer of `route` (`method` and `path` as discovered). Only 2xx answers to the
 * route's own method are judged (HEAD variants of GET have no body).
 */
export function schemaProblems(route: { method: string; path: string }, a: Answer): string[] {
  if (a.status < 200 || a.status >= 300 || a.method === 'HEAD') return [];
  const spec = responseFor(route.method, route.path);
  if (!spec) return ['route has no entry in the response registry (src/api/v4/schemas/registry.ts)'];
  const isJson = a.contentType.startsWith('application/json');
  if (spec.kind === 'raw') return [];
  if (spec.kind === 'empty') return a.body.length > 0 ? [`2xx body (${a.contentType || 'no content type'}) on a route whose registry entry has none`] : [];
  if (a.body.length === 0) return a.status === 204 ? [] : [`2xx with no body on a route whose registry entry is a JSON body`];
  if (!isJson) return [`2xx body is ${a.contentType || 'without a content type'}, the registry entry is JSON`];
  let parsed: unknown;
  try {
    parsed = JSON.parse(a.body.toString('utf8'));
  } catch {
    return []; // the JSON-parse oracle reports it
  }
  const validate = validatorFor(`${route.method} ${route.path}`, spec)!;
  if (validate(parsed)) return [];
  const title = (spec.schema as { title?: string; items?: { title?: string } }).title ?? `array of ${(spec.schema as { items?: { title?: string } }).items?.title ?? 'entries'}`;
  return [`2xx body ${describeErrors(validate.errors, title)}`];
}

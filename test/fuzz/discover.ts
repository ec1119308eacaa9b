// Route and parameter discovery at run time, so routes other modules add later are fuzzed too.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';

export interface FuzzRoute {
  method: string;
  /** Fastify path with `:name` params, for example `/api/v4/projects/:id`. */
  path: string;
  params: string[];
}

const TREE_LINE = /^((?:│   |    )*)(?:├── |└── )(.*)$/;

/**
 * Parses `app.printRoutes({ commonPrefix: false })`: each line is a tree node whose label continues
 * its parent's path; nodes followed by `(METHOD, …)` are routes. Fastify 5 has no public route list,
 * and an onRoute hook would have to be added inside buildApp before the modules register.
 */
export function discoverRoutes(app: FastifyInstance): FuzzRoute[] {
  const recorded = (app as FastifyInstance & { lw?: { routes?: Array<{ method: string; url: string }> } }).lw?.routes;
  if (recorded?.length) {
    const gets = new Set(recorded.filter((r) => r.method === 'GET').map((r) => r.url));
    const seen = new Set<string>();
    const out: FuzzRoute[] = [];
    for (const { method, url } of recorded) {
      // HEAD is generated for every GET; fuzzed as a variant of the GET route instead.
      if (method === 'HEAD' && gets.has(url)) continue;
      const key = `${method} ${url}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const params = [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((p) => p[1]);
      if (url.includes('*')) params.push('*');
      out.push({ method, path: url, params });
    }
    return out;
  }
  const text = app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const out: FuzzRoute[] = [];
  for (const line of text.split('\n')) {
    const m = TREE_LINE.exec(line);
    if (!m) continue;
    const depth = m[1].length / 4;
    let label = m[2];
    let methods: string[] = [];
    const paren = /^(.*) \(([A-Z, ]+)\)$/.exec(label);
    if (paren) {
      label = paren[1];
      methods = paren[2].split(',').map((s) => s.trim());
    }
    // `/:user_id|:id`: one node serving routes that name the param differently; take the first.
    label = label.replace(/:([A-Za-z0-9_]+)(?:\|:[A-Za-z0-9_]+)+/g, ':$1');
    stack.length = depth;
    const path = (depth > 0 ? stack[depth - 1] : '') + label;
    stack[depth] = path;
    for (const method of methods) {
      // HEAD is generated for every GET; fuzzed as a variant of the GET route instead.
      if (method === 'HEAD' && methods.includes('GET')) continue;
      const params = [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((p) => p[1]);
      if (path.includes('*')) params.push('*');
      out.push({ method, path, params });
    }
  }
  return out;
}

function walk(dir: string, files: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, files);
    else if (p.endsWith('.ts')) files.push(p);
  }
  return files;
}

/** Every parameter name a handler reads through the typed readers (`c.params.string('name')`, …). */
export function discoverParamNames(srcDir: string): string[] {
  const names = new Set<string>();
  const re = /\.(?:string|int|bool|enum|intEnum|stringArray|intArray|date|datetime|hash|has)\(\s*'([A-Za-z0-9_]+)'/g;
  for (const file of walk(srcDir, [])) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(re)) names.add(m[1]);
  }
  for (const n of ['name', 'path', 'username', 'email', 'password', 'scopes', 'title', 'description', 'visibility']) names.add(n);
  return [...names].sort();
}

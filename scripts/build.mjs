// Builds the server that `npm start` runs: src/ and the packages it uses bundled into one ES
// module (dist/labwright.mjs, imported by dist/main.js: see below); only native addons (better-sqlite3, @node-rs/argon2) and pg, which
// src/db/database.ts loads on demand, are left in node_modules. Node then loads one file instead
// of resolving, reading and compiling some 400 modules one by one: on a 2-core AMD EPYC, start-up
// to ready went from 0.89-1.20 s to 0.71-0.82 s with src/ bundled (docs/benchmarks.md, finding
// 61), and from 1.01-1.11 s to 0.71-0.88 s on the bench data set with the packages bundled too
// (finding 92). Types are checked before, by `tsc -p tsconfig.build.json --noEmit` (npm run build).
//
// The bundle is written as `labwright.mjs` beside `outfile`, and `outfile` (dist/main.js, what
// users run) only imports it. Node 20.19+ loads a `.js` entry point through its CommonJS loader
// first even in a `"type": "module"` package, and that kept some 30 MB more of a 4 MB entry
// module resident (idle RSS 120 MB against 90 MB for the same bundle as a `.mjs`; finding 95);
// a `.mjs` goes straight to the ES module loader.
//   node scripts/build.mjs [outfile]
import { build } from 'esbuild';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The file beside the entry point `outfile` that holds the bundle. */
export const BUNDLE_NAME = 'labwright.mjs';

/**
 * Bundles src/main.ts into labwright.mjs beside `outfile` (relative to the repository), and writes
 * `outfile` as the entry point that imports it; both must lie inside the repository, so that the
 * bundle's imports find node_modules.
 */
export async function bundle(outfile = 'dist/main.js') {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const entry = join(root, outfile);
  if (basename(entry) === BUNDLE_NAME) throw new Error(`the entry point may not be called ${BUNDLE_NAME}`);
  await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile: join(dirname(entry), BUNDLE_NAME),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Native addons stay where their loaders look for their binaries; pg-native is pg's optional
    // native driver, never installed.
    external: ['better-sqlite3', '@node-rs/argon2', 'pg', 'pg-native'],
    // The packages are CommonJS: their require() of Node's modules and their __dirname need these
    // in an ES module.
    banner: {
      js: [
        "import { createRequire as __lwCreateRequire } from 'node:module';",
        "import { fileURLToPath as __lwFileURLToPath } from 'node:url';",
        'const require = __lwCreateRequire(import.meta.url);',
        'const __filename = __lwFileURLToPath(import.meta.url);',
        "const __dirname = __lwFileURLToPath(new URL('.', import.meta.url));",
      ].join(' '),
    },
    sourcemap: true,
    logLevel: 'warning',
    // The version is written in, wherever the bundle lies (src/version.ts).
    define: { LABWRIGHT_BUILT_VERSION: JSON.stringify(version) },
  });
  writeFileSync(entry, `#!/usr/bin/env node\n// Labwright's server: the bundle is ${BUNDLE_NAME} (scripts/build.mjs says why it is a separate .mjs).\nimport './${BUNDLE_NAME}';\n`, { mode: 0o755 });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) await bundle(process.argv[2]);

// Builds the server that `npm start` runs: src/ and the packages it uses bundled into one ES
// module (dist/main.js); only native addons (better-sqlite3, @node-rs/argon2) and pg, which
// src/db/database.ts loads on demand, are left in node_modules. Node then loads one file instead
// of resolving, reading and compiling some 400 modules one by one: on a 2-core AMD EPYC, start-up
// to ready went from 0.89-1.20 s to 0.71-0.82 s with src/ bundled (docs/benchmarks.md, finding
// 61), and from 1.01-1.11 s to 0.71-0.88 s on the bench data set with the packages bundled too
// (finding 92). Types are checked before, by `tsc -p tsconfig.build.json --noEmit` (npm run build).
//   node scripts/build.mjs [outfile]
import { build } from 'esbuild';
import { readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Bundles src/main.ts into `outfile` (relative to the repository); it must lie inside the repository, so that its imports find node_modules. */
export async function bundle(outfile = 'dist/main.js') {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  await build({
    entryPoints: [join(root, 'src', 'main.ts')],
    outfile: join(root, outfile),
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
}

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) await bundle(process.argv[2]);

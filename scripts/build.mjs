// Builds the server that `npm start` runs: src/ bundled into one ES module (dist/main.js), the
// packages left in node_modules. Node then loads one file instead of resolving, reading and
// compiling 210 modules one by one: on a 2-core AMD EPYC, start-up to ready on an empty SQLite
// database went from 0.89-1.20 s to 0.71-0.82 s (docs/benchmarks.md, finding 61). Types are
// checked before, by `tsc -p tsconfig.build.json --noEmit` (npm run build).
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
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
    // The version is written in, wherever the bundle lies (src/version.ts).
    define: { LABWRIGHT_BUILT_VERSION: JSON.stringify(version) },
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) await bundle(process.argv[2]);

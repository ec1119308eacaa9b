// Builds the server that `npm start` runs: src/ bundled into one ES module (dist/main.js), the
// packages left in node_modules. Node then loads one file instead of resolving, reading and
// compiling 210 modules one by one: on a 2-core AMD EPYC, start-up to ready on an empty SQLite
// database went from 0.89-1.20 s to 0.71-0.82 s (docs/benchmarks.md, finding 61). Types are
// checked before, by `tsc -p tsconfig.build.json --noEmit` (npm run build).
//   node scripts/build.mjs [outfile]
import { build } from 'esbuild';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = join(import.meta.dirname, '..');

/** Bundles src/main.ts into `outfile` (relative to the repository); it must lie inside the repository, so that its imports find node_modules. */
export async function bundle(outfile = 'dist/main.js') {
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
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await bundle(process.argv[2]);

// The response refresher's entry when Labwright runs from its TypeScript sources (the tests,
// `node --import tsx src/main.ts`): on Node 20 a worker thread's own `--import tsx` is not applied
// to its entry module, so the sources are loaded through tsx's API instead. The bundle that
// `npm run build` makes is its own entry (src/main.ts).
const { tsImport } = await import('tsx/esm/api');
await tsImport('./refresher-worker.ts', import.meta.url);

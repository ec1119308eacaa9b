// Seeds the default bench data set on SQLite into a new data directory and leaves it there (for
// bench/inject.ts and profiling). Prints the directory and the seeded ids.
import { startLabwright, stop } from './load.js';
import { seed } from './seed.js';

const server = await startLabwright('sqlite');
const seeded = await seed(server, { large: false });
await stop(server.child);
console.log(server.dataDir);
console.log(JSON.stringify(seeded));

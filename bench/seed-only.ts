// Seeds the default bench data set into a new data directory (and, with `postgres`, a new
// PostgreSQL database) and leaves it there, for bench/inject.ts and profiling. Prints the
// directory, the database URL when there is one, and the seeded ids.
//   node --import tsx bench/seed-only.ts [sqlite|postgres] [--large]
import { startLabwright, stop } from './load.js';
import { seed } from './seed.js';

const server = await startLabwright(process.argv[2] === 'postgres' ? 'postgres' : 'sqlite');
const seeded = await seed(server, { large: process.argv.includes('--large') });
await stop(server.child);
console.log(server.dataDir);
if (server.databaseUrl) console.log(server.databaseUrl);
console.log(JSON.stringify(seeded));

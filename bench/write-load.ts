// The write side of the mixed load, in its own process: in the bench process it shared one event
// loop with the 50-connection read load generator, which delayed sending the writes (and timed
// that delay as their latency). Forked by special.ts; prints one JSON Measure line.
//   node --import tsx bench/write-load.ts <url> <projectId> <firstBranch> <seconds> <rate> <headers JSON>
import autocannon from 'autocannon';
import { mrCreateRequest, toMeasure } from './load.js';

const [url, projectId, firstBranch, seconds, rate, headersJson] = process.argv.slice(2);
let next = Number(firstBranch);
const result = await autocannon({
  url,
  connections: 10,
  pipelining: 1,
  duration: Number(seconds),
  overallRate: Number(rate),
  headers: JSON.parse(headersJson) as Record<string, string>,
  requests: [mrCreateRequest(Number(projectId), () => next++)],
});
process.stdout.write(`${JSON.stringify({ measure: toMeasure(result), used: next - Number(firstBranch) })}\n`);

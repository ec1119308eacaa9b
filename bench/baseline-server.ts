// Baseline servers measured in the same run as Labwright, so results are ratios that hold on a
// noisy machine. Usage: node --import tsx bench/baseline-server.ts <kind> <port> [bodyFile]
//   b0: bare node:http returning a small JSON
//   b1: bare Fastify route returning the same small JSON
//   b2: bare Fastify route returning the exact bytes in bodyFile
//   b3: bare Fastify route serializing the objects in bodyFile with JSON.stringify (the product's serializer)
// b2 and b3 load another body when the parent sends `{ file }` over IPC, and answer 'loaded', so
// one process serves every scenario of a run.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Fastify from 'fastify';

const [kind, portArg, bodyFile] = process.argv.slice(2);
const port = Number(portArg);
const small = JSON.stringify({ id: 1, username: 'root', name: 'Administrator', state: 'active' });

let bytes: Buffer = Buffer.from(small);
let objects: unknown = JSON.parse(small);

function loadBody(file: string | undefined): void {
  if (!file) return;
  bytes = readFileSync(file);
  objects = JSON.parse(bytes.toString('utf8')) as unknown;
}

async function main(): Promise<void> {
  loadBody(bodyFile);
  process.on('message', (msg: { file?: string }) => {
    loadBody(msg.file);
    process.send?.('loaded');
  });
  if (kind === 'b0') {
    createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(small) });
      res.end(small);
    }).listen(port, '127.0.0.1', () => process.send?.('ready'));
    return;
  }
  const app = Fastify({ logger: false });
  if (kind === 'b1') {
    app.get('/*', async (_req, reply) => reply.type('application/json').send(small));
  } else if (kind === 'b2') {
    app.get('/*', async (_req, reply) => reply.type('application/json').send(bytes));
  } else if (kind === 'b3') {
    app.get('/*', async (_req, reply) => reply.type('application/json').send(JSON.stringify(objects)));
  } else {
    throw new Error(`unknown baseline ${kind}`);
  }
  await app.listen({ port, host: '127.0.0.1' });
  process.send?.('ready');
}

void main();

// A local webhook receiver for tests: records each delivery's headers and JSON body, answers 200.
import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface HookReceiver {
  /** `http://127.0.0.1:<port>`. */
  base: string;
  received: Array<{ headers: IncomingHttpHeaders; body: any }>;
  close(): Promise<void>;
}

export async function startHookReceiver(): Promise<HookReceiver> {
  const received: HookReceiver['received'] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
      res.writeHead(200).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const addr = server.address();
  return {
    base: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
